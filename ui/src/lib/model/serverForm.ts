// The Add / Edit server form: its fields, inline validation (the engine's
// structural rules), and quick-add from a pasted command line or URL.
//
// An edit starts from the definition as the file had it and changes only the
// fields the user touched: everything the form does not show (auth,
// restartPolicy, fields only the client knows) travels along untouched.
//
// A remote server's pre-registered OAuth app (issue 17) is part of the
// form; its client secret is not: it goes to the keychain, never into the
// definition, so it is validated here but kept by the form component.

import type { OAuthApp, ServerDef, Transport } from '../types';

export interface Pair {
  key: string;
  value: string;
}

/** A remote server's pre-registered OAuth app, as the form edits it. */
export interface OAuthForm {
  clientId: string;
  /** The port of the app's redirect URI http://localhost:PORT/callback; empty: any free port. */
  callbackPort: string;
  /** Space-separated; empty: what the server asks for. */
  scopes: string;
  /** The exact registered redirect URI, for clients that keep one (Gemini CLI). */
  redirectUri: string;
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
  oauth: OAuthForm;
}

export function emptyOAuth(): OAuthForm {
  return { clientId: '', callbackPort: '', scopes: '', redirectUri: '' };
}

export function emptyForm(): ServerForm {
  return {
    name: '',
    transport: 'stdio',
    command: '',
    args: '',
    env: [],
    cwd: '',
    url: '',
    headers: [],
    timeout: '',
    enabled: true,
    autoApprove: '',
    oauth: emptyOAuth(),
  };
}

export const NAME_RULE = /^[A-Za-z0-9_.-]{1,100}$/;
export const BOTH_ERROR = 'Use either a URL or a command, not both.';
export const TOKEN_ERROR =
  'A token needs a URL: it is sent as an Authorization header to a remote server.';

export function nameError(name: string): string | null {
  if (name.length === 0) return 'A name is required.';
  if (name.length > 100) return 'At most 100 characters.';
  const bad = [...name].find((c) => !/[A-Za-z0-9_.-]/.test(c));
  if (bad !== undefined) return `"${bad}" is not allowed: use letters, digits, "_", "." and "-".`;
  return null;
}

/** Field → message; empty when the form can be saved. `secret`: the client secret typed into the OAuth app section. */
export function validateForm(
  f: ServerForm,
  existingNames: string[] = [],
  fields?: readonly string[],
  secret = '',
): Record<string, string> {
  const errors: Record<string, string> = {};
  const n = nameError(f.name);
  if (n) errors.name = n;
  else if (existingNames.includes(f.name))
    errors.name = `A server named "${f.name}" already exists in this source.`;
  const hasCommand = f.command.trim() !== '';
  const hasUrl = f.url.trim() !== '';
  if (f.transport === 'stdio') {
    if (hasUrl) errors.url = BOTH_ERROR;
    if (!hasCommand) errors.command = 'A command is required for a local (stdio) server.';
  } else {
    if (hasCommand) errors.command = BOTH_ERROR;
    if (!hasUrl) errors.url = 'A URL is required for a remote server.';
    else if (!/^https?:\/\/[^\s/]+/i.test(f.url.trim()))
      errors.url = 'Use an absolute http:// or https:// URL.';
  }
  if (supports(fields, 'timeout') && f.timeout.trim() !== '' && !/^\d+$/.test(f.timeout.trim()))
    errors.timeout = 'Milliseconds, a whole number.';
  for (const [field, pairs] of [
    ['env', f.env],
    ['headers', f.headers],
  ] as const) {
    if (pairs.some((p) => p.key.trim() === '' && p.value.trim() !== ''))
      errors[field] = 'Every value needs a name.';
  }
  if (f.transport !== 'stdio') Object.assign(errors, oauthErrors(f.oauth, fields, secret));
  return errors;
}

/** A port number as typed: 1–65535, or null. */
export function parsePort(text: string): number | null {
  const t = text.trim();
  if (!/^\d{1,5}$/.test(t)) return null;
  const n = Number(t);
  return n >= 1 && n <= 65535 ? n : null;
}

