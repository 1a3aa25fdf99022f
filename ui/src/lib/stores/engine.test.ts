import { describe, expect, it, vi } from 'vitest';

// The store talks to Rust only through api.ts; mock the Tauri boundary below it.
const invoke = vi.fn();
let emit: (ev: unknown) => void = () => {};
vi.mock('@tauri-apps/api/core', () => ({
  invoke: (...a: unknown[]) => invoke(...a),
  isTauri: () => true,
}));
vi.mock('@tauri-apps/api/event', () => ({
  listen: vi.fn(async (_name: string, cb: (e: { payload: unknown }) => void) => {
    emit = (payload) => cb({ payload });
    return () => {};
  }),
}));

const { engine } = await import('./engine.svelte');
import type { SourceInfo } from '../types';

const src = (id: string): SourceInfo => ({
  id,
  client: 'cursor',
  clientName: id,
  level: 'user',
  path: `/x/${id}`,
  format: 'json',
  exists: true,
  readOnly: false,
  priority: 0,
  serverCount: 0,
  warnings: [],
  fields: [],
});
const tick = (ms = 80) => new Promise((r) => setTimeout(r, ms));

describe('engine store: reordering sources', () => {
  it('keeps the moved order while the save is in flight, even when an event reloads the lists', async () => {
    let order = ['a', 'b', 'c'];
    let finishSave: () => void = () => {};
    invoke.mockImplementation(async (cmd: string, args?: { ids: string[] }) => {
      if (cmd === 'list_sources') return order.map(src);
      if (cmd === 'set_priority') {
        await new Promise<void>((r) => (finishSave = r));
        order = args!.ids;
        return { started: [], stopped: [], updated: [], kept: [], failed: [] };
      }
      return [];
    });
    await engine.init();
    expect(engine.sources.map((s) => s.id)).toEqual(['a', 'b', 'c']);

    const moved = [src('a'), src('c'), src('b')];
    const saving = engine.reorderSources(moved, () =>
      invoke('set_priority', { ids: ['a', 'c', 'b'] }),
    );
    expect(engine.sources.map((s) => s.id)).toEqual(['a', 'c', 'b']);
    // The engine re-discovers and says so before the save returns; its list is still the old one.
    emit({ type: 'discovery-changed', servers: 0, warnings: 0 });
    await tick();
    expect(engine.sources.map((s) => s.id)).toEqual(['a', 'c', 'b']);

    finishSave();
    await saving;
    await tick();
    expect(engine.sources.map((s) => s.id)).toEqual(['a', 'c', 'b']);
  });

  it('puts the engine order back when the save fails', async () => {
    invoke.mockImplementation(async (cmd: string) => {
      if (cmd === 'list_sources') return ['a', 'c', 'b'].map(src);
      if (cmd === 'set_priority') throw { code: 'io', message: 'settings.json: permission denied' };
      return [];
    });
    await engine.reorderSources([src('c'), src('a'), src('b')], () =>
      invoke('set_priority', { ids: ['c', 'a', 'b'] }),
    );
    await tick();
    expect(engine.sources.map((s) => s.id)).toEqual(['a', 'c', 'b']);
    expect(engine.notice?.kind).toBe('error');
  });
});

describe('engine store: statuses from events and lists from the engine', () => {
  const server = (name: string, state: string) =>
    ({ name, runtime: { status: { state }, restarts: 0, warnings: [], toolCount: 0 } }) as unknown;

  it('a list made before a status event does not put the old status back', async () => {
    // The engine answers list_servers with what it knew when asked: connecting.
    const waiting: ((v: unknown) => void)[] = [];
    let hold = false;
    invoke.mockImplementation(async (cmd: string) => {
      if (cmd !== 'list_servers') return [];
      if (!hold) return [server('delta', 'connecting')];
      return new Promise((r) => waiting.push(r));
    });
    await engine.reload(new Set(['servers']));
    hold = true;
    const reload = engine.reload(new Set(['servers']));
    // While that answer is on its way, the server connects.
    emit({ type: 'status', server: 'delta', status: { state: 'connected' } });
    expect(engine.data.servers[0]?.runtime?.status.state).toBe('connected');
    waiting.splice(0).forEach((r) => r([server('delta', 'connecting')]));
    await reload;
    await tick();
    expect(engine.data.servers.find((s) => s.name === 'delta')?.runtime?.status.state).toBe(
      'connected',
    );
  });

  it('a list asked for after the event is taken as it is', async () => {
    invoke.mockImplementation(async (cmd: string) =>
      cmd === 'list_servers' ? [server('delta', 'failed')] : [],
    );
    await engine.reload(new Set(['servers']));
    expect(engine.data.servers.find((s) => s.name === 'delta')?.runtime?.status.state).toBe(
      'failed',
    );
  });
});

describe('engine store: a change to a file its client reads only at start', () => {
  it('leaves a note naming the client to restart; none for a client that reloads by itself', async () => {
    invoke.mockImplementation(async (cmd: string) => {
      if (cmd === 'list_sources')
        return [
          {
            ...src('claude-desktop'),
            restartHint:
              'Claude Desktop reads its config only when it starts: quit it completely and open it again',
          },
          src('cursor-user'),
        ];
      return [];
    });
    await engine.reload(new Set(['sources']));
    engine.notice = null;
    engine.restartNote('cursor-user', 'Saved "gh".');
    expect(engine.notice).toBeNull();
    engine.restartNote('claude-desktop', 'Saved "gh".');
    expect(engine.notice).toEqual({
      kind: 'note',
      text: 'Saved "gh". Claude Desktop reads its config only when it starts: quit it completely and open it again to use the change.',
    });
  });
});
