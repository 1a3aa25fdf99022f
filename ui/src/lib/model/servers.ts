// Filtering and labelling servers and sources for the Servers view.

import type { ServerView, SourceInfo } from '../types';
import { serverStatus, type StatusKind } from './status';

export interface ServerFilter {
  query: string;
  status: StatusKind | 'all';
  source: string | 'all';
}

export const NO_FILTER: ServerFilter = { query: '', status: 'all', source: 'all' };

/** Name, command, URL, source and error all match the search box. */
export function filterServers(servers: ServerView[], f: ServerFilter): ServerView[] {
  const q = f.query.trim().toLowerCase();
  return servers.filter((s) => {
    if (f.status !== 'all' && serverStatus(s).kind !== f.status) return false;
    if (f.source !== 'all' && s.source !== f.source) return false;
    if (!q) return true;
    const hay = [
      s.name,
      s.command ?? '',
      s.url ?? '',
      s.source,
      s.runtime?.lastError ?? '',
      ...(s.args ?? []),
    ]
      .join(' ')
      .toLowerCase();
    return hay.includes(q);
  });
}

/** `Claude Code · user`, or the id when the source is unknown. */
export function sourceLabel(id: string, sources: SourceInfo[]): string {
  const s = sources.find((x) => x.id === id);
  return s ? `${s.clientName} · ${s.level}` : id;
}

/**
 * Where a server would be written: sources a user may edit. The Team list
 * holds team gateways, added as such ("Team gateway" in the Add dialog): it
 * is offered only for a server already in it (`current`).
 */
export function writableSources(sources: SourceInfo[], current?: string): SourceInfo[] {
  return sources.filter(
    (s) => !s.readOnly && s.level !== 'managed' && (s.client !== 'team' || s.id === current),
  );
}

/** Secret-looking values are masked unless they only reference a variable. */
export function maskValue(value: string): string {
  if (/^\$\{[^}]+\}$/.test(value) || /^\$[A-Za-z_][A-Za-z0-9_]*$/.test(value)) return value;
  if (value.length === 0) return value;
  return '•'.repeat(Math.min(12, Math.max(6, value.length)));
}

/** The text under "Use this one": what promote() will do to the priority list. */
export function promoteExplanation(
  shadowSource: string,
  winnerSource: string,
  sources: SourceInfo[],
): string {
  return `Moves ${sourceLabel(shadowSource, sources)} above ${sourceLabel(winnerSource, sources)} in the priority list.`;
}
