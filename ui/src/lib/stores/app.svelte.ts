// Facts about the running app, loaded once at start.

import { api, CommandError } from '../api';
import type { AppInfo } from '../types';

class AppState {
  info = $state<AppInfo | null>(null);
  error = $state<CommandError | null>(null);

  async load() {
    try {
      this.info = await api.appInfo();
      this.error = null;
    } catch (e) {
      this.error =
        e instanceof CommandError ? e : new CommandError('app_info', 'unknown', String(e));
    }
  }
}

export const appState = new AppState();
