import { beforeEach, describe, expect, it, vi } from 'vitest';

// api.ts is the only module that touches @tauri-apps/api; mock that boundary.
const invoke = vi.fn();
let insideApp = true;
vi.mock('@tauri-apps/api/core', () => ({
  invoke: (...args: unknown[]) => invoke(...args),
  isTauri: () => insideApp,
}));
vi.mock('@tauri-apps/api/event', () => ({ listen: vi.fn() }));

const { api, CommandError, toCommandError } = await import('./api');

describe('api', () => {
  beforeEach(() => {
    invoke.mockReset();
    insideApp = true;
  });

  it('appInfo calls the app_info command and returns its value', async () => {
    invoke.mockResolvedValue({ name: 'Switchboard', version: '0.1.0' });
    await expect(api.appInfo()).resolves.toEqual({ name: 'Switchboard', version: '0.1.0' });
    expect(invoke).toHaveBeenCalledWith('app_info', undefined);
  });

  it('turns a {code, message} rejection into a CommandError naming the command', async () => {
    invoke.mockRejectedValue({ code: 'invalid', message: 'server "x": missing command' });
    const err = await api.appInfo().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CommandError);
    expect(err).toMatchObject({
      code: 'invalid',
      command: 'app_info',
      message: 'server "x": missing command',
    });
  });

  it('refuses to call outside the desktop app instead of hanging', async () => {
    insideApp = false;
    await expect(api.appInfo()).rejects.toMatchObject({ code: 'not-in-app' });
    expect(invoke).not.toHaveBeenCalled();
  });

  it('normalises string, Error and odd rejections', () => {
    expect(toCommandError('c', 'plain text')).toMatchObject({
      code: 'unknown',
      message: 'plain text',
    });
    expect(toCommandError('c', new Error('boom'))).toMatchObject({
      code: 'unknown',
      message: 'boom',
    });
    expect(toCommandError('c', 42).message).toBe('c failed: 42');
  });
});
