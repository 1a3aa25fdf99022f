// Settings → Activity: how long and how much the call journal keeps, as the
// user types it, to and from the engine's `JournalSettings`, and the
// journal's figures in words.
import type { JournalSettings, JournalStatus } from '../types';
import { formatBytes } from './activity';

export interface JournalForm {
  keepDays: string;
  keepMb: string;
}

export function toJournalForm(s: JournalSettings): JournalForm {
  return { keepDays: String(s.keepDays), keepMb: String(s.keepMb) };
}

const LABELS: Record<keyof JournalForm, [string, string]> = {
  keepDays: ['Keep calls for', 'days'],
  keepMb: ['Keep the journal under', 'MB'],
};

/** The largest number settings.json can hold for either (a u32). */
const MAX = 4_294_967_295;

export type JournalParsed =
  { ok: true; limits: JournalSettings } | { ok: false; field: keyof JournalForm; error: string };

/** The form as `JournalSettings`: whole numbers of at least 1. */
export function fromJournalForm(f: JournalForm): JournalParsed {
  const limits = { keepDays: 0, keepMb: 0 };
  for (const field of ['keepDays', 'keepMb'] as const) {
    const [label, unit] = LABELS[field];
    const text = f[field].trim();
    const n = Number(text);
    if (text === '' || !Number.isFinite(n))
      return { ok: false, field, error: `${label}: "${text}" is not a number of ${unit}` };
    if (!Number.isInteger(n) || n < 1 || n > MAX)
      return {
        ok: false,
        field,
        error: `${label}: give a whole number of ${unit}, 1 or more ("${text}" is not)`,
      };
    limits[field] = n;
  }
  return { ok: true, limits };
}

/** "1,234 calls, 2.1 MiB on disk". */
export function journalFigures(s: JournalStatus): string {
  const calls =
    s.entries === null
      ? 'calls not counted'
      : `${s.entries.toLocaleString('en-US')} call${s.entries === 1 ? '' : 's'}`;
  return `${calls}, ${formatBytes(s.bytes)} on disk`;
}
