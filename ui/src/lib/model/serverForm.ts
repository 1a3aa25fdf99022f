// The Add / Edit server form (SPEC U6): its fields, inline validation (C3),
// and quick-add from a pasted command line or URL (C10).

import type { ServerDef, Transport } from '../types';

export interface Pair {
  key: string;
  value: string;
}

export interface ServerForm {
  name: string;
  transport: Transport;
  command: string;
  /** Arguments, one per line (spaces inside an argument are kept). */
  args: string;
  env: Pair[];
  url: string;
  headers: Pair[];
  /** Milliseconds, empty for the default (30 s). */
  timeout: string;
  enabled: boolean;
}

export function emptyForm(): ServerForm {
  return { name: '', transport: 'stdio', command: '', args: '', env: [], url: '', headers: [], timeout: '', enabled: true };
}

export const NAME_RULE = /^[A-Za-z0-9_.-]{1,100}$/;
export const BOTH_ERROR = 'Use either a URL or a command, not both.';
export const TOKEN_ERROR = 'A token needs a URL: it is sent as an Authorization header to a remote server.';

export function nameError(name: string): string | null {
  if (name.length === 0) return 'A name is required.';
  if (name.length > 100) return 'At most 100 characters.';
  const bad = [...name].find((c) => !/[A-Za-z0-9_.-]/.test(c));
  if (bad !== undefined) return `"${bad}" is not allowed: use letters, digits, "_", "." and "-".`;
  return null;
}

/** Field → message; empty when the form can be saved. */
export function validateForm(f: ServerForm, existingNames: string[] = []): Record<string, string> {
  const errors: Record<string, string> = {};
  const n = nameError(f.name);
  if (n) errors.name = n;
  else if (existingNames.includes(f.name)) errors.name = `A server named "${f.name}" already exists in this source.`;
  const hasCommand = f.command.trim() !== '';
  const hasUrl = f.url.trim() !== '';
  if (f.transport === 'stdio') {
    if (hasUrl) errors.url = BOTH_ERROR;
    if (!hasCommand) errors.command = 'A command is required for a local (stdio) server.';
  } else {
    if (hasCommand) errors.command = BOTH_ERROR;
    if (!hasUrl) errors.url = 'A URL is required for a remote server.';
    else if (!/^https?:\/\/[^\s/]+/i.test(f.url.trim())) errors.url = 'Use an absolute http:// or https:// URL.';
  }
  if (f.timeout.trim() !== '' && !/^\d+$/.test(f.timeout.trim())) errors.timeout = 'Milliseconds, a whole number.';
  for (const [field, pairs] of [['env', f.env], ['headers', f.headers]] as const) {
    if (pairs.some((p) => p.key.trim() === '' && p.value.trim() !== '')) errors[field] = 'Every value needs a name.';
  }
  return errors;
}

const pairsToRecord = (pairs: Pair[]) =>
  Object.fromEntries(pairs.filter((p) => p.key.trim() !== '').map((p) => [p.key.trim(), p.value]));

export function toDef(f: ServerForm): ServerDef {
  const def: ServerDef = { name: f.name.trim(), transport: f.transport, enabled: f.enabled };
  if (f.transport === 'stdio') {
    def.command = f.command.trim();
    const args = f.args.split('\n').filter((a) => a.trim() !== '');
    if (args.length) def.args = args;
    const env = pairsToRecord(f.env);
    if (Object.keys(env).length) def.env = env;
  } else {
    def.url = f.url.trim();
    const headers = pairsToRecord(f.headers);
    if (Object.keys(headers).length) def.headers = headers;
  }
  if (f.timeout.trim() !== '') def.timeout = Number(f.timeout.trim());
  return def;
}

export function fromDef(d: ServerDef): ServerForm {
  const pairs = (r?: Record<string, string>) => Object.entries(r ?? {}).map(([key, value]) => ({ key, value }));
  return {
    name: d.name,
    transport: d.transport,
    command: d.command ?? '',
    args: (d.args ?? []).join('\n'),
    env: pairs(d.env),
    url: d.url ?? '',
    headers: pairs(d.headers),
    timeout: d.timeout === undefined ? '' : String(d.timeout),
    enabled: d.enabled,
  };
}

/** Splits like a POSIX shell: quotes and backslashes, no expansion. */
export function splitCommandLine(text: string): string[] {
  const out: string[] = [];
  let cur = '';
  let inWord = false;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === quote) quote = null;
      else if (c === '\\' && quote === '"' && i + 1 < text.length) cur += text[++i];
      else cur += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      inWord = true;
    } else if (c === '\\' && i + 1 < text.length) {
      cur += text[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) out.push(cur);
      cur = '';
      inWord = false;
    } else {
      cur += c;
      inWord = true;
    }
  }
  if (inWord) out.push(cur);
  return out;
}

