// The Activity view's filters, time ranges and figures: what the call
// journal is asked for and how its entries read.

import type { Entry, Filter, Finding, Kind, Outcome } from '../types';

export type RangeId = '1h' | '24h' | '7d' | '30d';

export const RANGES: readonly { id: RangeId; label: string; ms: number }[] = [
  { id: '1h', label: 'Last hour', ms: 3_600_000 },
  { id: '24h', label: 'Last 24 hours', ms: 86_400_000 },
  { id: '7d', label: 'Last 7 days', ms: 7 * 86_400_000 },
  { id: '30d', label: 'Last 30 days', ms: 30 * 86_400_000 },
];

/** What the filter bar holds; empty strings mean "any". */
export interface FilterForm {
  server: string;
  client: string;
  tool: string;
  /** Tools, resources or prompts ('' any). */
  kind: '' | Kind;
  outcome: '' | 'errors' | Outcome;
  findings: boolean;
  range: RangeId;
  search: string;
}

export const EMPTY_FORM: FilterForm = {
  server: '',
  client: '',
  tool: '',
  kind: '',
  outcome: '',
  findings: false,
  range: '24h',
  search: '',
};

/** The journal's filter for the form at `now` (ms). */
export function toFilter(form: FilterForm, now: number): Filter {
  const range = RANGES.find((r) => r.id === form.range) ?? RANGES[1];
  const text = (s: string) => (s.trim() === '' ? null : s.trim());
  const outcome = form.outcome;
  return {
    client: text(form.client),
    server: text(form.server),
    name: text(form.tool),
    kind: form.kind === '' ? null : form.kind,
    outcomes: outcome === '' || outcome === 'errors' ? [] : [outcome],
    errors: outcome === 'errors',
    findings: form.findings,
    since: now - range.ms,
    until: null,
    search: text(form.search),
    beforeId: null,
    afterId: null,
    limit: null,
  };
}

/** `µs` as people read a call's duration. */
export function formatDuration(us: number): string {
  if (us < 1000) return `${us} µs`;
  if (us < 1_000_000) return `${(us / 1000).toFixed(us < 10_000 ? 1 : 0)} ms`;
  return `${(us / 1_000_000).toFixed(us < 10_000_000 ? 2 : 1)} s`;
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/** The local time of day, with the date when it is not today. */
export function formatWhen(ms: number, now = Date.now()): string {
  const d = new Date(ms);
  const time = d.toLocaleTimeString(undefined, { hour12: false });
  return new Date(now).toDateString() === d.toDateString()
    ? time
    : `${d.toLocaleDateString(undefined, { month: 'short', day: 'numeric' })} ${time}`;
}

/**
 * Whether a warning is the checks' on an answer (noted or refused; the
 * engine's `tool_trust::results::warning` ends it so): the app then shows
 * it with a way to its call in Activity.
 */
export function checkedAnswer(message: string): boolean {
  return /^An answer of ".*" from ".*" was .*; see Activity\.$/s.test(message);
}

/** What an entry is a call of, as the filter and the detail name it. */
export const KIND_LABEL: Record<Kind, string> = {
  tool: 'Tool call',
  resource: 'Resource read',
  prompt: 'Prompt',
};

/** Where a finding is in the answer, in words ("" when about all of it). */
export function findingWhere(f: Finding): string {
  return f.at ? `in ${f.at}` : '';
}

/** The worst severity among an entry's findings: what its mark shows. */
export function worstSeverity(findings: Finding[]): 'high' | 'medium' | 'low' | null {
  for (const s of ['high', 'medium', 'low'] as const)
    if (findings.some((f) => f.severity === s)) return s;
  return null;
}

export const OUTCOME_LABEL: Record<Outcome, string> = {
  ok: 'ok',
  toolError: 'tool error',
  protocolError: 'failed',
  timeout: 'timeout',
};

/**
 * What a call's outcome chip says: "blocked" when Switchboard's checks on
 * what comes back refused the answer (the client got an error), else the
 * outcome.
 */
export function outcomeLabel(e: Pick<Entry, 'outcome' | 'errorClass'>): string {
  return e.errorClass === 'blocked' ? 'blocked' : OUTCOME_LABEL[e.outcome];
}

/**
 * Newer entries (oldest first, as `afterId` pages come) put in front of the
 * list (newest first), skipping any it has, keeping at most `max`.
 */
export function prependNewer(list: Entry[], newer: Entry[], max: number): Entry[] {
  const top = list[0]?.id ?? 0;
  const fresh = newer.filter((e) => e.id > top).reverse();
  if (fresh.length === 0) return list;
  const all = fresh.concat(list);
  return all.length > max ? all.slice(0, max) : all;
}

/** JSON text pretty-printed when it parses (a cut one does not: shown as stored). */
export function pretty(text: string): string {
  if (text === '') return '';
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}
