// How the History view words and filters the engine's history entries.

import type { DiffLine, HistoryEntry } from '../types';

const pad = (n: number) => String(n).padStart(2, '0');
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `Today 14:05`, `Yesterday 09:12`, `3 Mar 14:05`, `3 Mar 2024 14:05` (local time). */
export function formatWhen(at: number, now: number = Date.now()): string {
  const d = new Date(at);
  const time = `${pad(d.getHours())}:${pad(d.getMinutes())}`;
  const day = (x: Date) => new Date(x.getFullYear(), x.getMonth(), x.getDate()).getTime();
  const today = day(new Date(now));
  if (day(d) === today) return `Today ${time}`;
  const yesterday = new Date(now);
  yesterday.setDate(yesterday.getDate() - 1);
  if (day(d) === day(yesterday)) return `Yesterday ${time}`;
  const year = d.getFullYear() === new Date(now).getFullYear() ? '' : ` ${d.getFullYear()}`;
  return `${d.getDate()} ${MONTHS[d.getMonth()]}${year} ${time}`;
}

/** What the entry's state means for its Undo button, if anything. */
export function stateNote(e: HistoryEntry): string | null {
  if (e.state === 'undone') return 'Undone';
  if (e.state === 'changed') return 'File changed since';
  return null;
}

/** `+2 −1`: lines added and removed across the entry's files. */
export function lineCounts(e: HistoryEntry): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const f of e.files) {
    for (const l of f.diff) {
      if (l.kind === 'added') added++;
      else if (l.kind === 'removed') removed++;
    }
  }
  return { added, removed };
}

/** The sign column of a diff line. */
export function sign(l: DiffLine): string {
  return l.kind === 'added' ? '+' : l.kind === 'removed' ? '−' : l.kind === 'skipped' ? '⋯' : ' ';
}

/** Entries whose summary, server or file path contain every word of `query`. */
export function filterEntries(entries: HistoryEntry[], query: string): HistoryEntry[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (!words.length) return entries;
  return entries.filter((e) => {
    const hay = [e.summary, e.server ?? '', ...e.files.map((f) => f.path), `#${e.id}`]
      .join('\n')
      .toLowerCase();
    return words.every((w) => hay.includes(w));
  });
}
