// The tool review (pins, findings, what the gateway holds), loaded once and
// again whenever tools or approvals change (engine events; never polled).

import { api, onEngineEvent } from '../api';
import type { ApprovalMode, TrustReport } from '../types';
import { engine } from './engine.svelte';

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));
/** Events that can change the review. */
const relevant = new Set([
  'tools',
  'approvals',
  'status',
  'removed',
  'ready',
  'resync',
  'prompts-changed',
  'resources-changed',
]);

class ApprovalsStore {
  report = $state<TrustReport | null>(null);
  /** Servers and tools being approved right now (`server/tool`, `server/*`). */
  busy = $state<Record<string, boolean>>({});
  #started = false;
  #loading = false;
  #again = false;

  async init() {
    if (this.#started) return;
    this.#started = true;
    await onEngineEvent((ev) => {
      if (relevant.has(ev.type)) void this.load();
    });
    await this.load();
  }

  /** One load at a time; events during a load cause one more after it. */
  async load() {
    if (this.#loading) {
      this.#again = true;
      return;
    }
    this.#loading = true;
    try {
      do {
        this.#again = false;
        this.report = await api.toolReview();
      } while (this.#again);
    } catch (e) {
      engine.notice = { kind: 'error', text: `Could not check the tools: ${message(e)}` };
    } finally {
      this.#loading = false;
    }
  }

  /** Approve `tools` of `server` (all when empty); the gateway then offers them. */
  async approve(server: string, tools: string[]): Promise<boolean> {
    const key = `${server}/${tools.length ? tools.join(',') : '*'}`;
    this.busy[key] = true;
    try {
      await api.approveTools(server, tools);
      await this.load();
      return true;
    } catch (e) {
      engine.notice = {
        kind: 'error',
        text: `Could not approve ${tools.length ? tools.join(', ') : 'the tools'} of ${server}: ${message(e)}`,
      };
      return false;
    } finally {
      delete this.busy[key];
    }
  }

  async setMode(server: string, mode: ApprovalMode): Promise<void> {
    try {
      await api.setApprovalMode(server, mode);
      await this.load();
    } catch (e) {
      engine.notice = {
        kind: 'error',
        text: `Could not change what the gateway holds of ${server}: ${message(e)}`,
      };
    }
  }
}

export const approvals = new ApprovalsStore();
