import { describe, expect, it } from 'vitest';
import { counts, findingsLabel, pinSentence, toolReview, worst } from './approvals';
import type { ItemReview, TrustReport } from '../types';

const item = (over: Partial<ItemReview>): ItemReview => ({
  kind: 'tool',
  name: 'echo',
  pin: 'approved',
  held: false,
  findings: [],
  ...over,
});
const high = {
  rule: 'hidden-tag-characters',
  severity: 'high' as const,
  message: 'Hidden text…',
  at: 'description',
  visible: 'a⟦hidden: b⟧',
};
const low = { rule: 'long-description', severity: 'low' as const, message: 'Long' };

describe('approvals model', () => {
  it('finds a tool by server and raw name, not a prompt of the same name', () => {
    const report: TrustReport = {
      servers: [
        {
          server: 'fx',
          mode: 'hold-changed',
          known: true,
          removed: [],
          findings: [],
          items: [item({ kind: 'prompt', name: 'echo' }), item({ pin: 'changed' })],
        },
      ],
    };
    expect(toolReview(report, 'fx', 'echo')?.pin).toBe('changed');
    expect(toolReview(report, 'other', 'echo')).toBeUndefined();
    expect(toolReview(null, 'fx', 'echo')).toBeUndefined();
  });

  it('labels findings by their worst severity', () => {
    expect(worst([low, high])).toBe('high');
    expect(worst([])).toBeNull();
    expect(findingsLabel([high])).toBe('high finding');
    expect(findingsLabel([low, high])).toBe('2 findings');
    expect(findingsLabel([])).toBe('');
  });

  it('says why a tool is held', () => {
    expect(pinSentence(item({ pin: 'changed', held: true }))).toMatch(
      /held from the gateway until you approve/,
    );
    expect(pinSentence(item({ pin: 'changed', held: false }))).toMatch(/warn only/);
    expect(pinSentence(item({ pin: 'new', held: true, findings: [high] }))).toMatch(/high-risk/);
    expect(pinSentence(item({ pin: 'new', held: false }))).toMatch(/gateway offers it/);
  });

  it('counts changed, new and held items', () => {
    const s = {
      server: 'fx',
      mode: 'hold-changed' as const,
      known: true,
      removed: [],
      findings: [],
      items: [item({ pin: 'changed', held: true }), item({ pin: 'new' }), item({})],
    };
    expect(counts(s)).toEqual({ changed: 1, fresh: 1, held: 1 });
    expect(counts(undefined)).toEqual({ changed: 0, fresh: 0, held: 0 });
  });
});
