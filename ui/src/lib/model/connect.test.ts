import { describe, expect, it } from 'vitest';
import type { ClientConnection, ConnectReport, DisconnectReport } from '../types';
import {
  connectionStateText,
  connectResultText,
  defaultHttp,
  disconnectResultText,
  isConnected,
  transportChoices,
} from './connect';

const base: ClientConnection = {
  client: 'cursor',
  label: 'Cursor',
  source: 'cursor',
  path: '/home/u/.cursor/mcp.json',
  exists: true,
  entry: { kind: 'absent' },
  http: 'headers',
  duplicates: [],
  disabledByConnect: [],
};

describe('connectionStateText', () => {
  it('names each state; only connected rows say "connected"', () => {
    const absent = connectionStateText(base);
    expect(absent).toBe('Not set up');
    expect(absent).not.toMatch(/connected/i);
    const foreign = connectionStateText({ ...base, entry: { kind: 'foreign', runs: 'npx other' } });
    expect(foreign).toBe('Has its own server named switchboard: npx other');
    expect(foreign).not.toMatch(/connected/i);
    expect(
      connectionStateText({
        ...base,
        entry: { kind: 'connected', transport: 'http', target: 'u', enabled: true },
      }),
    ).toBe('Connected (HTTP)');
    expect(
      connectionStateText({
        ...base,
        entry: { kind: 'connected', transport: 'stdio', target: 's', enabled: true },
      }),
    ).toBe('Connected (runs switchboard serve)');
    expect(
      connectionStateText({
        ...base,
        entry: { kind: 'connected', transport: 'http', target: 'u', enabled: false },
      }),
    ).toMatch(/^Connected \(HTTP\), turned off in Cursor$/);
    expect(connectionStateText({ ...base, problem: 'The file is not valid JSON' })).toBe(
      'The file is not valid JSON',
    );
  });

  it('isConnected', () => {
    expect(isConnected(base)).toBe(false);
    expect(
      isConnected({
        ...base,
        entry: { kind: 'connected', transport: 'http', target: 'u', enabled: true },
      }),
    ).toBe(true);
  });
});

describe('transports', () => {
  it('offers only stdio when the client takes no HTTP entry', () => {
    expect(transportChoices(base)).toEqual(['http', 'stdio']);
    expect(transportChoices({ ...base, http: 'none' })).toEqual(['stdio']);
  });

  it('defaults to HTTP while the gateway listens', () => {
    expect(defaultHttp(base, 'listening')).toBe(true);
    expect(defaultHttp({ ...base, http: 'tokenEnvVar' }, 'listening')).toBe(true);
    expect(defaultHttp(base, 'off')).toBe(false);
    expect(defaultHttp(base, undefined)).toBe(false);
    expect(defaultHttp({ ...base, http: 'none' }, 'listening')).toBe(false);
    // An HTTP entry stays HTTP when updated while the gateway is off.
    expect(
      defaultHttp(
        { ...base, entry: { kind: 'connected', transport: 'http', target: 'u', enabled: true } },
        'off',
      ),
    ).toBe(true);
    expect(
      defaultHttp(
        { ...base, entry: { kind: 'connected', transport: 'stdio', target: 's', enabled: true } },
        'off',
      ),
    ).toBe(false);
  });
});

describe('result lines', () => {
  const report: ConnectReport = {
    client: 'cursor',
    label: 'Cursor',
    source: 'cursor',
    path: '/p/mcp.json',
    action: 'add',
    transport: 'http',
    entryText: '{}',
    createsFile: false,
    duplicates: ['a', 'b'],
    disable: [{ name: 'a', copyToSwitchboard: true }],
    kept: [{ name: 'b', reason: 'uses env vars' }],
    notes: [],
  };

  it('connect', () => {
    expect(connectResultText(report)).toBe(
      'Written to /p/mcp.json; restart Cursor to use it. Turned off in Cursor: a. Kept: b (uses env vars).',
    );
    expect(connectResultText({ ...report, action: 'unchanged', disable: [], kept: [] })).toBe(
      '/p/mcp.json already held this entry; nothing changed.',
    );
  });

  it('disconnect', () => {
    const r: DisconnectReport = {
      client: 'cursor',
      label: 'Cursor',
      path: '/p/mcp.json',
      removedEntry: true,
      reEnabled: ['a'],
      removedCopies: ['a'],
      kept: [],
      removedFile: false,
    };
    expect(disconnectResultText(r)).toBe(
      "Removed Switchboard's entry from /p/mcp.json. Turned back on: a. Removed the copies in Switchboard: a. Restart Cursor for it to take effect.",
    );
    expect(
      disconnectResultText({ ...r, removedEntry: false, reEnabled: [], removedCopies: [] }),
    ).toMatch(/nothing to remove/);
  });
});
