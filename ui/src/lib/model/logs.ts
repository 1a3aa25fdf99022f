// Log lines kept in memory: bounded per server, searchable.

import type { LogLine } from '../types';

export const MAX_LINES = 2000;

/** Appends and drops the oldest lines beyond `max`, in place. */
export function appendBounded(lines: LogLine[], added: LogLine[], max = MAX_LINES): LogLine[] {
  // A batch may be larger than the bound: only its newest lines are kept.
  lines.push(...(added.length > max ? added.slice(added.length - max) : added));
  if (lines.length > max) lines.splice(0, lines.length - max);
  return lines;
}

/**
 * Appends the lines the buffer does not have yet, bounded. A line reaches the
 * page twice when a server's log is loaded while the event carrying its last
 * lines is on its way; the engine numbers every line (`seq`, only growing),
 * so a line numbered at or below the buffer's last one is already there.
 */
export function appendNew(lines: LogLine[], added: LogLine[], max = MAX_LINES): LogLine[] {
  const last = lines.at(-1)?.seq ?? -1;
  const fresh = added.length && added[0].seq > last ? added : added.filter((l) => l.seq > last);
  return appendBounded(lines, fresh, max);
}

/**
 * A log row's key: the line's number. A key made from the line's place
 * would change for every row in view with each new line once the buffer is
 * full (the oldest go), and all of them would be drawn again.
 */
export const lineKey = (line: LogLine): string => String(line.seq);

export function filterLines(lines: LogLine[], query: string): LogLine[] {
  const q = query.trim().toLowerCase();
  if (!q) return lines;
  return lines.filter((l) => l.text.toLowerCase().includes(q) || l.kind.toLowerCase().includes(q));
}

export function formatTime(ms: number): string {
  const d = new Date(ms);
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}
