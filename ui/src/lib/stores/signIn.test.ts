import { beforeEach, describe, expect, it, vi } from 'vitest';

// The flow talks to Rust only through api.ts; mock the Tauri boundary below it.
const invoke = vi.fn();
vi.mock('@tauri-apps/api/core', () => ({
  invoke: (...a: unknown[]) => invoke(...a),
  isTauri: () => true,
}));
vi.mock('@tauri-apps/api/event', () => ({ listen: vi.fn(async () => () => {}) }));
const editServer = vi.fn();
vi.mock('./navigation.svelte', () => ({
  navigation: { editServer: (...a: unknown[]) => editServer(...a) },
}));

const { signInFlow } = await import('./signIn.svelte');
const { engine } = await import('./engine.svelte');

const calls = (cmd: string) => invoke.mock.calls.filter(([c]) => c === cmd);

beforeEach(() => {
  invoke.mockReset();
  editServer.mockReset();
  engine.notice = null;
  signInFlow.cancel();
});

describe('starting a sign-in', () => {
  it('signs in at once when the server asked for no more scopes', async () => {
    invoke.mockImplementation(async (cmd: string) => (cmd === 'step_up' ? null : undefined));
    await signInFlow.start('linear');
    expect(signInFlow.stepUp).toBeNull();
    expect(calls('sign_in')).toEqual([['sign_in', { name: 'linear' }]]);
    expect(engine.notice).toEqual({ kind: 'ok', text: 'Signed in to "linear"' });
  });

  it('shows what a step-up asks for before the browser opens; Continue signs in, Cancel does not', async () => {
    invoke.mockImplementation(async (cmd: string) =>
      cmd === 'step_up'
        ? { scopes: ['files:write'], reason: 'Writing needs files:write' }
        : undefined,
    );
    await signInFlow.start('files');
    expect(signInFlow.stepUp).toEqual({
      server: 'files',
      scopes: ['files:write'],
      reason: 'Writing needs files:write',
    });
    expect(calls('sign_in')).toEqual([]);
    signInFlow.cancel();
    expect(signInFlow.stepUp).toBeNull();
    expect(calls('sign_in')).toEqual([]);

    await signInFlow.start('files');
    await signInFlow.continue();
    expect(signInFlow.stepUp).toBeNull();
    expect(calls('sign_in')).toEqual([['sign_in', { name: 'files' }]]);
  });

  it('offers to set up the OAuth app when the server has no registration', async () => {
    const message = 'Sign-in to "noapp" needs an OAuth app registered in advance: …';
    invoke.mockImplementation(async (cmd: string) => {
      if (cmd === 'sign_in') throw { code: 'oauth-no-registration', message };
      return null;
    });
    await signInFlow.start('noapp');
    expect(engine.notice?.text).toBe(message);
    expect(engine.notice?.action?.label).toBe('Set up OAuth app');
    expect(engine.signInErrors.noapp).toEqual({ code: 'oauth-no-registration', message });
    engine.notice?.action?.run();
    expect(editServer).toHaveBeenCalledWith('noapp', 'oauth');
  });

  it('shows a taken port as the engine says it (it names the program), with no button', async () => {
    const message =
      'The sign-in to "busy" (its OAuth app\'s callback port) cannot listen on port 8765: nginx (pid 42) is using it.';
    invoke.mockImplementation(async (cmd: string) => {
      if (cmd === 'sign_in') throw { code: 'oauth-port-taken', message };
      return null;
    });
    await signInFlow.start('busy');
    expect(engine.notice).toEqual({ kind: 'error', text: message, action: undefined });
  });

  it('a cancelled sign-in shows no error', async () => {
    invoke.mockImplementation(async (cmd: string) => {
      if (cmd === 'sign_in')
        throw { code: 'oauth-cancelled', message: 'sign-in to "x" was cancelled' };
      return null;
    });
    await signInFlow.start('x');
    expect(engine.notice).toBeNull();
    expect(engine.signInErrors.x.code).toBe('oauth-cancelled');
  });
});
