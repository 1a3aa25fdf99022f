// Profiles as the views show them: token figures with their tokenizer, the
// servers a profile can hold, each server's tool switches, the over-budget
// summary, and which tools the active profile lets through.

import type { ApplyReport, OverBudget, ProfileServerView, ProfileView, ToolCost } from '../types';

/** `12,345` (the same grouping on every machine). */
export function formatTokens(n: number): string {
  return n.toLocaleString('en-US');
}

/** `12,345 tokens · o200k_base`: a figure is never shown without its tokenizer. */
export function tokensText(n: number, tokenizer: string): string {
  return `${formatTokens(n)} token${n === 1 ? '' : 's'} · ${tokenizer}`;
}

/** The profile switched to (the gateway's `/mcp` serves it); Everything when none says so. */
export function activeProfile(profiles: ProfileView[]): ProfileView | undefined {
  return profiles.find((p) => p.active) ?? profiles.find((p) => p.builtIn);
}

/** The gateway names of the tools a profile lets through. */
export function profileToolNames(p: ProfileView): Set<string> {
  return new Set(p.servers.flatMap((s) => s.tools.map((t) => t.name)));
}

/** Tokens by key: a tool's gateway name, or a server's name summed over its tools. */
export function tokensBy(costs: ToolCost[], key: 'name' | 'server'): Map<string, number> {
  const m = new Map<string, number>();
  for (const c of costs) m.set(c[key], (m.get(c[key]) ?? 0) + c.tokens);
  return m;
}

/** One server offered to a profile: the known ones, then the profile's missing ones. */
export interface ServerChoice {
  name: string;
  inProfile: boolean;
  /** In the profile, but no source defines a server of this name any more. */
  missing: boolean;
}

/**
 * Every server a profile can hold (`known`, by name, in their order), and
 * after them the profile's servers that no longer exist: shown as missing,
 * never hidden.
 */
export function serverChoices(profile: ProfileView, known: string[]): ServerChoice[] {
  const inProfile = new Set(profile.servers.map((s) => s.name));
  const knownSet = new Set(known);
  return [
    ...known.map((name) => ({ name, inProfile: inProfile.has(name), missing: false })),
    ...profile.servers
      .filter((s) => !knownSet.has(s.name))
      .map((s) => ({ name: s.name, inProfile: true, missing: true })),
  ];
}

/** One tool of a profile's server, switched on or off in the profile. */
export interface ToolSwitch {
  /** The gateway name (`mcp_alpha_echo`). */
  name: string;
  /** The raw name on its server (what the profile's rule names). */
  tool: string;
  tokens: number;
  on: boolean;
}

/** A server's tools in a profile, on and off together, in the server's order by raw name. */
export function toolSwitches(s: ProfileServerView): ToolSwitch[] {
  const row = (on: boolean) => (t: ToolCost) => ({
    name: t.name,
    tool: t.tool,
    tokens: t.tokens,
    on,
  });
  return [...s.tools.map(row(true)), ...s.leftOut.map(row(false))].sort((a, b) =>
    a.tool.localeCompare(b.tool),
  );
}

/** `alpha 1,234 · beta 567`: the biggest contributors, largest first. */
export function biggestText(over: OverBudget): string {
  return over.biggest.map(([server, tokens]) => `${server} ${formatTokens(tokens)}`).join(' · ');
}

/** The Tools view's line about the active profile. */
export interface ProfileSummary {
  name: string;
  builtIn: boolean;
  /** Tools it lets through, of those listed. */
  tools: number;
  tokens: number;
  tokenizer: string;
}

export function profileSummary(p: ProfileView): ProfileSummary {
  return {
    name: p.name,
    builtIn: p.builtIn,
    tools: p.servers.reduce((n, s) => n + s.tools.length, 0),
    tokens: p.tokens,
    tokenizer: p.tokenizer,
  };
}

/**
 * Which profile to show after the list changed: the one asked for if it
 * exists (case-insensitively, as the engine names them), else the active one.
 */
export function pickProfile(
  profiles: ProfileView[],
  wanted: string | null,
): ProfileView | undefined {
  const w = wanted?.toLowerCase();
  return (
    (w ? profiles.find((p) => p.name.toLowerCase() === w) : undefined) ?? activeProfile(profiles)
  );
}

/** What applying a profile to a client did, one line each, then its notes. */
export function applyLines(r: ApplyReport): string[] {
  const list = (xs: string[]) => xs.join(', ');
  const out: string[] = [];
  if (r.enabled.length) out.push(`Switched on: ${list(r.enabled)}`);
  if (r.disabled.length) out.push(`Switched off: ${list(r.disabled)}`);
  if (r.added.length) out.push(`Added: ${list(r.added)}`);
  if (r.removed.length) out.push(`Taken out again: ${list(r.removed)}`);
  if (!out.length) out.push('Nothing to change: the file already holds exactly these servers.');
  return [...out, ...r.notes];
}

/** `Focus in Cursor, in its own file` / `…, through the gateway`. */
export function applyTitle(r: ApplyReport): string {
  return `${r.profile} in ${r.label}, ${r.via === 'file' ? 'in its own file' : 'through the gateway'}`;
}