/**
 * The port and path of a redirect URI Switchboard can receive the sign-in
 * at (http on localhost, 127.0.0.1 or [::1] with an explicit port), as the
 * engine's `loopback_redirect`; null for any other.
 */
export function loopbackRedirect(uri: string): { port: number; path: string } | null {
  let u: URL;
  try {
    u = new URL(uri.trim());
  } catch {
    return null;
  }
  if (
    u.protocol !== 'http:' ||
    !['localhost', '127.0.0.1', '[::1]'].includes(u.hostname) ||
    u.port === ''
  )
    return null;
  return { port: Number(u.port), path: u.pathname || '/' };
}

/** A scope token (RFC 6749 §3.3): printable ASCII without space, `"` or `\`. */
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

/** The OAuth app section's errors, by `oauth.<member>` (and `oauth.clientSecret`). */
export function oauthErrors(
  o: OAuthForm,
  fields?: readonly string[],
  secret = '',
): Record<string, string> {
  const errors: Record<string, string> = {};
  if (!supports(fields, 'oauth')) return errors;
  const id = o.clientId.trim();
  if (/\s/.test(id))
    errors['oauth.clientId'] =
      'A client ID has no spaces: copy it exactly as the provider shows it.';
  const port = o.callbackPort.trim();
  if (port !== '' && parsePort(port) === null) {
    errors['oauth.callbackPort'] =
      'A port from 1 to 65535: the one in the redirect URI you registered (http://localhost:PORT/callback).';
  }
  const uri = o.redirectUri.trim();
  if (uri !== '') {
    const r = loopbackRedirect(uri);
    if (!r)
      errors['oauth.redirectUri'] =
        'Use http://localhost:PORT/… (or 127.0.0.1): Switchboard receives the sign-in on this computer.';
    else if (parsePort(port) !== null && parsePort(port) !== r.port) {
      errors['oauth.callbackPort'] =
        `The redirect URI uses port ${r.port}: use the same port here, or leave this empty.`;
    }
  }
  const scopes = o.scopes.trim();
  if (scopes.includes(',')) errors['oauth.scopes'] = 'Separate scopes with spaces, not commas.';
  else {
    const bad = scopes.split(/\s+/).find((t) => t !== '' && !SCOPE_TOKEN.test(t));
    if (bad !== undefined)
      errors['oauth.scopes'] =
        `“${bad}” is not a scope: scopes are words of letters, digits and punctuation, separated by spaces.`;
  }
  if (secret.trim() !== '' && id === '')
    errors['oauth.clientSecret'] =
      'A client secret goes with a client ID: enter the client ID too.';
  return errors;
}

/** The redirect URI to register with the provider for this app, if it has a fixed one. */
export function redirectFor(o: OAuthForm): string | null {
  if (o.redirectUri.trim() !== '') return o.redirectUri.trim();
  const port = parsePort(o.callbackPort);
  return port === null ? null : `http://localhost:${port}/callback`;
}

/** Whether the form names an OAuth app (any member set). */
export function hasOAuthApp(o: OAuthForm): boolean {
  return Object.values(o).some((v) => v.trim() !== '');
}

/** Fields a client may lack; the form shows them disabled there (never "saved" to nowhere). */
export type OptionalField =
  | 'cwd'
  | 'timeout'
  | 'autoApprove'
  | 'env'
  | 'headers'
  | 'oauth'
  | 'oauth.clientId'
  | 'oauth.callbackPort'
  | 'oauth.scopes'
  | 'oauth.redirectUri';
const OPTIONAL: readonly string[] = [
  'cwd',
  'timeout',
  'autoApprove',
  'env',
  'headers',
  'oauth',
] satisfies OptionalField[];

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

type FormKey =
  | 'name'
  | 'transport'
  | 'enabled'
  | 'timeout'
  | 'autoApprove'
  | 'command'
  | 'args'
  | 'env'
  | 'cwd'
  | 'url'
  | 'headers'
  | 'oauth';
