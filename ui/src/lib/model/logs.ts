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
