// Profiles as the views show them: token figures with their tokenizer, the
// servers a profile can hold, each server's tool switches, the over-budget
// summary, which tools the active profile lets through, what each client
// loads, and the words of an import's preview and report.

import type {
  ApplyReport,
  ClientCost,
  ImportPreview,
  ImportReport,
  OverBudget,
  ProfileServerView,
  ProfileView,
  SecretToEnter,
  ServerAction,
  ToolCost,
} from '../types';

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

/**
 * The Profiles view's page of clients (`#/profiles/:clients`): no profile
 * can be named so (a profile name has no `:`).
 */
export const CLIENTS_PAGE = ':clients';

/** `Follows Focus, in its own file` / `…, through the gateway` / no profile. */
export function clientProfileText(c: ClientCost): string {
  if (!c.profile) return 'No profile applied';
  return `Follows ${c.profile}, ${c.via === 'gateway' ? 'through the gateway' : 'in its own file'}`;
}

/** A budget as typed: a whole number of tokens above 0, or why not. */
export function parseBudget(text: string): { tokens: number } | { error: string } {
  const t = text.trim().replaceAll(',', '');
  if (!/^\d+$/.test(t) || Number(t) < 1 || !Number.isSafeInteger(Number(t)))
    return { error: 'A budget is a whole number of tokens, more than 0.' };
  return { tokens: Number(t) };
}

/** `Focus.switchboard-profile.json`: the file an export suggests (in the home folder). */
export function exportFileName(profile: string): string {
  return `${profile}.switchboard-profile.json`;
}

/** What importing does with one server, in words. */
export function importActionText(action: ServerAction): string {
  switch (action) {
    case 'add':
      return "Added to Switchboard's own file";
    case 'reuse':
      return 'The same definition is here: used as it is';
    case 'replace':
      return "Defined here differently: the document's definition goes into Switchboard's own file";
    case 'conflict':
      return 'Defined here differently: kept as it is, and nothing is written';
  }
}

/** The secrets the user types in the dialog (into the keychain), and those set as variables. */
export function secretsByKind(secrets: SecretToEnter[]): {
  enter: SecretToEnter[];
  variables: SecretToEnter[];
} {
  return {
    enter: secrets.filter((s) => s.kind !== 'variable'),
    variables: secrets.filter((s) => s.kind === 'variable'),
  };
}

/** The secrets to send with the import: only those asked for and typed. */
export function secretValues(
  secrets: SecretToEnter[],
  typed: Record<string, string>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const s of secretsByKind(secrets).enter) {
    const v = typed[s.name];
    if (v) out[s.name] = v;
  }
  return out;
}

/** The preview's headline: what profile the import makes, if any. */
export function importHeadline(p: ImportPreview): string {
  const n = p.servers.length;
  const servers = `${n} server${n === 1 ? '' : 's'}`;
  if (!p.profile) return `Its ${servers} join Everything here; no profile is made.`;
  if (p.profileExists) return `The profile ${p.profile} is here already, with the same ${servers}.`;
  return `Makes the profile ${p.profile} with ${servers}.`;
}

/** What an import did, one line each. */
export function importReportLines(r: ImportReport): string[] {
  const out: string[] = [];
  const p = r.preview;
  if (r.historyId === undefined) out.push('Nothing to write: all of it is here already.');
  else if (p.profile) out.push(`Imported the profile ${p.profile} (change #${r.historyId}).`);
  else out.push(`Imported the servers (change #${r.historyId}).`);
  const added = p.servers.filter((s) => s.action === 'add' || s.action === 'replace');
  if (added.length) out.push(`Written to ${p.file}: ${added.map((s) => s.name).join(', ')}`);
  if (r.kept.length) out.push(`Kept in the OS keychain: ${r.kept.join(', ')}`);
  const { enter, variables } = secretsByKind(r.toEnter);
  if (enter.length)
    out.push(`Still to enter (import the file again): ${enter.map((s) => s.name).join(', ')}`);
  const unset = variables.filter((v) => !v.set);
  if (unset.length)
    out.push(
      `Environment variables to set where Switchboard starts: ${unset.map((s) => s.name).join(', ')}`,
    );
  return out;
}
