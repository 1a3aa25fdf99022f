// The gateway's switches and settings as the views change them. The status
// itself lives in the engine store (`engine.data.gateway`), kept live by
// `gateway` events; this store adds the switches just flipped, shown at once
// and put back if saving them fails.

import { api } from '../api';
import {
  emptyPending,
  pendingKey,
  settingsWith,
  switchesOf,
  withExcluded,
  withToolSwitch,
  type PendingSwitches,
} from '../model/gateway';
import type { GatewaySettings } from '../types';
import { engine } from './engine.svelte';

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

class GatewayStore {
  pending = $state<PendingSwitches>(emptyPending());
  readonly status = $derived(engine.data.gateway);
  /** Every switch in force, with the ones being saved already applied. */
  readonly switches = $derived(switchesOf(engine.data.gateway, this.pending));

  /** Offer one tool (server and raw tool name) through the gateway, or stop offering it. */
  async setTool(server: string, tool: string, on: boolean): Promise<boolean> {
    const key = pendingKey(server, tool);
    this.pending.tools[key] = on;
    try {
      await api.setToolEnabled(server, tool, on);
      // Saved: show it as the engine now has it, before its event arrives.
      if (engine.data.gateway)
        engine.setGateway(withToolSwitch(engine.data.gateway, server, tool, on));
      return true;
    } catch (e) {
      engine.notice = {
        kind: 'error',
        text: `Could not switch "${tool}" of ${server} ${on ? 'on' : 'off'}: ${message(e)}`,
      };
      return false;
    } finally {
      // A newer flip of the same switch owns the entry now.
      if (this.pending.tools[key] === on) delete this.pending.tools[key];
    }
  }

  /** Serve all of a server's tools, resources and prompts through the gateway, or leave them out. */
  async setServer(server: string, included: boolean): Promise<boolean> {
    const excluded = !included;
    this.pending.servers[server] = excluded;
    try {
      await api.setGatewayExcluded(server, excluded);
      if (engine.data.gateway)
        engine.setGateway(withExcluded(engine.data.gateway, server, excluded));
      return true;
    } catch (e) {
      engine.notice = {
        kind: 'error',
        text: `Could not ${included ? 'add' : 'leave out'} ${server} ${included ? 'to' : 'of'} the gateway: ${message(e)}`,
      };
      return false;
    } finally {
      if (this.pending.servers[server] === excluded) delete this.pending.servers[server];
    }
  }

  /**
   * Saves the saved settings with `change` on top and restarts the listener.
   * Resolves to null, or to the error to show next to the settings.
   */
  async saveSettings(change: GatewaySettings): Promise<string | null> {
    const saved = engine.data.gateway?.settings ?? {};
    try {
      engine.setGateway(await api.setGatewaySettings(settingsWith(saved, change)));
      return null;
    } catch (e) {
      return message(e);
    }
  }
}

export const gateway = new GatewayStore();
