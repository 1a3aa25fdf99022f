// The Catalog's pure logic (issue 13): install-form values and their
// validation, labels, the offline note and the debounce for search as you
// type. The form's fields come from the engine (`InstallForm`), generated
// from the server.json of the chosen package or remote.

import type {
  InstallField,
  InstallForm,
  ProjectFolder,
  RegistryOffline,
  RuntimeCheck,
  SourceInfo,
} from '../types';

export type Values = Record<string, string>;

/** Every field with its default (or the first choice of a required select), else empty. */
export function initialValues(form: InstallForm): Values {
  const out: Values = {};
  for (const f of form.fields) {
    out[f.id] = f.default ?? (f.required && f.choices?.length ? f.choices[0] : '');
  }
  return out;
}

/** What is wrong with one value, in a few words; `null` when nothing is. */
export function fieldError(f: InstallField, value: string | undefined): string | null {
  const v = (value ?? '').trim();
  if (!v) return f.required ? 'Required.' : null;
  const items = f.repeated
    ? v
        .split('\n')
        .map((x) => x.trim())
        .filter(Boolean)
    : [v];
  for (const item of items) {
    if (f.choices?.length && !f.choices.includes(item))
      return `Pick one of ${f.choices.join(', ')}.`;
    if (f.format === 'number' && !Number.isFinite(Number(item))) return 'A number.';
    if (f.format === 'boolean' && item !== 'true' && item !== 'false') return 'true or false.';
  }
  return null;
}

/** Errors by field id. */
export function formErrors(form: InstallForm, values: Values): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of form.fields) {
    const e = fieldError(f, values[f.id]);
    if (e) out[f.id] = e;
  }
  return out;
}

/** The name a server gets in Switchboard: letters, digits, `_`, `.`, `-`, up to 100. */
export function nameError(name: string, taken: string[]): string | null {
  const n = name.trim();
  if (!n) return 'A name is required.';
  if (n.length > 100) return 'At most 100 characters.';
  if (!/^[A-Za-z0-9_.-]+$/.test(n)) return 'Only letters, digits, “_”, “.” and “-”.';
  if (taken.includes(n)) return `“${n}” already exists there: pick another name, or replace it.`;
  return null;
}

/** A free variant of `name` (`name-2`, `name-3`, …). */
export function freeName(name: string, taken: string[]): string {
  if (!taken.includes(name)) return name;
  for (let i = 2; ; i++) if (!taken.includes(`${name}-${i}`)) return `${name}-${i}`;
}

const GROUP: Record<InstallField['group'], string> = {
  env: 'Environment variable',
  header: 'Header',
  argument: 'Argument',
  url: 'URL variable',
};

/** The label a field shows: its key (a flag with its dashes), and what it is part of. */
export function fieldLabel(f: InstallField): string {
  return f.variableOf ? `${f.key} (in ${f.variableOf})` : f.key;
}

/** The small print under a field: what it is, as the server.json says. */
export function fieldKind(f: InstallField): string {
  const kind = f.variableOf
    ? `Part of ${GROUP[f.group].toLowerCase()} ${f.variableOf}`
    : `${GROUP[f.group]} ${f.key}`;
  const extras = [
    f.format === 'filepath' ? 'a path on this computer' : null,
    f.repeated ? 'one per line' : null,
  ].filter(Boolean);
  return extras.length ? `${kind} · ${extras.join(', ')}` : kind;
}

/** How a field is edited. */
export function inputKind(f: InstallField): 'select' | 'password' | 'lines' | 'text' {
  if (f.choices?.length || f.format === 'boolean') return 'select';
  if (f.secret) return 'password';
  if (f.repeated) return 'lines';
  return 'text';
}

/** The options of a select field (booleans: true/false); an optional one can stay empty. */
export function selectOptions(f: InstallField): string[] {
  const base = f.choices?.length ? f.choices : ['true', 'false'];
  return f.required ? base : ['', ...base];
}

/** `Offline: showing results from 30 Nov 2026, 15:05` (local time). */
export function offlineNote(o: RegistryOffline, locale?: string): string {
  const when = new Date(o.fetchedAtMs).toLocaleString(locale, {
    dateStyle: 'medium',
    timeStyle: 'short',
  });
  return `Offline: the registry could not be reached (${o.reason}). Showing what was fetched on ${when}.`;
}

/** What the runtime check says, or `null` while it is still running. */
export function runtimeNote(check: RuntimeCheck | null): { ok: boolean; text: string } | null {
  if (!check) return null;
  if (check.found) return { ok: true, text: `${check.program} is installed (${check.found}).` };
  return {
    ok: false,
    text: `${check.program} is not installed on this computer, so this server cannot start. ${capitalize(check.installHint ?? '')}`,
  };
}

function capitalize(s: string): string {
  return s ? s[0].toUpperCase() + s.slice(1) + (s.endsWith('.') ? '' : '.') : s;
}

/** Whether any field of the form is a secret the user filled in. */
export function hasSecretValues(form: InstallForm, values: Values): boolean {
  return form.fields.some((f) => f.secret && (values[f.id] ?? '').trim() !== '');
}

/** Where an install can go: Switchboard's own list first, then clients' user files, then trusted projects' files. */
export function installTargets(sources: SourceInfo[], projects: ProjectFolder[]): SourceInfo[] {
  const trusted = new Set(projects.filter((p) => p.trusted).map((p) => p.path));
  const ok = sources.filter(
    (s) =>
      !s.readOnly &&
      s.level !== 'managed' &&
      s.client !== 'fallback' &&
      // The Team list holds team gateways only.
      s.client !== 'team' &&
      (!s.project || trusted.has(s.project)),
  );
  const rank = (s: SourceInfo) => (s.client === 'switchboard' ? 0 : s.level === 'user' ? 1 : 2);
  return [...ok].sort((a, b) => rank(a) - rank(b));
}

/** Calls `fn` once `ms` have passed without another call (search as you type). */
export function debounce<A extends unknown[]>(
  fn: (...args: A) => void,
  ms: number,
): ((...args: A) => void) & { cancel: () => void } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const d = (...args: A) => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
  d.cancel = () => timer && clearTimeout(timer);
  return d;
}

/**
 * Whether an env or header value of Switchboard's own file can be kept in
 * the keychain: a value written out, not a `${…}` reference, a `!command`,
 * or a value kept there already.
 */
export function keepable(value: string): boolean {
  const v = value.trim();
  if (!v || v.startsWith('!') || v.includes('${keychain:')) return false;
  if (/^\$\{[^}]+\}$/.test(v)) return false;
  return true;
}
