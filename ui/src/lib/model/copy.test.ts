import { describe, expect, it } from 'vitest';
import { copyDoneText, copyTargets, planBlocker, renameDoneText, targetLabel } from './copy';
import type { CopyPlan, SourceInfo } from '../types';

const src = (id: string, extra: Partial<SourceInfo> = {}): SourceInfo => ({
  id,
  client: 'cursor',
  clientName: id,
  level: 'user',
  path: `/${id}`,
  format: 'json',
  exists: true,
  readOnly: false,
  priority: 0,
  serverCount: 0,
  warnings: [],
  fields: [],
  ...extra,
});

const plan = (extra: Partial<CopyPlan> = {}): CopyPlan => ({
  to: 'claude-desktop',
  client: 'Claude Desktop',
  path: '/c.json',
  createsFile: false,
  entry: '{}',
  nameTaken: false,
  ...extra,
});

describe('copy, move, rename', () => {
  it('offers every writable file but its own: users first, then projects; never managed or read-only ones', () => {
    const list = [
      src('proj', { level: 'project', project: '/home/me/webapp', priority: 0 }),
      src('cursor-user', { priority: 3 }),
      src('claude-desktop', { priority: 1 }),
      src('managed', { level: 'managed' }),
      src('ro', { readOnly: true }),
    ];
    expect(copyTargets(list, 'cursor-user').map((s) => s.id)).toEqual(['claude-desktop', 'proj']);
    expect(targetLabel(list[0]!)).toBe('proj · project webapp');
  });

  it('says why it cannot be written', () => {
    expect(planBlocker(null, 'gh')).toBe('Choose where it goes.');
    expect(planBlocker(plan({ refusal: 'Codex CLI cannot hold "old": …' }), 'old')).toContain(
      'cannot hold',
    );
    expect(planBlocker(plan({ nameTaken: true }), 'gh')).toContain(
      'already has a server named "gh"',
    );
    expect(planBlocker(plan(), 'gh')).toBeNull();
  });

  it('names the restart a client needs, or says it needs none', () => {
    const hint =
      'Claude Desktop reads its config only when it starts: quit it completely and open it again';
    expect(copyDoneText('copy', 'gh', plan({ restartHint: hint }))).toBe(
      `Copied "gh" to Claude Desktop (/c.json). ${hint} to use "gh".`,
    );
    expect(copyDoneText('move', 'gh', plan({ client: 'Cursor' }))).toBe(
      'Moved "gh" to Cursor (/c.json). Cursor picks it up by itself.',
    );
    expect(
      renameDoneText(
        'a',
        'b',
        src('x', { restartHint: 'Codex reads its config when it starts: start a new session' }),
      ),
    ).toBe(
      'Renamed "a" to "b". Codex reads its config when it starts: start a new session to use the new name.',
    );
  });
});
