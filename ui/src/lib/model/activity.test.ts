import { describe, expect, it } from 'vitest';
import type { Entry } from '../types';
import {
  EMPTY_FORM,
  formatBytes,
  formatDuration,
  prependNewer,
  pretty,
  toFilter,
  findingWhere,
  worstSeverity,
  checkedAnswer,
  outcomeLabel,
} from './activity';

const entry = (id: number): Entry => ({
  id,
  time: id * 1000,
  via: 'http',
  client: 'c',
  clientVersion: null,
  user: null,
  profile: null,
  server: 's',
  kind: 'tool',
  name: 't',
  arguments: '{}',
  argumentsCut: false,
  argumentsBytes: 2,
  result: '',
  resultCut: false,
  resultBytes: 0,
  durationUs: 5,
  outcome: 'ok',
  errorClass: null,
  error: null,
  findings: [],
});

describe('kinds and findings', () => {
  it("knows the checks' warnings", () => {
    expect(
      checkedAnswer(
        'An answer of "leak" from "tricky" was refused by the tool explorer\'s checks (known-secret); see Activity.',
      ),
    ).toBe(true);
    expect(checkedAnswer('Server "x" restarted 3 times')).toBe(false);
  });
  it('filters by kind', () => {
    expect(toFilter({ ...EMPTY_FORM, kind: 'resource' }, 0).kind).toBe('resource');
    expect(toFilter(EMPTY_FORM, 0).kind).toBeNull();
  });
  it('says where a finding is and which is worst', () => {
    const f = (severity: 'high' | 'medium' | 'low', at?: string) => ({
      rule: 'r',
      severity,
      message: 'm',
      at,
    });
    expect(findingWhere(f('low', 'content[0].text'))).toBe('in content[0].text');
    expect(findingWhere(f('low'))).toBe('');
    expect(worstSeverity([f('low'), f('high'), f('medium')])).toBe('high');
    expect(worstSeverity([f('low'), f('medium')])).toBe('medium');
    expect(worstSeverity([])).toBeNull();
  });
});

describe('toFilter', () => {
  it('narrows by what the form holds and the range', () => {
    const f = toFilter(
      { ...EMPTY_FORM, server: ' alpha ', range: '1h', outcome: 'errors' },
      10_000_000,
    );
    expect(f.server).toBe('alpha');
    expect(f.client).toBeNull();
    expect(f.errors).toBe(true);
    expect(f.outcomes).toEqual([]);
    expect(f.since).toBe(10_000_000 - 3_600_000);
  });
  it('names one outcome', () => {
    const f = toFilter({ ...EMPTY_FORM, outcome: 'timeout', findings: true, search: 'x' }, 0);
    expect(f.outcomes).toEqual(['timeout']);
    expect(f.errors).toBe(false);
    expect(f.findings).toBe(true);
    expect(f.search).toBe('x');
  });
});

describe('prependNewer', () => {
  it('puts newer entries first, once, bounded', () => {
    const list = [entry(3), entry(2)];
    expect(prependNewer(list, [entry(3), entry(4), entry(5)], 10).map((e) => e.id)).toEqual([
      5, 4, 3, 2,
    ]);
    expect(prependNewer(list, [entry(4), entry(5)], 3).map((e) => e.id)).toEqual([5, 4, 3]);
    expect(prependNewer(list, [], 3)).toBe(list);
  });
});

describe('formats', () => {
  it('reads durations and sizes', () => {
    expect(formatDuration(800)).toBe('800 µs');
    expect(formatDuration(2500)).toBe('2.5 ms');
    expect(formatDuration(250_000)).toBe('250 ms');
    expect(formatDuration(3_200_000)).toBe('3.20 s');
    expect(formatBytes(10)).toBe('10 B');
    expect(formatBytes(2048)).toBe('2.0 KiB');
  });
  it('pretty-prints JSON and leaves a cut text as stored', () => {
    expect(pretty('{"a":1}')).toBe('{\n  "a": 1\n}');
    expect(pretty('{"a":')).toBe('{"a":');
  });
});

describe('outcomeLabel', () => {
  it('says blocked when the checks refused the answer, else the outcome', () => {
    expect(outcomeLabel({ outcome: 'toolError', errorClass: 'blocked' })).toBe('blocked');
    expect(outcomeLabel({ outcome: 'protocolError', errorClass: 'blocked' })).toBe('blocked');
    expect(outcomeLabel({ outcome: 'toolError', errorClass: null })).toBe('tool error');
    expect(outcomeLabel({ outcome: 'timeout', errorClass: 'timeout' })).toBe('timeout');
  });
});
