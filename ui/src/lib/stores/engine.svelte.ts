// Everything the views show about the engine, kept live by `engine://event`.
// Local changes (status, counts, log lines) apply in place; structural ones
// trigger a reload of just the lists they affect, coalesced per frame.

import { api, CommandError, onEngineEvent, type FailureCode } from '../api';
import { ErrorCode } from '../types';
import { applyEvent, emptyData, type EngineData, type Reload } from '../model/events';
import { appendNew, MAX_LINES } from '../model/logs';
import { checkedAnswer } from '../model/activity';
import { hashFor } from '../views';
import type {
  ChannelEvent,
  ClientCost,
  GatewayStatus,
  ProfileView,
  ProjectFolder,
  ServerView,
  SourceInfo,
  ToolCost,
  ToolIndex,
} from '../types';

/**
 * Timing marks for the live-config benchmark (tests/e2e/live-config.bench.mjs):
 * recorded only when the page defines `window.__sbTrace` (never in normal use).
 */
function trace(what: string) {
  const t = (globalThis as { __sbTrace?: { what: string; at: number }[] }).__sbTrace;
  t?.push({ what, at: Date.now() });
}

/** What a notice's button does. */
export interface NoticeAction {
  label: string;
  run: () => void;
}

export interface Notice {
  /** `note`: stays until dismissed, like an error, but is not one. */
  kind: 'error' | 'ok' | 'note';
  text: string;
  action?: NoticeAction;
}

class EngineStore {
  data = $state<EngineData>(emptyData());
  sources = $state<SourceInfo[]>([]);
  projects = $state<ProjectFolder[]>([]);
  tools = $state.raw<ToolIndex>({ tools: [], collisions: [] });
  /** Every profile, Everything first, with its servers, tools and tokens. */
  profiles = $state.raw<ProfileView[]>([]);
  /** What each tool's definition costs in tokens. */
  costs = $state.raw<ToolCost[]>([]);
  /** What each client with a config file loads now, against its budget. */
  clients = $state.raw<ClientCost[]>([]);
  /** Set once the first lists have loaded (before the servers connect). */
  loaded = $state(false);
  error = $state<CommandError | null>(null);
  /** Last action's failure, shown as a toast, with a button to act on it when there is one. */
  notice = $state<Notice | null>(null);
  /** Per server, why its last sign-in failed (cleared when a new one starts). */
  signInErrors = $state<Record<string, { code: FailureCode; message: string }>>({});

  #pending = new Set<Reload>();
  #started = false;

