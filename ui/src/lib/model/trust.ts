// How a file caught mid-save and a held project server read in the UI: the
// parse error with what is used instead, and what changed since a folder was
// trusted.

import type { ParseError, ServerView, SourceInfo, TrustChange } from '../types';

/** `14:05`, with the date in front when it is not today. */
export function clock(ms: number, now: number = Date.now()): string {
  const d = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, '0');
  const time = `${pad(d.getHours())}:${pad(d.getMinutes())}`;
  return new Date(now).toDateString() === d.toDateString()
    ? time
    : `${d.toLocaleDateString()} ${time}`;
}

/** What runs while a source's file does not parse. */
export function lastGoodText(e: ParseError, now?: number): string {
  return e.lastGoodAt !== undefined
    ? `Using the last good version from ${clock(e.lastGoodAt, now)}: its servers keep running.`
    : 'No last good version: the file has not parsed since Switchboard started, so none of its servers run until it does.';
}

/** The parse error without the file it names (for where the file is shown already). */
export function parseReason(s: SourceInfo): string {
  const m = s.parseError?.message ?? '';
  return m.startsWith(s.path)
    ? m
        .slice(s.path.length)
        .replace(/^:\d+:\s*/, '')
        .replace(/^:\s*/, '')
    : m;
}

/** A source's warnings without the one its parse error already shows. */
export function otherWarnings(s: SourceInfo): string[] {
  const e = s.parseError;
  return e ? s.warnings.filter((w) => !w.startsWith(e.message)) : s.warnings;
}

/** Sources whose file does not parse right now. */
export function brokenSources(sources: SourceInfo[]): SourceInfo[] {
  return sources.filter((s) => s.parseError);
}

/** `args: -y server → -y server --evil`; a value that was not there reads `(none)`. */
export function changeText(c: TrustChange): string {
  return `${c.field}: ${c.before ?? '(none)'} → ${c.after ?? '(none)'}`;
}

/** The project folder whose approval a held server waits for. */
export function heldFolder(server: ServerView, sources: SourceInfo[]): string | undefined {
  if (!server.held) return undefined;
  return sources.find((s) => s.id === server.source)?.project;
}
