// Tools you can trust: what the review says about each tool, in the words
// the Tools view and the server detail show (pure; see approvals.test.ts).

import type {
  ApprovalMode,
  Finding,
  ItemReview,
  ServerReview,
  Severity,
  TrustReport,
} from '../types';

const rank: Record<Severity, number> = { low: 1, medium: 2, high: 3 };

/** The review of one tool (server and raw tool name), if the report has it. */
export function toolReview(
  report: TrustReport | null,
  server: string,
  tool: string,
): ItemReview | undefined {
  return report?.servers
    .find((s) => s.server === server)
    ?.items.find((i) => i.kind === 'tool' && i.name === tool);
}

export function serverReview(report: TrustReport | null, server: string): ServerReview | undefined {
  return report?.servers.find((s) => s.server === server);
}

/** The most severe of `findings`, or null. */
export function worst(findings: Finding[]): Severity | null {
  let w: Severity | null = null;
  for (const f of findings) if (!w || rank[f.severity] > rank[w]) w = f.severity;
  return w;
}

/** Badge text: "1 high finding", "3 findings". */
export function findingsLabel(findings: Finding[]): string {
  const w = worst(findings);
  if (!w) return '';
  if (findings.length === 1) return `${w} finding`;
  return `${findings.length} findings`;
}

/** A one-line state for a tool: why it is held, or what to look at. */
export function pinSentence(r: ItemReview): string {
  const high = r.findings.some((f) => f.severity === 'high');
  if (r.pin === 'changed')
    return r.held
      ? 'Changed since you approved it: held from the gateway until you approve the new definition.'
      : 'Changed since you approved it (this server is set to warn only: the gateway still offers it).';
  if (r.pin === 'new') {
    if (r.held && high)
      return 'Never approved, and the checker found something high-risk: held from the gateway until you approve it.';
    if (r.held) return 'Never approved: held from the gateway (this server holds new tools too).';
    return 'Never approved: the gateway offers it; approve it to be told when it changes.';
  }
  return high ? 'Approved as it is, though the checker flags it.' : 'Approved as it is.';
}

/** Counts for a server: changed, new, held items. */
export function counts(s: ServerReview | undefined): {
  changed: number;
  fresh: number;
  held: number;
} {
  const items = s?.items ?? [];
  return {
    changed: items.filter((i) => i.pin === 'changed').length,
    fresh: items.filter((i) => i.pin === 'new').length,
    held: items.filter((i) => i.held).length,
  };
}

export const modes: { value: ApprovalMode; label: string; help: string }[] = [
  {
    value: 'hold-changed',
    label: 'Hold changed tools',
    help: 'The gateway leaves out tools that changed since you approved them, and unapproved tools with a high-risk finding (the default).',
  },
  {
    value: 'hold-new',
    label: 'Hold new tools too',
    help: 'Also every tool you have not approved yet.',
  },
  {
    value: 'warn',
    label: 'Warn only',
    help: 'Nothing is held; changes and findings are only shown.',
  },
];

/** Where a finding is, in words: "in the description", "in inputSchema…". */
export function findingPlace(f: Finding): string {
  if (!f.at) return 'about the whole server';
  return `in ${f.at}`;
}