  async init() {
    if (this.#started) return;
    this.#started = true;
    await onEngineEvent((ev) => {
      trace(ev.type);
      // An event carries the gateway's whole status, newer than any answer still on its way.
      if (ev.type === 'gateway') this.#seq.gateway++;
      if (
        this.#serversAsked > 0 &&
        (ev.type === 'status' || ev.type === 'tools' || ev.type === 'warning')
      ) {
        this.#sinceSent.push({ after: this.#seq.servers, ev });
        if (this.#sinceSent.length > 5000) this.#sinceSent.shift();
      }
      this.#schedule(applyEvent(this.data, ev));
      // The checks noted or refused an answer: say so, with a way to the call.
      if (ev.type === 'warning' && checkedAnswer(ev.message)) {
        const server = ev.server;
        this.notice = {
          kind: 'note',
          text: ev.message,
          // As `navigation.go` does (this store is also used where there is no page).
          action: {
            label: 'Open in Activity',
            run: () => (location.hash = hashFor('activity', server)),
          },
        };
      }
    });
    await this.reload(
      new Set([
        'servers',
        'sources',
        'tools',
        'projects',
        'gateway',
        'profiles',
        'costs',
        'clients',
      ]),
    );
    this.loaded = true;
  }

  /**
   * Reloads at once (the first event of a change is shown without delay);
   * events that arrive while a reload runs are gathered into one more reload
   * after it, so a storm of events costs at most two.
   */
  #schedule(what: Set<Reload>) {
    what.forEach((w) => this.#pending.add(w));
    if (this.#draining || this.#pending.size === 0) return;
    void this.#drain();
  }

  #draining = false;

  async #drain() {
    this.#draining = true;
    try {
      while (this.#pending.size) {
        const batch = new Set(this.#pending);
        this.#pending.clear();
        await this.reload(batch);
      }
    } finally {
      this.#draining = false;
    }
  }

  // Per list, the number of the last request sent: an older answer that
  // arrives after a newer one is dropped instead of overwriting it.
  #seq: Record<Reload, number> = {
    servers: 0,
    sources: 0,
    tools: 0,
    projects: 0,
    gateway: 0,
    profiles: 0,
    costs: 0,
    clients: 0,
  };

  #latest<T>(
    kind: Reload,
    load: () => Promise<T>,
    apply: (v: T, request: number) => void,
  ): Promise<void> {
    const n = ++this.#seq[kind];
    if (kind === 'servers') this.#serversAsked++;
    return load()
      .then((v) => {
        if (n === this.#seq[kind] && !(kind === 'sources' && this.#reordering > 0)) apply(v, n);
      })
      .finally(() => {
        if (kind === 'servers' && --this.#serversAsked === 0) this.#sinceSent = [];
      });
  }

  /**
   * A server's status, tool count and warnings change in place from events;
   * a list of servers the engine made before such an event, arriving after
   * it, would put the old status back for good (a server seen connecting
   * forever). Each such event is kept with the number of the last list
   * request sent when it arrived, and applied again on top of every list
   * answer to a request sent before it.
   */
  #sinceSent: { after: number; ev: ChannelEvent }[] = [];
  /** List requests on their way (events are kept only then). */
  #serversAsked = 0;

  #applyServers(servers: ServerView[], request: number) {
    this.data.servers = servers;
    this.#sinceSent = this.#sinceSent.filter((e) => e.after >= request);
    for (const { ev } of this.#sinceSent) applyEvent(this.data, ev);
  }

  /** Priority saves still in flight: until they return, the engine may answer with the old order. */
  #reordering = 0;

  /**
   * Shows `list` at once (drag, move up) and saves it with `save`. Until the
   * save returns, reloads keep the local order instead of flashing the old
   * one back (the engine answers with the old order while it re-discovers);
   * afterwards, success or failure, the engine's own list is loaded again.
   */
  async reorderSources<T>(list: SourceInfo[], save: () => Promise<T>): Promise<T | undefined> {
    this.#seq.sources++;
    this.sources = list;
    this.#reordering++;
    try {
      return await this.run(save);
    } finally {
      this.#reordering--;
      this.#schedule(new Set<Reload>(['sources']));
    }
  }

  async reload(what: Set<Reload>) {
    try {
      const jobs: Promise<unknown>[] = [];
      if (what.has('servers'))
        jobs.push(
          this.#latest('servers', api.listServers, (s, n) => {
            trace('servers-applied');
            this.#applyServers(s, n);
          }),
        );
      if (what.has('sources'))
        jobs.push(this.#latest('sources', api.listSources, (s) => (this.sources = s)));
      if (what.has('projects'))
        jobs.push(this.#latest('projects', api.listProjects, (p) => (this.projects = p)));
      if (what.has('tools'))
        jobs.push(this.#latest('tools', api.listTools, (t) => (this.tools = t)));
      if (what.has('gateway'))
        jobs.push(this.#latest('gateway', api.gatewayStatus, (g) => (this.data.gateway = g)));
      if (what.has('profiles'))
        jobs.push(this.#latest('profiles', api.listProfiles, (p) => (this.profiles = p)));
      if (what.has('costs'))
        jobs.push(this.#latest('costs', api.toolCosts, (c) => (this.costs = c)));
      if (what.has('clients'))
        jobs.push(this.#latest('clients', api.clientCosts, (c) => (this.clients = c)));
      await Promise.all(jobs);
      this.error = null;
    } catch (e) {
      this.error = e as CommandError;
    }
  }

  /** Lists `what` again (after a change whose event may come later). */
  refresh(...what: Reload[]) {
    this.#schedule(new Set(what));
  }

  /**
   * Shows a gateway status a command answered with (or one made locally from
   * a switch just saved); it replaces any older answer still on its way.
   */
  setGateway(status: GatewayStatus) {
    this.#seq.gateway++;
    this.data.gateway = status;
  }

  /** Loads a server's buffered lines once; new ones arrive as events. */
  async loadLogs(server: string) {
    try {
      const lines = await api.serverLogs(server);
      // Lines that came as events meanwhile and are newer than the list.
      const merged = appendNew(lines.slice(-MAX_LINES), this.data.logs[server] ?? []);
      this.data.logs[server] = merged;
    } catch {
      // Not managed (invalid or client-only): nothing logged.
    }
  }

  /**
   * Sign in to a remote server: the engine opens the authorization
   * page in the system browser and reports progress as `sign-in` events; this
   * resolves when the flow ends. A failure is shown as a notice, with the
   * button `actions` gives for its error code (if any).
   */
  async signIn(
    name: string,
    actions: Partial<Record<FailureCode, NoticeAction>> = {},
  ): Promise<boolean> {
    this.data.signIns[name] = { state: 'starting' };
    delete this.signInErrors[name];
    try {
      await api.signIn(name);
      this.notice = { kind: 'ok', text: `Signed in to "${name}"` };
      return true;
    } catch (e) {
      const text = e instanceof Error ? e.message : String(e);
      const code = e instanceof CommandError ? e.code : 'unknown';
      this.data.signIns[name] = { state: 'failed', error: text };
      this.signInErrors[name] = { code, message: text };
      // A cancelled sign-in is the user's own choice: no error toast.
      if (code !== ErrorCode.OauthCancelled)
        this.notice = { kind: 'error', text, action: actions[code] };
      return false;
    }
  }

  async signOut(name: string): Promise<boolean> {
    try {
      await api.signOut(name);
      this.notice = {
        kind: 'ok',
        text: `Signed out of "${name}"; its tokens were removed from the keychain`,
      };
      return true;
    } catch (e) {
      this.notice = { kind: 'error', text: e instanceof Error ? e.message : String(e) };
      return false;
    }
  }

  /** Runs a command, turning its failure into a visible notice. */
  /**
   * After a change to `source`'s file: when its client reads the file only
   * at start, a note that stays says which client to restart.
   */
  restartNote(source: string, what: string) {
    const hint = this.sources.find((s) => s.id === source)?.restartHint;
    if (hint) this.notice = { kind: 'note', text: `${what} ${hint} to use the change.` };
  }

  async run<T>(what: () => Promise<T>, ok?: string): Promise<T | undefined> {
    try {
      const r = await what();
      // The command has returned, so the engine's lists are final: reload them.
      // Its events may have been handled before the engine's snapshot followed
      // (a reload then shows the old winners and nothing would fix it).
      this.#schedule(
        new Set<Reload>([
          'servers',
          'sources',
          'tools',
          'projects',
          'profiles',
          'costs',
          'clients',
        ]),
      );
      if (ok) this.notice = { kind: 'ok', text: ok };
      return r;
    } catch (e) {
      this.notice = { kind: 'error', text: e instanceof Error ? e.message : String(e) };
      return undefined;
    }
  }
}

export const engine = new EngineStore();
