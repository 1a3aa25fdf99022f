import { describe, expect, it } from 'vitest';
import {
  checkPort,
  emptyPending,
  limitWarning,
  longNamesWarning,
  pendingKey,
  sessionScope,
  settingsWith,
  stateBadge,
  stateLabel,
  switchesOf,
  toolState,
  withExcluded,
  withToolSwitch,
} from './gateway';

describe('gateway warnings', () => {
  it('says nothing while every client takes all the tools', () => {
    expect(limitWarning({ toolCount: 40, overLimits: [] })).toBeNull();
    // Tool search mode: the engine reports no limit exceeded, whatever the count.
    expect(limitWarning({ toolCount: 900, overLimits: [] })).toBeNull();
  });

  it('names the highest limit exceeded and the lower ones', () => {
    const one = limitWarning({ toolCount: 41, overLimits: [40] });
    expect(one).toContain('offers 41 tools, more than 40');
    expect(one).toContain('Some clients use only the first 40 tools');
    const all = limitWarning({ toolCount: 130, overLimits: [40, 100, 128] });
    expect(all).toContain('Some clients use only the first 128 tools, others only 100 or 40');
    expect(all).toContain('tool search');
  });

  it('counts long names in words', () => {
    expect(longNamesWarning([])).toBeNull();
    expect(longNamesWarning(['x'.repeat(70)])).toMatch(/^1 tool name is longer than 64 characters/);
    expect(longNamesWarning(['a'.repeat(65), 'b'.repeat(80)])).toMatch(
      /^2 tool names are longer than 64 characters/,
    );
  });
});

describe('gateway status text', () => {
  it('puts every state into words', () => {
    expect(stateLabel('listening')).toBe('Listening');
    expect(stateLabel('off')).toBe('Off');
    expect(stateLabel('failed')).toBe('Not listening');
    expect(stateLabel('starting')).toBe('Starting…');
  });

  it("shows the state in the servers' badge colours, with the message as its detail", () => {
    const at = (
      state: 'listening' | 'starting' | 'off' | 'failed',
      message: string | null = null,
    ) => stateBadge({ state, message } as Parameters<typeof stateBadge>[0]);
    expect(at('listening')).toEqual({ kind: 'connected', label: 'Listening', detail: null });
    expect(at('starting').kind).toBe('connecting');
    expect(at('off').kind).toBe('disabled');
    expect(at('failed', 'port 27182 is in use')).toEqual({
      kind: 'failed',
      label: 'Not listening',
      detail: 'port 27182 is in use',
    });
  });

  it('says which servers a client session is for', () => {
    expect(sessionScope({ server: null })).toBe('all servers');
    expect(sessionScope({ server: 'github' })).toBe('only github');
  });
});

describe('checkPort', () => {
  it('accepts 1024 to 65535 and an empty field (the default)', () => {
    expect(checkPort('')).toEqual({ ok: true, port: undefined });
    expect(checkPort(null)).toEqual({ ok: true, port: undefined });
    expect(checkPort('1024')).toEqual({ ok: true, port: 1024 });
    expect(checkPort(' 27182 ')).toEqual({ ok: true, port: 27182 });
    expect(checkPort(65535)).toEqual({ ok: true, port: 65535 });
  });

  it('refuses privileged, out-of-range and fractional ports with one message', () => {
    for (const bad of ['80', '1023', '65536', '0', '-5', '3000.5', 'abc']) {
      const c = checkPort(bad);
      expect(c.ok, bad).toBe(false);
      if (!c.ok) expect(c.error).toBe('The port must be a whole number from 1024 to 65535.');
    }
  });
});

describe('settingsWith', () => {
  it('changes one setting and keeps the others', () => {
    expect(settingsWith({ port: 3000, toolSearch: true }, { off: true })).toEqual({
      port: 3000,
      toolSearch: true,
      off: true,
    });
  });

  it('drops the port back to the default when the change unsets it', () => {
    expect(settingsWith({ port: 3000, off: false }, { port: undefined })).toEqual({ off: false });
  });
});

describe('tool switches', () => {
  const status = { disabledTools: { github: ['delete_repo'] }, excluded: ['scratch'] };

  it('tells offered tools from switched-off ones and from tools of a left-out server', () => {
    const sw = switchesOf(status);
    expect(toolState(sw, 'github', 'create_issue')).toBe('on');
    expect(toolState(sw, 'github', 'delete_repo')).toBe('off');
    expect(toolState(sw, 'scratch', 'anything')).toBe('server-off');
    // The same raw tool name on another server is its own switch.
    expect(toolState(sw, 'gitlab', 'delete_repo')).toBe('on');
  });

  it('shows switches being saved on top of the saved ones', () => {
    const pending = emptyPending();
    pending.tools[pendingKey('github', 'delete_repo')] = true;
    pending.tools[pendingKey('github', 'push')] = false;
    pending.servers.scratch = false;
    pending.servers.github = true;
    const sw = switchesOf(status, pending);
    expect(toolState(sw, 'scratch', 'anything')).toBe('on');
    expect(toolState(sw, 'github', 'delete_repo')).toBe('server-off');
    const onlyTools = switchesOf(status, { tools: pending.tools, servers: {} });
    expect(toolState(onlyTools, 'github', 'delete_repo')).toBe('on');
    expect(toolState(onlyTools, 'github', 'push')).toBe('off');
  });

  it('treats an unknown status as everything on', () => {
    expect(toolState(switchesOf(null), 'github', 'x')).toBe('on');
  });

  it('updates a status the way the engine will report the saved switch', () => {
    const off = withToolSwitch(status, 'github', 'push', false);
    expect(off.disabledTools).toEqual({ github: ['delete_repo', 'push'] });
    const backOn = withToolSwitch(
      withToolSwitch(off, 'github', 'push', true),
      'github',
      'delete_repo',
      true,
    );
    expect(backOn.disabledTools).toEqual({});
    expect(status.disabledTools).toEqual({ github: ['delete_repo'] });
    expect(withExcluded(status, 'github', true).excluded).toEqual(['scratch', 'github']);
    expect(withExcluded(status, 'scratch', false).excluded).toEqual([]);
    expect(withExcluded(status, 'scratch', true).excluded).toEqual(['scratch']);
  });
});
