import { describe, expect, it } from 'vitest';
import { applyEvent, emptyData } from './events';
import type { GatewayStatus, ServerView } from '../types';

function server(name: string): ServerView {
  return {
    name,
    transport: 'stdio',
    command: 'x',
    enabled: true,
    source: 'switchboard',
    path: '/p',
    errors: [],
    warnings: [],
    shadowed: [],
    runtime: {
      name,
      status: { state: 'connecting' },
      transport: 'stdio',
      toolCount: 0,
      deferred: false,
      warnings: [],
      restarts: 0,
    },
  };
}

describe('applyEvent', () => {
  it("tracks each server's sign-in step without reloading anything", () => {
    const d = emptyData();
    const url = 'http://127.0.0.1:9/authorize?client_id=c&state=s';
    expect(
      applyEvent(d, { type: 'sign-in', server: 'remote', phase: { state: 'waiting', url } }).size,
    ).toBe(0);
    expect(d.signIns.remote).toEqual({ state: 'waiting', url });
    applyEvent(d, {
      type: 'sign-in',
      server: 'remote',
      phase: { state: 'failed', error: 'OAuth flow timed out. Please try again.' },
    });
    expect(d.signIns.remote).toEqual({
      state: 'failed',
      error: 'OAuth flow timed out. Please try again.',
    });
    applyEvent(d, { type: 'sign-in', server: 'remote', phase: { state: 'signed-in' } });
    expect(d.signIns.remote.state).toBe('signed-in');
    applyEvent(d, { type: 'sign-in', server: 'remote', phase: { state: 'signed-out' } });
    expect(d.signInEvents).toBe(4);
  });

  it('updates a known server in place without a reload', () => {
    const d = emptyData();
    d.servers = [server('a')];
    const r = applyEvent(d, {
      type: 'status',
      server: 'a',
      status: { state: 'failed', error: 'boom' },
    });
    expect(r.size).toBe(0);
    expect(d.servers[0].runtime?.status).toEqual({ state: 'failed', error: 'boom' });
    expect(d.servers[0].runtime?.lastError).toBe('boom');
    applyEvent(d, {
      type: 'status',
      server: 'a',
      status: { state: 'restarting', attempt: 2, of: 5 },
    });
    expect(d.servers[0].runtime?.restarts).toBe(2);
  });

  it('asks for the server list when a status names an unknown server', () => {
    const d = emptyData();
    expect([
      ...applyEvent(d, { type: 'status', server: 'new', status: { state: 'connected' } }),
    ]).toEqual(['servers']);
  });

  it('updates tool counts and reloads the tool index, its token costs, the profiles and the clients', () => {
    const d = emptyData();
    d.servers = [server('a')];
    const r = applyEvent(d, { type: 'tools', server: 'a', count: 4, deferred: true });
    expect(d.servers[0].runtime?.toolCount).toBe(4);
    expect(d.servers[0].runtime?.deferred).toBe(true);
    expect([...r]).toEqual(['tools', 'costs', 'profiles', 'clients']);
  });

  it("lists the servers again when a team gateway's status or tools change (its team servers come with them)", () => {
    const d = emptyData();
    d.servers = [server('a'), { ...server('acme'), transport: 'http', source: 'team' }];
    const tools = applyEvent(d, { type: 'tools', server: 'acme', count: 9, deferred: false });
    expect([...tools].sort()).toEqual(['clients', 'costs', 'profiles', 'servers', 'tools']);
    const status = applyEvent(d, {
      type: 'status',
      server: 'acme',
      status: { state: 'connected' },
    });
    expect([...status]).toEqual(['servers']);
    expect(d.servers[1].runtime?.status).toEqual({ state: 'connected' });
    expect(
      applyEvent(d, { type: 'status', server: 'a', status: { state: 'connected' } }).size,
      'other servers change in place',
    ).toBe(0);
  });

  it("lists the profiles and the clients' costs again when they changed (here or in another process)", () => {
    expect([...applyEvent(emptyData(), { type: 'profiles', active: 'Writing' })]).toEqual([
      'profiles',
      'clients',
    ]);
  });

  it('appends log lines, bounded', () => {
    const d = emptyData();
    for (let i = 0; i < 2100; i++)
      applyEvent(d, {
        type: 'log',
        server: 'a',
        lines: [{ seq: i, at: i, kind: 'stderr', text: `l${i}` }],
      });
    expect(d.logs.a.length).toBe(2000);
    expect(d.logs.a[0].text).toBe('l100');
    expect(d.logs.a.at(-1)?.text).toBe('l2099');
  });

  it('appends a batch of lines in order, and only the newest of a batch larger than the bound', () => {
    const d = emptyData();
    const line = (i: number) => ({ seq: i, at: i, kind: 'stderr', text: `l${i}` });
    applyEvent(d, { type: 'log', server: 'a', lines: [line(0), line(1), line(2)] });
    expect(d.logs.a.map((l) => l.text)).toEqual(['l0', 'l1', 'l2']);
    applyEvent(d, {
      type: 'log',
      server: 'a',
      lines: Array.from({ length: 2500 }, (_, i) => line(i + 3)),
    });
    expect(d.logs.a.length).toBe(2000);
    expect(d.logs.a[0].text).toBe('l503');
    expect(d.logs.a.at(-1)?.text).toBe('l2502');
  });

  it('queues elicitations and reloads everything on reconcile, ready and resync', () => {
    const d = emptyData();
    applyEvent(d, {
      type: 'elicitation',
      id: 3,
      server: 'a',
      message: 'Name?',
      schema: { type: 'object' },
    });
    expect(d.elicitations).toEqual([
      { id: 3, server: 'a', message: 'Name?', schema: { type: 'object' } },
    ]);
    const all = ['servers', 'sources', 'tools', 'projects', 'profiles', 'costs', 'clients'];
    expect(
      [
        ...applyEvent(d, {
          type: 'reconciled',
          report: { started: [], stopped: [], updated: [], kept: [], failed: [] },
        }),
      ].sort(),
    ).toEqual(all.slice().sort());
    // Events were lost: the gateway's status, otherwise only sent in events, is fetched too.
    expect([...applyEvent(d, { type: 'resync' })].sort()).toEqual([...all, 'gateway'].sort());
    applyEvent(d, {
      type: 'ready',
      report: { connected: [], failed: [], deferred: [], elapsedMs: 3 },
    });
    expect(d.ready).toBe(true);
  });

  it("takes the gateway's whole status from a gateway event, without reloading anything", () => {
    const d = emptyData();
    expect(d.gateway).toBeNull();
    const status: GatewayStatus = {
      state: 'listening',
      url: 'http://127.0.0.1:27182/mcp',
      settings: {},
      defaultPort: 27182,
      message: null,
      sessions: [{ id: 1, client: 'cursor', version: '1.2', server: null }],
      calls: [],
      toolCount: 3,
      longNames: [],
      overLimits: [],
      disabledTools: {},
      excluded: [],
    };
    expect(applyEvent(d, { type: 'gateway', status }).size).toBe(0);
    expect(d.gateway?.sessions).toHaveLength(1);
    applyEvent(d, {
      type: 'gateway',
      status: {
        ...status,
        state: 'failed',
        url: null,
        message: 'Port 27182 is taken by nginx',
        sessions: [],
      },
    });
    expect(d.gateway).toMatchObject({
      state: 'failed',
      message: 'Port 27182 is taken by nginx',
      sessions: [],
    });
  });

  it('records warnings once', () => {
    const d = emptyData();
    d.servers = [server('a')];
    applyEvent(d, {
      type: 'warning',
      server: 'a',
      message: 'header Authorization resolved to nothing',
    });
    applyEvent(d, {
      type: 'warning',
      server: 'a',
      message: 'header Authorization resolved to nothing',
    });
    expect(d.servers[0].runtime?.warnings).toEqual(['header Authorization resolved to nothing']);
  });
});
