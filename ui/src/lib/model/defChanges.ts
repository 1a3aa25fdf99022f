// What changed between two versions of a server definition: shown when the
// file changed under an open form, and used to put the user's edit on top of
// the new version instead of overwriting it.

import type { ServerDef, ServerView } from '../types';
import { cloneDef, sameValue, setField } from './serverForm';

export interface FieldChange {
  field: string;
  before: unknown;
  after: unknown;
}

// The order fields are listed in; fields not named here follow, by name.
const ORDER = [
  'name',
  'transport',
  'command',
  'args',
  'env',
  'cwd',
  'url',
  'headers',
  'enabled',
  'timeout',
  'auth',
  'restartPolicy',
  'autoApprove',
];

// What a ServerView adds to the definition: where it came from and how it runs.
const VIEW_ONLY = [
  'source',
  'path',
  'line',
  'errors',
  'warnings',
  'notRunnable',
  'parked',
  'lastGoodAt',
  'held',
  'shadowed',
  'runtime',
  'teamServers',
] as const;
// Fails to compile when ServerView gains a field that is not part of the
// definition and not listed above (it would be sent back as if it were).
type Unlisted = Exclude<Exclude<keyof ServerView, keyof ServerDef>, (typeof VIEW_ONLY)[number]>;
const viewOnlyListed: [Unlisted] extends [never] ? true : Unlisted = true;
void viewOnlyListed;

/** The definition inside a ServerView, with every field the view carries of it. */
export function defOf(view: ServerDef | ServerView): ServerDef {
  const def = cloneDef(view) as unknown as Record<string, unknown>;
  for (const k of VIEW_ONLY) delete def[k];
  return def as unknown as ServerDef;
}

/** Fields whose value differs between `before` and `after`. */
export function fieldChanges(before: ServerDef, after: ServerDef): FieldChange[] {
  const b = before as unknown as Record<string, unknown>;
  const a = after as unknown as Record<string, unknown>;
  const rank = (k: string) => (ORDER.includes(k) ? ORDER.indexOf(k) : ORDER.length);
  return [...new Set([...Object.keys(b), ...Object.keys(a)])]
    .filter((k) => !sameValue(b[k], a[k]))
    .sort((x, y) => rank(x) - rank(y) || x.localeCompare(y))
    .map((field) => ({ field, before: b[field], after: a[field] }));
}

/**
 * `mine` was edited from `base`; the file now holds `latest`. Returns
 * `latest` with the fields the user changed set to the user's values, so
 * every other change in the file stays.
 */
export function rebase(mine: ServerDef, base: ServerDef, latest: ServerDef): ServerDef {
  const out = cloneDef(latest);
  for (const c of fieldChanges(base, mine)) setField(out, c.field, c.after);
  return out;
}

function show(field: string, v: unknown): string {
  if (v === undefined || v === null) return 'not set';
  if (field === 'timeout' && typeof v === 'number') return `${v} ms`;
  if (typeof v === 'string') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map((x) => JSON.stringify(x)).join(', ')}]`;
  if (typeof v === 'object') {
    return `{${Object.entries(v as Record<string, unknown>)
      .map(([k, x]) => `${JSON.stringify(k)}: ${show('', x)}`)
      .join(', ')}}`;
  }
  return String(v);
}

// Values of env and headers are often secrets: name the keys, never the values.
const SECRET_MAPS = new Set(['env', 'headers']);

function keyChanges(before: unknown, after: unknown): string {
  const b = (before ?? {}) as Record<string, unknown>;
  const a = (after ?? {}) as Record<string, unknown>;
  const out: string[] = [];
  for (const k of Object.keys(a)) {
    if (!(k in b)) out.push(`${k} added`);
    else if (!sameValue(b[k], a[k])) out.push(`${k} changed`);
  }
  for (const k of Object.keys(b)) if (!(k in a)) out.push(`${k} removed`);
  return out.join(', ');
}

/** `args changed in the file: ["-y", "a"] → ["-y", "b"]` */
export function describeChange(c: FieldChange, where = 'in the file'): string {
  const what = SECRET_MAPS.has(c.field)
    ? keyChanges(c.before, c.after)
    : `${show(c.field, c.before)} → ${show(c.field, c.after)}`;
  return `${c.field} changed ${where}: ${what}`;
}
