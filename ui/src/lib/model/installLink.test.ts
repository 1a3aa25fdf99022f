import { describe, expect, it } from 'vitest';
import type { LinkInput, LinkServer } from '../types';
import {
  MASK,
  initialValues,
  inputErrors,
  keychainName,
  originLabel,
  preview,
  serverLabel,
} from './installLink';

const input = (over: Partial<LinkInput>): LinkInput => ({
  id: 'apiKey',
  token: '${input:apiKey}',
  password: false,
  options: [],
  kind: 'declared',
  ...over,
});

const weather = (): LinkServer => ({
  name: 'weather',
  def: {
    name: 'weather',
    transport: 'stdio',
    command: 'weather-mcp',
    args: ['--units', '${input:units}', '--key=sk-live-0123456789abcdef'],
    env: { API_KEY: '${input:apiKey}', LITERAL: 'ghp_abcdefghijklmnop1234', PLAIN: 'x' },
    enabled: true,
  } as LinkServer['def'],
  inputs: [
    input({ id: 'apiKey', token: '${input:apiKey}', password: true, description: 'API key' }),
    input({ id: 'units', token: '${input:units}', default: 'metric' }),
  ],
  inlineSecrets: [
    { field: 'env', key: 'LITERAL' },
    { field: 'args', key: '2' },
  ],
});

describe('originLabel', () => {
  it('names the kind and how it arrived', () => {
    expect(originLabel({ kind: 'vscode', web: false, imported: false })).toBe(
      'VS Code install link',
    );
    expect(originLabel({ kind: 'cursor', web: true, imported: false })).toBe(
      'Cursor install link, through its web page',
    );
    expect(originLabel({ kind: 'snippet', web: false, imported: false, shape: 'mcpServers' })).toBe(
      'Pasted server entry (from an mcpServers file)',
    );
  });
});

describe('inputs', () => {
  it('start from their defaults and are required without one', () => {
    const s = weather();
    const v = initialValues(s);
    expect(v).toEqual({ apiKey: '', units: 'metric' });
    expect(inputErrors(s, v)).toEqual({ apiKey: 'API key is required.' });
    expect(inputErrors(s, { ...v, apiKey: 'k' })).toEqual({});
  });
  it('a pick list starts at its first choice', () => {
    const s = weather();
    s.inputs = [input({ id: 'region', token: '${input:region}', options: ['eu', 'us'] })];
    expect(initialValues(s)).toEqual({ region: 'eu' });
  });
});

describe('preview', () => {
  it('into Switchboard’s own list shows the keychain reference, never the secret', () => {
    const p = preview(weather(), { apiKey: 'typed-secret', units: 'imperial' }, true, 'wx');
    expect(p.command).toBe('weather-mcp');
    expect(p.args).toEqual(['--units', 'imperial', MASK]);
    expect(p.env).toEqual([
      ['API_KEY', '${keychain:wx.apiKey}'],
      ['LITERAL', MASK],
      ['PLAIN', 'x'],
    ]);
    expect(JSON.stringify(p)).not.toContain('typed-secret');
  });
  it('into a client’s file the typed secret is masked, an empty one shows its token', () => {
    expect(preview(weather(), { apiKey: 'typed-secret' }, false, 'wx').env[0]).toEqual([
      'API_KEY',
      MASK,
    ]);
    expect(preview(weather(), {}, false, 'wx').env[0]).toEqual(['API_KEY', '${input:apiKey}']);
    expect(preview(weather(), {}, false, 'wx').args[1]).toBe('metric');
  });
  it('a remote server shows its URL with credentials in the query masked', () => {
    const s: LinkServer = {
      name: 'r',
      def: {
        name: 'r',
        transport: 'http',
        url: 'https://mcp.example.com/mcp?api_key=abc123&region=eu',
        headers: { Authorization: 'Bearer ${input:tok}' },
        enabled: true,
      } as LinkServer['def'],
      inputs: [input({ id: 'tok', token: '${input:tok}', password: true })],
      inlineSecrets: [{ field: 'url', key: 'api_key' }],
    };
    const p = preview(s, { tok: 'T0K' }, false, 'r');
    expect(p.command).toBeNull();
    expect(p.url).toBe(`https://mcp.example.com/mcp?api_key=${MASK}&region=eu`);
    expect(p.headers).toEqual([['Authorization', `Bearer ${MASK}`]]);
  });
});

describe('names', () => {
  it('keychain names are made as the engine makes them', () => {
    expect(keychainName('my server', '--api key')).toBe('my_server.api_key');
  });
  it('an unnamed server is listed by its place', () => {
    const s = weather();
    s.name = undefined;
    s.def.name = '';
    expect(serverLabel(s, 1)).toBe('server 2');
  });
});
