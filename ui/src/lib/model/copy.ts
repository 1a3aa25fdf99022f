// "Copy to…", "Move to…" and "Rename" of a server's detail: which files a
// server can go to, and what the app says once it went there.

import type { CopyPlan, SourceInfo } from '../types';

export type CopyMode = 'copy' | 'move';

/**
 * The files a server defined in `from` can be copied or moved to: every
 * writable one of another client or level, user files first, then trusted
 * projects, in priority order (a file that does not exist yet is created).
 */
export function copyTargets(sources: SourceInfo[], from: string): SourceInfo[] {
  const rank = (s: SourceInfo) => (s.level === 'user' ? 0 : s.level === 'project' ? 1 : 2);
  return sources
    .filter((s) => s.id !== from && !s.readOnly && s.level !== 'managed' && s.client !== 'fallback')
    .sort((a, b) => rank(a) - rank(b) || a.priority - b.priority);
}

/** How a target reads in the list: "Claude Desktop · user" or "Claude Code · project webapp". */
export function targetLabel(s: SourceInfo): string {
  const where =
    s.level === 'project' && s.project ? `project ${s.project.split(/[\\/]/).pop()}` : s.level;
  return `${s.clientName} · ${where}`;
}

/** Why the confirm button is off, or null when the plan can be written. */
export function planBlocker(plan: CopyPlan | null, name: string): string | null {
  if (!plan) return 'Choose where it goes.';
  if (plan.refusal) return plan.refusal;
  if (plan.nameTaken)
    return `${plan.client}'s file already has a server named "${name}": rename one of them first.`;
  return null;
}

/** What the app says after a copy or move, with the restart the target client needs. */
export function copyDoneText(mode: CopyMode, name: string, plan: CopyPlan): string {
  const did = mode === 'move' ? 'Moved' : 'Copied';
  const base = `${did} "${name}" to ${plan.client} (${plan.path}).`;
  return plan.restartHint
    ? `${base} ${plan.restartHint} to use "${name}".`
    : `${base} ${plan.client} picks it up by itself.`;
}

/** What the app says after a rename in `source`. */
export function renameDoneText(from: string, to: string, source: SourceInfo | undefined): string {
  const base = `Renamed "${from}" to "${to}".`;
  return source?.restartHint ? `${base} ${source.restartHint} to use the new name.` : base;
}