const SHARED: FormKey[] = ['name', 'transport', 'enabled', 'timeout', 'autoApprove'];
const STDIO_ONLY: FormKey[] = ['command', 'args', 'env', 'cwd'];
const REMOTE_ONLY: FormKey[] = ['url', 'headers', 'oauth'];

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
      const tools = f.autoApprove
        .split('\n')
        .map((t) => t.trim())
        .filter((t) => t !== '');
      return orUnset(tools, tools.length === 0);
    }
    case 'env':
    case 'headers': {
      const r = pairsToRecord(f[key]);
      return orUnset(r, Object.keys(r).length === 0);
    }
    case 'timeout':
      return orUnset(Number(f.timeout.trim()), f.timeout.trim() === '');
    case 'oauth':
      return oauthApp(f.oauth);
  }
}

/** The OAuth app the form's members say (never a secret); undefined when none is set. */
function oauthApp(o: OAuthForm): OAuthApp | undefined {
  const app: OAuthApp = {};
  const id = o.clientId.trim();
  const port = parsePort(o.callbackPort);
  const scopes = o.scopes.split(/\s+/).filter((t) => t !== '');
  const uri = o.redirectUri.trim();
  if (id) app.clientId = id;
  if (port !== null) app.callbackPort = port;
  if (scopes.length) app.scopes = scopes;
  if (uri) app.redirectUri = uri;
  return orUnset(app, Object.keys(app).length === 0);
}

/** Deep equality; object keys in any order, arrays in order. */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((v, i) => sameValue(v, b[i]));
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  const keys = new Set(
    [...Object.keys(ra), ...Object.keys(rb)].filter(
      (k) => ra[k] !== undefined || rb[k] !== undefined,
    ),
  );
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
export function toDef(
  f: ServerForm,
  start: FormStart = blankStart(),
  fields?: readonly string[],
): ServerDef {
  const def = cloneDef(start.def);
  const stdio = f.transport === 'stdio';
  if (stdio !== (start.form.transport === 'stdio')) {
    for (const k of stdio ? REMOTE_ONLY : STDIO_ONLY) setField(def, k, undefined);
  }
  for (const key of [...SHARED, ...(stdio ? STDIO_ONLY : REMOTE_ONLY)]) {
    if (OPTIONAL.includes(key) && !supports(fields, key as OptionalField)) continue;
    let value = formValue(f, key);
    if (sameValue(value, formValue(start.form, key))) continue;
    // A secret written in the file by hand (`${VAR}`) stays with the app:
    // Switchboard never writes one, and never drops one either.
    const written = start.def.oauth?.clientSecret;
    if (key === 'oauth' && written !== undefined)
      value = { ...(value as OAuthApp | undefined), clientSecret: written };
    setField(def, key, value);
  }
  return def;
}

export function fromDef(d: ServerDef): ServerForm {
  const pairs = (r?: Record<string, string>) =>
    Object.entries(r ?? {}).map(([key, value]) => ({ key, value }));
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
    oauth: {
      clientId: d.oauth?.clientId ?? '',
      callbackPort: d.oauth?.callbackPort === undefined ? '' : String(d.oauth.callbackPort),
      scopes: (d.oauth?.scopes ?? []).join(' '),
      redirectUri: d.oauth?.redirectUri ?? '',
    },
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
const RUNNERS = new Set([
  'npx',
  'uvx',
  'bunx',
  'pipx',
  'docker',
  'podman',
  'deno',
  'node',
  'python',
  'python3',
  'uv',
]);

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
    const first = (def.args ?? []).find(
      (a) => !a.startsWith('-') && !['run', 'dlx', 'x', 'exec', 'tool'].includes(a),
    );
    if (first) pkg = first;
  }
  pkg =
    pkg
      .replace(/^@[^/]+\//, '')
      .replace(/@[^@]*$/, '')
      .split('/')
      .pop() ?? pkg;
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
    const val = (flag: string) =>
      w.startsWith(flag + '=') ? w.slice(flag.length + 1) : words[++i];
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
    form.name = suggestName({
      url: form.url || undefined,
      command: form.command,
      args: rest.slice(1),
    });
  }
  return { form };
}
