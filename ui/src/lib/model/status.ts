// How a server's state reads in the UI: one short label, a colour
// kind for the badge, and the detail behind it.

import type { ServerStatus, ServerView } from '../types';

export type StatusKind =
  | 'connecting'
  | 'connected'
  | 'disabled'
  | 'failed'
  | 'needs-auth'
  | 'restarting'
  | 'disconnected'
  | 'invalid'
  | 'external'
  | 'held';

export interface StatusInfo {
  kind: StatusKind;
  label: string;
  /** Why: the error, the auth message, or what an unmanaged server is. */
  detail: string | null;
  /** A diagnosed failure: the whole explanation, with what to do. */
  explain?: string;
}

export function describeStatus(status: ServerStatus): StatusInfo {
  switch (status.state) {
    case 'failed':
      return { kind: 'failed', label: 'failed', detail: status.error };
    case 'needs-auth':
      return { kind: 'needs-auth', label: 'needs sign-in', detail: status.message };
    case 'restarting':
      return {
        kind: 'restarting',
        label: `restarting ${status.attempt}/${status.of}`,
        detail: null,
      };
    default:
      return { kind: status.state, label: status.state, detail: null };
  }
}

/**
 * Servers without a runtime are not managed: invalid, only their client can
 * run them, or held until the user approves them.
 */
export function serverStatus(server: ServerView): StatusInfo {
  if (server.runtime) {
    const info = describeStatus(server.runtime.status);
    const d = server.runtime.diagnosis;
    // A server that is not up says why in plain words (the raw error stays in the log).
    if (
      d &&
      server.runtime.status.state !== 'connected' &&
      server.runtime.status.state !== 'disabled'
    )
      return { ...info, detail: d.summary, explain: d.detail };
    return info;
  }
  if (server.errors.length > 0)
    return { kind: 'invalid', label: 'invalid', detail: server.errors.join('\n') };
  if (server.notRunnable)
    return { kind: 'external', label: 'client only', detail: server.notRunnable };
  if (server.held)
    return {
      kind: 'held',
      label: server.held.kind === 'not-approved' ? 'not approved' : 'changed',
      detail: server.held.reason,
    };
  if (!server.enabled) return { kind: 'disabled', label: 'disabled', detail: null };
  return { kind: 'connecting', label: 'starting', detail: null };
}

export const STATUS_FILTERS: { value: StatusKind; label: string }[] = [
  { value: 'connected', label: 'Connected' },
  { value: 'connecting', label: 'Connecting' },
  { value: 'restarting', label: 'Restarting' },
  { value: 'failed', label: 'Failed' },
  { value: 'needs-auth', label: 'Needs sign-in' },
  { value: 'disabled', label: 'Disabled' },
  { value: 'disconnected', label: 'Stopped' },
  { value: 'invalid', label: 'Invalid' },
  { value: 'external', label: 'Client only' },
  { value: 'held', label: 'Waiting for approval' },
];

/** Can be started / stopped from the UI right now. */
export function isRunning(server: ServerView): boolean {
  const s = server.runtime?.status.state;
  return s === 'connected' || s === 'connecting' || s === 'restarting';
}
