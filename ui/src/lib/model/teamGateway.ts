// Team gateways: remote servers in Switchboard's Team list
// (`team-gateways.json`), signed in with the team's account, that serve the
// team's servers. What the Add dialog writes and what the views say of them.

import type { ServerDef, ServerView, TeamServer } from '../types';
import { freeName } from './catalog';

/** The id of the Team source (the engine's `TEAM_SOURCE_ID`). */
export const TEAM_SOURCE = 'team';

/** Labels of a host that say "MCP gateway", not whose it is. */
const GENERIC = new Set(['mcp', 'gateway', 'gw', 'www', 'api', 'team', 'teams', 'ai']);

/** Whether the server comes from the Team list. */
export function isTeamGateway(s: Pick<ServerView, 'source'>): boolean {
  return s.source === TEAM_SOURCE;
}

/** Why `url` cannot be a team gateway's address, or null. */
export function urlError(url: string): string | null {
  const u = url.trim();
  if (!u) return 'The gateway’s URL is required.';
  let parsed: URL;
  try {
    parsed = new URL(u);
  } catch {
    return 'Not a URL: it starts with https://';
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')
    return 'A team gateway’s URL starts with https://';
  return null;
}

/**
 * A name from the gateway's host: `https://mcp.acme.example/mcp` → `acme`,
 * `https://acme.example/mcp` → `acme`; `team` for an IP address or a host
 * with nothing else to go by. Made free among `taken`.
 */
export function nameFromUrl(url: string, taken: string[]): string {
  let host: string;
  try {
    host = new URL(url.trim()).hostname.toLowerCase();
  } catch {
    return '';
  }
  const ip = /^[\d.]+$/.test(host) || host.includes(':') || host.startsWith('[');
  const labels = ip ? [] : host.split('.').filter((l) => l && !GENERIC.has(l));
  // The registrable part's first label: drop the top-level domain when there is more.
  const pick = labels.length > 1 ? labels[labels.length - 2] : labels[0];
  const name = (pick ?? 'team').replace(/[^a-z0-9_.-]/g, '-').slice(0, 100) || 'team';
  return freeName(name === 'localhost' ? 'team' : name, taken);
}

/** The entry written to the Team list: the URL alone (streamable HTTP). */
export function teamGatewayDef(name: string, url: string): ServerDef {
  return { name: name.trim(), transport: 'http', url: url.trim(), enabled: true };
}

/** `github (12 tools), jira (1 tool)`. */
export function teamSummary(team: TeamServer[]): string {
  return team
    .map((s) => `${s.name} (${s.tools.length} ${s.tools.length === 1 ? 'tool' : 'tools'})`)
    .join(', ');
}
