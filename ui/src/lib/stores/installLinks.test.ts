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

// The Add dialog's entry point needs a page (location.hash): the test passes its own `open`.
vi.mock('./navigation.svelte', () => ({ navigation: { install: vi.fn() } }));

const { followInstallLinks } = await import('./installLinks.svelte');

describe('followInstallLinks', () => {
  it('opens the link waiting at start, then each link announced later, each once', async () => {
    // The Rust queue: taking empties it.
    let waiting = ['switchboard://install?name=a&config=e30'];
    invoke.mockImplementation(async (cmd: string) => {
      expect(cmd).toBe('take_install_links');
      const taken = waiting;
      waiting = [];
      return taken;
    });
    const opened: string[] = [];
    await followInstallLinks((url) => opened.push(url));
    expect(opened).toEqual(['switchboard://install?name=a&config=e30']);

    // Two links clicked quickly: the latest is shown, and a second event
    // for the same batch finds the queue empty.
    waiting = [
      'switchboard://install?name=b&config=e30',
      'switchboard://install?name=c&config=e30',
    ];
    emit({ type: 'install-links' });
    emit({ type: 'install-links' });
    await vi.waitFor(() => expect(invoke).toHaveBeenCalledTimes(3));
    // Both takes answered (a macrotask runs after their microtasks).
    await new Promise((r) => setTimeout(r, 0));
    expect(opened).toEqual([
      'switchboard://install?name=a&config=e30',
      'switchboard://install?name=c&config=e30',
    ]);

    // Other events take nothing.
    invoke.mockClear();
    emit({ type: 'resync' });
    expect(invoke).not.toHaveBeenCalled();
  });
});