const isUrl = (s: string) => /^https?:\/\//i.test(s);
const RUNNERS = new Set(['npx', 'uvx', 'bunx', 'pipx', 'docker', 'podman', 'deno', 'node', 'python', 'python3', 'uv']);

function cleanName(raw: string): string {
  const n = raw
    .replace(/[^A-Za-z0-9_.-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 100);
  return n || 'server';
}

/** A name from a URL's host or a command's package. */
export function suggestName(def: { url?: string; command?: string; args?: string[] }): string {
  if (def.url) {
    try {
      const host = new URL(def.url).hostname.split('.');
      const parts = host.filter((p) => !['mcp', 'www', 'api', 'app'].includes(p));
      const core = parts.length > 1 ? parts[parts.length - 2] : (parts[0] ?? host[0]);
      return cleanName(core);
    } catch {
      return 'remote';
    }
  }
  const cmd = (def.command ?? '').split('/').pop() ?? '';
  let pkg = cmd;
  if (RUNNERS.has(cmd)) {
    const first = (def.args ?? []).find((a) => !a.startsWith('-') && !['run', 'dlx', 'x', 'exec', 'tool'].includes(a));
    if (first) pkg = first;
  }
  pkg = pkg.replace(/^@[^/]+\//, '').replace(/@[^@]*$/, '').split('/').pop() ?? pkg;
  pkg = pkg
    .replace(/\.(js|py|ts|mjs)$/, '')
    .replace(/^(mcp-server-|server-|mcp-)/, '')
    .replace(/(-mcp-server|-mcp|-server)$/, '');
  return cleanName(pkg);
}

/**
 * Quick-add: `npx -y @scope/pkg arg`, `FOO=1 uvx tool`, `https://host/mcp`,
 * `https://host/mcp --token abc`, `-H "X-Key: v" https://host/sse`. Options
 * before the command, or anywhere after a URL, are Switchboard's; everything
 * after a command belongs to the command.
 */
export function parseQuickAdd(text: string): { form: ServerForm } | { error: string } {
  const words = splitCommandLine(text.trim());
  if (words.length === 0) return { error: 'Paste a command line or a URL.' };
  const form = emptyForm();
  let token: string | null = null;
  let url: string | null = null;
  const rest: string[] = [];
  let i = 0;
  const takeOption = (): boolean => {
    const w = words[i];
    const val = (flag: string) => (w.startsWith(flag + '=') ? w.slice(flag.length + 1) : words[++i]);
    if (w === '--token' || w.startsWith('--token=')) token = val('--token') ?? '';
    else if (w === '-H' || w === '--header' || w.startsWith('--header=')) {
      const h = val(w.startsWith('--header') ? '--header' : '-H') ?? '';
      const at = h.indexOf(':');
      if (at > 0) form.headers.push({ key: h.slice(0, at).trim(), value: h.slice(at + 1).trim() });
    } else if (w === '--name' || w.startsWith('--name=')) form.name = val('--name') ?? '';
    else if (!url && /^[A-Za-z_][A-Za-z0-9_]*=/.test(w)) {
      const at = w.indexOf('=');
      form.env.push({ key: w.slice(0, at), value: w.slice(at + 1) });
    } else return false;
    return true;
  };
  for (; i < words.length; i++) {
    if (takeOption()) continue;
    if (url) {
      rest.push(words[i]);
      continue;
    }
    if (isUrl(words[i])) url = words[i];
    else {
      rest.push(...words.slice(i));
      break;
    }
  }
  if (url && rest.length > 0) return { error: BOTH_ERROR };
  if (url) {
    form.url = url;
    form.transport = /\/sse\/?$/.test(new URL(url).pathname) ? 'sse' : 'http';
    if (token) form.headers.push({ key: 'Authorization', value: `Bearer ${token}` });
    form.env = [];
  } else {
    if (token !== null) return { error: TOKEN_ERROR };
    if (rest.length === 0) return { error: 'Paste a command line or a URL.' };
    form.transport = 'stdio';
    form.command = rest[0];
    form.args = rest.slice(1).join('\n');
  }
  if (!form.name) {
    form.name = suggestName({ url: form.url || undefined, command: form.command, args: rest.slice(1) });
  }
  return { form };
}
