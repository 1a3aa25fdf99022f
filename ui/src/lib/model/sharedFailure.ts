// A clear first run: when many servers fail for the same reason (usually a
// runtime such as Node.js or uv that is not installed), the Servers view
// says so once, above the table, with the fix, instead of a column of
// identical red rows.

import type { Diagnosis, ServerView } from '../types';

export interface SharedFailure {
  /** The servers that fail this way, in list order. */
  servers: string[];
  diagnosis: Diagnosis;
}

/** At least this many servers failing alike make one banner. */
export const SHARED_AT_LEAST = 3;

/**
 * The most common failure shared by at least three servers that are not up
 * (same class and same short line, e.g. "npx not found — install Node.js"),
 * or null.
 */
export function sharedFailure(servers: ServerView[]): SharedFailure | null {
  const groups = new Map<string, SharedFailure>();
  for (const s of servers) {
    const rt = s.runtime;
    const d = rt?.diagnosis;
    if (!rt || !d || rt.status.state === 'connected' || rt.status.state === 'disabled') continue;
    const key = `${d.class}\n${d.summary}`;
    const g = groups.get(key) ?? { servers: [], diagnosis: d };
    g.servers.push(s.name);
    groups.set(key, g);
  }
  let best: SharedFailure | null = null;
  for (const g of groups.values())
    if (g.servers.length >= SHARED_AT_LEAST && (!best || g.servers.length > best.servers.length))
      best = g;
  return best;
}

/** The banner's first line: "12 servers cannot start: npx not found — install Node.js". */
export function sharedFailureTitle(f: SharedFailure): string {
  return `${f.servers.length} servers cannot start: ${f.diagnosis.summary}`;
}
