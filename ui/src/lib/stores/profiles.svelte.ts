// Changing and switching profiles. The profiles themselves live in the
// engine store (`engine.profiles`), listed again on every `profiles` event
// (a change made here, in the tray or by the CLI) and after each change.

import { api } from '../api';
import type { ProfileChange } from '../types';
import { engine } from './engine.svelte';

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

class ProfilesStore {
  /** The profile a switch is on its way to (buttons wait for it). */
  switching = $state<string | null>(null);

  /** Resolves to null, or to the engine's message to show next to what was changed. */
  async change(change: ProfileChange): Promise<string | null> {
    try {
      await api.changeProfile(change);
      return null;
    } catch (e) {
      return message(e);
    } finally {
      // Listed again at once; the event from the settings file may come later.
      engine.refresh('profiles', 'clients');
    }
  }

  /** Switch the gateway's `/mcp` to `name`; a failure is shown as a notice. */
  async switchTo(name: string): Promise<boolean> {
    this.switching = name;
    try {
      await api.switchProfile(name);
      return true;
    } catch (e) {
      engine.notice = { kind: 'error', text: `Could not switch to "${name}": ${message(e)}` };
      return false;
    } finally {
      this.switching = null;
      engine.refresh('profiles', 'clients');
    }
  }
}

export const profiles = new ProfilesStore();
