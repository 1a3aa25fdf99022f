// What the Add dialog shows for a pasted install link or server entry
// (issue 31): where it came from, the exact command or URL with the values
// the user typed (password inputs never shown), and which inputs still lack
// a value. The engine reads the link and writes the server; this only
// words and masks.

import type { LinkInput, LinkInstall, LinkOrigin, LinkServer } from '../types';

export const MASK = '••••';

/** "VS Code install link", with how it arrived when that matters. */
export function originLabel(o: LinkOrigin): string {
  const base: Record<LinkOrigin['kind'], string> = {
    vscode: 'VS Code install link',
    vscodeInsiders: 'VS Code Insiders install link',
    cursor: 'Cursor install link',
    lmStudio: 'LM Studio install link',
    switchboard: 'Switchboard link',
    snippet: 'Pasted server entry',
  };
  const shape: Partial<Record<NonNullable<LinkOrigin['shape']>, string>> = {
    mcpServers: 'an mcpServers file',
    vscodeServers: 'a VS Code servers file',
    zedContextServers: 'Zed’s context_servers',
    codexMcpServers: 'Codex’s [mcp_servers]',
    gooseExtensions: 'goose’s extensions',
  };
  let out = base[o.kind];
  if (o.shape && shape[o.shape]) out += ` (from ${shape[o.shape]})`;
  if (o.web) out += ', through its web page';
  if (o.imported) out += ', inside a Switchboard import link';
  return out;
}

/** The name a server of the link is listed under (the link's, or "server N"). */
export function serverLabel(s: LinkServer, i: number): string {
  return s.name ?? (s.def.name || `server ${i + 1}`);
}

export type Values = Record<string, string>;

/** Each input's starting value: its default, or the first choice of a pick list. */
export function initialValues(s: LinkServer): Values {
  return Object.fromEntries(s.inputs.map((i) => [i.id, i.default ?? i.options[0] ?? '']));
}

/** Inputs without a value, by id. */
export function inputErrors(s: LinkServer, values: Values): Record<string, string> {
  const out: Record<string, string> = {};
  for (const i of s.inputs)
    if ((values[i.id] ?? '') === '' && i.default === undefined)
      out[i.id] = `${inputLabel(i)} is required.`;
  return out;
}

export function inputLabel(i: LinkInput): string {
  return i.description ? `${i.description}` : i.id;
}

/** Looks like a credential: a long run of letters and digits, or a known token prefix. */
function secretLooking(v: string): boolean {
  return (
    /^(sk|pk|ghp|gho|github_pat|xox[abp]|glpat|AKIA)[-_A-Za-z0-9]{8,}$/.test(v) ||
    /^[A-Za-z0-9_-]{32,}$/.test(v)
  );
}

/** A value with what must not be shown replaced by the mask. */
function maskText(v: string, secrets: string[]): string {
  return secrets.filter((s) => s !== '').reduce((t, s) => t.split(s).join(MASK), v);
}

/** The query values of a URL named in `keys` (or every secret-looking one) masked. */
function maskUrl(url: string, keys: string[]): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const parts = url
    .slice(q + 1)
    .split('&')
    .map((p) => {
      const eq = p.indexOf('=');
      if (eq < 0) return p;
      const k = p.slice(0, eq);
      const v = p.slice(eq + 1);
      return keys.includes(k) || secretLooking(decodeURIComponent(v)) ? `${k}=${MASK}` : p;
    });
  return `${url.slice(0, q)}?${parts.join('&')}`;
}

export interface Preview {
  /** The program, or null for a remote server. */
  command: string | null;
  args: string[];
  env: [string, string][];
  url: string | null;
  headers: [string, string][];
}

/**
 * What will run or be connected to, as it will be written: inputs filled
 * with what the user typed (or their default), password inputs as the
 * keychain reference (Switchboard's own list) or masked, and values the link
 * writes inline as credentials masked.
 */
export function preview(s: LinkServer, values: Values, own: boolean, name: string): Preview {
  const fill = (v: string): string => {
    let out = v;
    for (const i of s.inputs) {
      if (!out.includes(i.token)) continue;
      const typed = values[i.id] ?? '';
      const value = i.password
        ? own
          ? `\${keychain:${keychainName(name || s.def.name, i.id)}}`
          : typed !== ''
            ? MASK
            : i.token
        : typed !== ''
          ? typed
          : (i.default ?? i.token);
      out = out.split(i.token).join(value);
    }
    return out;
  };
  const typedSecrets = s.inputs.filter((i) => i.password).map((i) => values[i.id] ?? '');
  const inline = (field: string) =>
    new Set(s.inlineSecrets.filter((x) => x.field === field).map((x) => x.key));
  const env = inline('env');
  const headers = inline('headers');
  const args = inline('args');
  const pairs = (m: Record<string, string> | undefined, hide: Set<string>) =>
    Object.entries(m ?? {}).map(
      ([k, v]) => [k, hide.has(k) ? MASK : maskText(fill(v), typedSecrets)] as [string, string],
    );
  const d = s.def;
  return {
    command: d.command ?? null,
    args: (d.args ?? []).map((a, i) =>
      args.has(String(i)) ? MASK : maskText(fill(a), typedSecrets),
    ),
    env: pairs(d.env, env),
    url: d.url ? maskUrl(maskText(fill(d.url), typedSecrets), [...inline('url')]) : null,
    headers: pairs(d.headers, headers),
  };
}

/** The keychain name the engine gives input `id` of `server` (`registry::install::keychain_name`). */
export function keychainName(server: string, id: string): string {
  const clean = (x: string) => x.replace(/[^A-Za-z0-9_.-]/g, '_');
  return `${clean(server)}.${clean(id.replace(/^-+/, ''))}`;
}

/** The warnings of one server of the link (and those about the link as a whole). */
export function warningsFor(link: LinkInstall, s: LinkServer | undefined) {
  return link.warnings.filter((w) => !w.server || !s || w.server === s.name);
}
