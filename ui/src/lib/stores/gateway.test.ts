import { beforeEach, describe, expect, it, vi } from 'vitest';

// The stores talk to Rust only through api.ts; mock the Tauri boundary below it.
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
const { gateway } = await import('./gateway.svelte');
import type { GatewayStatus } from '../types';

const status = (over: Partial<GatewayStatus> = {}): GatewayStatus => ({
  state: 'listening',
  url: 'http://127.0.0.1:27182/mcp',
  settings: {},
  defaultPort: 27182,
  message: null,
  sessions: [],
  calls: [],
  toolCount: 2,
  longNames: [],
  overLimits: [],
  disabledTools: {},
  excluded: [],
  ...over,
});
const tick = (ms = 20) => new Promise((r) => setTimeout(r, ms));

/** Answers every list with nothing and `gateway_status` with `gw()`, after `delay` ms. */
function engineAnswers(gw: () => GatewayStatus, delay = 0) {
  invoke.mockImplementation(async (cmd: string) => {
    if (cmd === 'gateway_status') {
      await tick(delay);
      return gw();
    }
    if (cmd === 'list_tools') return { tools: [], collisions: [] };
    return [];
  });
}

describe('gateway status in the engine store', () => {
  it('loads the status once, then follows gateway events; an answer older than an event is dropped', async () => {
    engineAnswers(() => status({ toolCount: 2 }), 50);
    const starting = engine.init();
    await tick(5);
    // A client connects while the first answer is still on its way.
    emit({
      type: 'gateway',
      status: status({
        toolCount: 2,
        sessions: [{ id: 7, client: 'cursor', version: '1.0', server: null }],
      }),
    });
    await starting;
    expect(engine.data.gateway?.sessions.map((s) => s.id)).toEqual([7]);

    emit({
      type: 'gateway',
      status: status({
        state: 'failed',
        url: null,
        message: 'Port 27182 is taken by nginx (pid 12)',
      }),
    });
    expect(engine.data.gateway).toMatchObject({
      state: 'failed',
      message: 'Port 27182 is taken by nginx (pid 12)',
    });
    expect(invoke.mock.calls.filter(([c]) => c === 'gateway_status')).toHaveLength(1);
  });
});

describe('gateway switches', () => {
  beforeEach(() => {
    engine.setGateway(status());
    engine.notice = null;
  });

  it('shows a tool switched off at once and keeps it off once saved', async () => {
    let finish: () => void = () => {};
    invoke.mockImplementation(async (cmd: string) => {
      if (cmd === 'set_tool_enabled') await new Promise<void>((r) => (finish = r));
    });
    const saving = gateway.setTool('github', 'delete_repo', false);
    expect(gateway.switches.offTools.size).toBe(1);
    // An event sent before the engine saved the switch must not flip it back.
    emit({
      type: 'gateway',
      status: status({ calls: [{ server: 'github', tool: 'list', calls: 1, errors: 0 }] }),
    });
    expect(gateway.switches.offTools.size).toBe(1);
    finish();
    expect(await saving).toBe(true);
    expect(invoke).toHaveBeenCalledWith('set_tool_enabled', {
      server: 'github',
      tool: 'delete_repo',
      on: false,
    });
    expect(engine.data.gateway?.disabledTools).toEqual({ github: ['delete_repo'] });
    expect(gateway.switches.offTools.size).toBe(1);
  });

  it('puts a switch back and says why when saving it fails', async () => {
    invoke.mockImplementation(async (cmd: string) => {
      if (cmd === 'set_tool_enabled')
        throw { code: 'io', message: 'settings.json: permission denied' };
    });
    expect(await gateway.setTool('github', 'push', false)).toBe(false);
    expect(gateway.switches.offTools.size).toBe(0);
    expect(engine.notice).toEqual({
      kind: 'error',
      text: 'Could not switch "push" of github off: settings.json: permission denied',
    });
  });

  it('leaves a whole server out, or puts it back on failure', async () => {
    invoke.mockResolvedValue(undefined);
    expect(await gateway.setServer('scratch', false)).toBe(true);
    expect(invoke).toHaveBeenCalledWith('set_gateway_excluded', {
      server: 'scratch',
      excluded: true,
    });
    expect(gateway.switches.excluded.has('scratch')).toBe(true);

    invoke.mockRejectedValue({ code: 'io', message: 'disk full' });
    expect(await gateway.setServer('scratch', true)).toBe(false);
    expect(gateway.switches.excluded.has('scratch')).toBe(true);
    expect(engine.notice?.kind).toBe('error');
  });

  it('saves settings on top of the saved ones and shows the answer', async () => {
    engine.setGateway(status({ settings: { port: 3000 } }));
    invoke.mockImplementation(async (cmd: string, args?: { settings: object }) => {
      if (cmd === 'set_gateway_settings')
        return status({
          state: 'off',
          url: null,
          settings: args!.settings,
          message: 'The gateway is off',
        });
    });
    expect(await gateway.saveSettings({ off: true })).toBeNull();
    expect(invoke).toHaveBeenCalledWith('set_gateway_settings', {
      settings: { port: 3000, off: true },
    });
    expect(engine.data.gateway?.state).toBe('off');

    invoke.mockRejectedValue({
      code: 'invalid-port',
      message: 'Port 0 is not a port clients can be configured with',
    });
    expect(await gateway.saveSettings({ port: 0 })).toBe(
      'Port 0 is not a port clients can be configured with',
    );
  });
});
