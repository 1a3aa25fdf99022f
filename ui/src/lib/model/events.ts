// Applying engine events to what the UI holds. Cheap, local changes are made
// in place (status, tool counts, log lines); structural ones (a server added
// or removed, discovery re-run) say what to reload from the engine.

import type {
  ChannelEvent,
  GatewayStatus,
  JsonSchema,
  LogLine,
  ServerView,
  SignInPhase,
} from '../types';
import { appendNew } from './logs';
import { resourceKey } from './resources';
import { isTeamGateway } from './teamGateway';

export interface ElicitationRequest {
  id: number;
  server: string;
  message: string;
  schema: JsonSchema;
}

export interface EngineData {
  servers: ServerView[];
  /** Per server, the newest lines (bounded). */
  logs: Record<string, LogLine[]>;
  elicitations: ElicitationRequest[];
  /** When each subscribed resource (`resourceKey(server, uri)`) last changed, ms since the epoch. */
  resourceUpdates: Record<string, number>;
  /** Per server, bumped when its resource list / prompt list changed: views re-list. */
  resourceListVersion: Record<string, number>;
  promptListVersion: Record<string, number>;
  /** Per server, the last sign-in step seen (`starting` until the engine says more). */
  signIns: Record<string, SignInPhase | { state: 'starting' }>;
  /** Bumped by every sign-in event (signed in, out, failed…): the accounts view lists again. */
  signInEvents: number;
  /** The first discovery and startup gate finished. */
  ready: boolean;
  /** The app's HTTP gateway, whole, as last reported (null until known). */
  gateway: GatewayStatus | null;
}

export type Reload =
  'servers' | 'sources' | 'tools' | 'projects' | 'gateway' | 'profiles' | 'costs' | 'clients';

export function emptyData(): EngineData {
  return {
    servers: [],
    logs: {},
    elicitations: [],
    resourceUpdates: {},
    resourceListVersion: {},
    promptListVersion: {},
    signIns: {},
    signInEvents: 0,
    ready: false,
    gateway: null,
  };
}

// The gateway's status is not among them: every gateway event carries it
// whole, so it is fetched only at start and after events were lost.
// Profiles, token costs and what each client loads follow the tools, the
// config files and the settings file, so every structural change lists them
// again too.
const EVERYTHING: Reload[] = [
  'servers',
  'sources',
  'tools',
  'projects',
  'profiles',
  'costs',
  'clients',
];
/** What a changed tool list makes stale: the list, its costs, the profiles' and clients' totals. */
const TOOLS: Reload[] = ['tools', 'costs', 'profiles', 'clients'];

/** Mutates `data` and returns what must be fetched again. */
export function applyEvent(
  data: EngineData,
  ev: ChannelEvent,
  now: number = Date.now(),
): Set<Reload> {
  const reload = new Set<Reload>();
  const runtimeOf = (name: string) => data.servers.find((s) => s.name === name)?.runtime;
  // A team gateway's team servers come with the server list (read from its
  // tools when it is connected): listed again when its status or tools change.
  const team = (name: string) => {
    const s = data.servers.find((x) => x.name === name);
    if (s && isTeamGateway(s)) reload.add('servers');
  };
  switch (ev.type) {
    case 'status': {
      team(ev.server);
      const rt = runtimeOf(ev.server);
      if (!rt) {
        reload.add('servers');
        break;
      }
      rt.status = ev.status;
      if (ev.status.state === 'failed') rt.lastError = ev.status.error;
      if (ev.status.state === 'needs-auth') rt.lastError = ev.status.message;
      if (ev.status.state === 'restarting') rt.restarts = Math.max(rt.restarts, ev.status.attempt);
      if (ev.status.state === 'connected') rt.lastError = undefined;
      break;
    }
    case 'tools': {
      team(ev.server);
      const rt = runtimeOf(ev.server);
      if (rt) {
        rt.toolCount = ev.count;
        rt.deferred = ev.deferred;
      } else reload.add('servers');
      TOOLS.forEach((r) => reload.add(r));
      break;
    }
    case 'log':
      appendNew((data.logs[ev.server] ??= []), ev.lines);
      break;
    case 'warning': {
      const rt = runtimeOf(ev.server);
      if (rt && !rt.warnings.includes(ev.message)) rt.warnings.push(ev.message);
      break;
    }
    case 'removed':
      reload.add('servers');
      TOOLS.forEach((r) => reload.add(r));
      break;
    case 'elicitation':
      data.elicitations.push({
        id: ev.id,
        server: ev.server,
        message: ev.message,
        schema: ev.schema,
      });
      break;
    case 'ready':
      data.ready = true;
      EVERYTHING.forEach((r) => reload.add(r));
      break;
    case 'resync':
      EVERYTHING.forEach((r) => reload.add(r));
      reload.add('gateway');
      break;
    case 'reconciled':
    case 'discovery-changed':
    case 'source-changed':
      EVERYTHING.forEach((r) => reload.add(r));
      break;
    case 'resource-updated':
      data.resourceUpdates[resourceKey(ev.server, ev.uri)] = now;
      break;
    case 'resources-changed':
      data.resourceListVersion[ev.server] = (data.resourceListVersion[ev.server] ?? 0) + 1;
      break;
    case 'prompts-changed':
      data.promptListVersion[ev.server] = (data.promptListVersion[ev.server] ?? 0) + 1;
      break;
    case 'sign-in':
      data.signIns[ev.server] = ev.phase;
      data.signInEvents++;
      break;
    case 'gateway':
      data.gateway = ev.status;
      break;
    case 'profiles':
      // Budgets and the profile each client follows are in the same file.
      reload.add('profiles');
      reload.add('clients');
      break;
  }
  return reload;
}
