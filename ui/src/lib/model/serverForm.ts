// The Add / Edit server form (SPEC U6): its fields, inline validation (C3),
// and quick-add from a pasted command line or URL (C10).
//
// An edit starts from the definition as the file had it and changes only the
// fields the user touched: everything the form does not show (auth,
// restartPolicy, fields only the client knows) travels along untouched.

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
  /** Working folder of a local command. */
  cwd: string;
  url: string;
  headers: Pair[];
  /** Milliseconds, empty for the default (30 s). */
  timeout: string;
  enabled: boolean;
  /** Tool names the client runs without asking, one per line. */
  autoApprove: string;
}

export function emptyForm(): ServerForm {
  return { name: '', transport: 'stdio', command: '', args: '', env: [], cwd: '', url: '', headers: [], timeout: '', enabled: true, autoApprove: '' };
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
export function validateForm(f: ServerForm, existingNames: string[] = [], fields?: readonly string[]): Record<string, string> {
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
  if (supports(fields, 'timeout') && f.timeout.trim() !== '' && !/^\d+$/.test(f.timeout.trim())) errors.timeout = 'Milliseconds, a whole number.';
  for (const [field, pairs] of [['env', f.env], ['headers', f.headers]] as const) {
    if (pairs.some((p) => p.key.trim() === '' && p.value.trim() !== '')) errors[field] = 'Every value needs a name.';
  }
  return errors;
}

/** Fields a client may lack; the form shows them disabled there (never "saved" to nowhere). */
export type OptionalField = 'cwd' | 'timeout' | 'autoApprove' | 'env' | 'headers';
const OPTIONAL: readonly string[] = ['cwd', 'timeout', 'autoApprove', 'env', 'headers'] satisfies OptionalField[];

/** Whether a source's client can store `field` (`fields` unknown: assume it can). */
export function supports(fields: readonly string[] | undefined, field: OptionalField): boolean {
  return !fields || fields.includes(field);
}

/** The definition a form was filled from, and the form values it gave. */
export interface FormStart {
  def: ServerDef;
  form: ServerForm;
}

export function startFrom(def: ServerDef): FormStart {
  return { def: cloneDef(def), form: fromDef(def) };
}

/** Where the Add form starts: nothing but the defaults. */
export function blankStart(): FormStart {
  return { def: { name: '', transport: 'stdio', enabled: true }, form: emptyForm() };
}

export function cloneDef<T extends ServerDef>(def: T): T {
  return JSON.parse(JSON.stringify(def)) as T;
}

type FormKey = 'name' | 'transport' | 'enabled' | 'timeout' | 'autoApprove' | 'command' | 'args' | 'env' | 'cwd' | 'url' | 'headers';
const SHARED: FormKey[] = ['name', 'transport', 'enabled', 'timeout', 'autoApprove'];
const STDIO_ONLY: FormKey[] = ['command', 'args', 'env', 'cwd'];
const REMOTE_ONLY: FormKey[] = ['url', 'headers'];

const pairsToRecord = (pairs: Pair[]) =>
  Object.fromEntries(pairs.filter((p) => p.key.trim() !== '').map((p) => [p.key.trim(), p.value]));
const orUnset = <T>(v: T, empty: boolean) => (empty ? undefined : v);

/** What the form says for one ServerDef field (undefined: not set). */
function formValue(f: ServerForm, key: FormKey): unknown {
  switch (key) {
    case 'name':
      return f.name.trim();
    case 'transport':
      return f.transport;
    case 'enabled':
      return f.enabled;
    case 'command':
    case 'cwd':
    case 'url':
      return orUnset(f[key].trim(), f[key].trim() === '');
    case 'args': {
      const args = f.args.split('\n').filter((a) => a.trim() !== '');
      return orUnset(args, args.length === 0);
    }
    case 'autoApprove': {
      const tools = f.autoApprove.split('\n').map((t) => t.trim()).filter((t) => t !== '');
      return orUnset(tools, tools.length === 0);
    }
    case 'env':
    case 'headers': {
      const r = pairsToRecord(f[key]);
      return orUnset(r, Object.keys(r).length === 0);
    }
    case 'timeout':
      return orUnset(Number(f.timeout.trim()), f.timeout.trim() === '');
  }
}

/** Deep equality; object keys in any order, arrays in order. */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => sameValue(v, b[i]));
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  const keys = new Set([...Object.keys(ra), ...Object.keys(rb)].filter((k) => ra[k] !== undefined || rb[k] !== undefined));
  return [...keys].every((k) => sameValue(ra[k], rb[k]));
}

/** Sets `key` on `def`, or removes it for undefined. */
export function setField(def: ServerDef, key: string, value: unknown) {
  const r = def as unknown as Record<string, unknown>;
  if (value === undefined) delete r[key];
  else r[key] = value;
}

/**
 * The definition to save: `start.def` with only the fields whose form value
 * differs from `start.form` replaced. Fields the client cannot store
 * (`fields`) are never written; switching between a command and a URL drops
 * the other kind's fields.
 */
export function toDef(f: ServerForm, start: FormStart = blankStart(), fields?: readonly string[]): ServerDef {
  const def = cloneDef(start.def);
  const stdio = f.transport === 'stdio';
  if (stdio !== (start.form.transport === 'stdio')) {
    for (const k of stdio ? REMOTE_ONLY : STDIO_ONLY) setField(def, k, undefined);
  }
  for (const key of [...SHARED, ...(stdio ? STDIO_ONLY : REMOTE_ONLY)]) {
    if (OPTIONAL.includes(key) && !supports(fields, key as OptionalField)) continue;
    const value = formValue(f, key);
    if (!sameValue(value, formValue(start.form, key))) setField(def, key, value);
  }
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
    cwd: d.cwd ?? '',
    url: d.url ?? '',
    headers: pairs(d.headers),
    timeout: d.timeout === undefined ? '' : String(d.timeout),
    enabled: d.enabled,
    autoApprove: (d.autoApprove ?? []).join('\n'),
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
