// The `.mcpb` install form's logic (issue 31), apart from the component:
// the values a form starts with, what is wrong with them, the signature and
// the unpacking progress in words. The engine checks everything again on
// install; these are for showing problems as the user types.

import type {
  BundleField,
  BundleProgress,
  BundleView,
  InstalledCopy,
  SignatureStatus,
} from '../types';

/** Values by setting key; a `multiple` field has one value per line. */
export type BundleValues = Record<string, string>;

/** A server this form updates (opened from its page, or picked in the form). */
export type UpdateOf = { server: string; source: string };

/** The installed copy `update` names, if the bundle's view lists it. */
export function copyOf(view: BundleView, update: UpdateOf | null): InstalledCopy | undefined {
  if (!update) return undefined;
  return view.installed.find((c) => c.server === update.server && c.source === update.source);
}

/**
 * What each field starts with: for an update the server's current value, else
 * the default. Sensitive fields start empty (an update keeps the current one
 * when left empty).
 */
export function initialValues(view: BundleView, copy?: InstalledCopy): BundleValues {
  const out: BundleValues = {};
  for (const f of view.fields) {
    if (f.sensitive) {
      out[f.key] = '';
      continue;
    }
    const now = copy?.values[f.key];
    const list = now && now.length ? now : f.defaults;
    out[f.key] = f.kind === 'boolean' ? (list[0] ?? 'false') : list.join('\n');
  }
  return out;
}

/** The values as the engine takes them: a list per key, blank lines dropped. */
export function requestValues(view: BundleView, values: BundleValues): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const f of view.fields) {
    const raw = values[f.key] ?? '';
    const list = f.multiple ? raw.split('\n') : [raw];
    out[f.key] = list.map((v) => (f.kind === 'number' ? v.trim() : v)).filter((v) => v !== '');
  }
  return out;
}

/** Whether an empty field is fine: it has a default, or an update keeps its value. */
function hasFallback(f: BundleField, copy?: InstalledCopy): boolean {
  return f.defaults.length > 0 || !!copy?.kept.includes(f.key) || !!copy?.values[f.key]?.length;
}

/** What is wrong with each value, by key (empty when nothing is). */
export function fieldErrors(
  view: BundleView,
  values: BundleValues,
  copy?: InstalledCopy,
): Record<string, string> {
  const out: Record<string, string> = {};
  const list = requestValues(view, values);
  for (const f of view.fields) {
    const vs = list[f.key] ?? [];
    if (vs.length === 0) {
      if (f.required && !hasFallback(f, copy)) out[f.key] = 'Required.';
      continue;
    }
    if (f.kind === 'number') {
      for (const v of vs) {
        const n = Number(v);
        if (!Number.isFinite(n)) {
          out[f.key] = `“${v}” is not a number.`;
          break;
        }
        if ((f.min !== undefined && n < f.min) || (f.max !== undefined && n > f.max)) {
          out[f.key] = `Between ${f.min ?? '…'} and ${f.max ?? '…'}.`;
          break;
        }
      }
    }
  }
  return out;
}

/** How much to trust the signature, and the words for it. */
export function signatureBadge(s: SignatureStatus): {
  tone: 'ok' | 'warn' | 'danger';
  label: string;
  detail: string;
} {
  switch (s.status) {
    case 'unsigned':
      return {
        tone: 'warn',
        label: 'Unsigned',
        detail: 'Nobody vouches for this file: install it only if you trust where it came from.',
      };
    case 'self_signed':
      return {
        tone: 'warn',
        label: 'Self-signed',
        detail: `Signed by “${s.subject}” with a certificate it made itself: the content is as signed, but anyone can make such a certificate.`,
      };
    case 'signed':
      return s.trusted
        ? {
            tone: 'ok',
            label: 'Verified',
            detail: `Signed by ${s.subject} (issued by ${s.issuer}).`,
          }
        : {
            tone: 'warn',
            label: 'Signed, not trusted',
            detail: `Signed by ${s.subject} (issued by ${s.issuer}), but not trusted: ${s.untrusted ?? 'no trusted root'}.`,
          };
    case 'invalid':
      return { tone: 'danger', label: 'Invalid signature', detail: s.reason };
  }
}

/** Bytes as people read them (`12.3 MB`). */
export function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KB', 'MB', 'GB'];
  let v = bytes / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v >= 10 ? v.toFixed(0) : v.toFixed(1)} ${units[i]}`;
}

/** Unpacking's progress in words and as a fraction (0–1). */
export function progressText(p: BundleProgress | null): { text: string; fraction: number } {
  if (!p) return { text: 'Unpacking…', fraction: 0 };
  if (p.state === 'ready') return { text: 'Unpacked, ready to install.', fraction: 1 };
  if (p.state === 'failed')
    return { text: `Could not unpack: ${p.error ?? 'unknown error'}`, fraction: 0 };
  const fraction = p.total > 0 ? Math.min(1, p.done / p.total) : 0;
  return {
    text: `Unpacking… ${size(p.done)} of ${size(p.total)}`,
    fraction,
  };
}

/** The field's label: its title, else its key. */
export function fieldLabel(f: BundleField): string {
  return f.title.trim() || f.key;
}
