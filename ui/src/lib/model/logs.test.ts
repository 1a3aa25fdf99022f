import { describe, expect, it } from 'vitest';
import { appendBounded, appendNew, lineKey } from './logs';
import type { LogLine } from '../types';

const line = (seq: number, text = `line ${seq}`): LogLine => ({
  seq,
  at: 1_000,
  kind: 'stderr',
  text,
});
const many = (from: number, n: number) => Array.from({ length: n }, (_, i) => line(from + i));

describe('appendNew', () => {
  it('leaves out lines a loaded list already has, and keeps new ones said in the same millisecond', () => {
    // The list loaded while the event with lines 8–11 was on its way: 8 and 9 are in both.
    const lines = appendNew(many(0, 10), [line(8), line(9), line(10, 'same'), line(11, 'same')]);
    expect(lines.map((l) => l.seq)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
  });

  it('keeps the newest 2,000', () => {
    const lines = appendNew(many(0, 1990), many(1990, 20));
    expect(lines.length).toBe(2000);
    expect(lines[0].seq).toBe(10);
    expect(lines.at(-1)?.seq).toBe(2009);
  });
});

describe('lineKey', () => {
  it('keeps the key of every line in view when the oldest lines are dropped', () => {
    const lines = appendBounded([], many(0, 2000));
    const inView = lines.slice(-40);
    const before = inView.map(lineKey);
    appendNew(lines, [line(2000)]);
    expect(lines[0].seq).toBe(1);
    expect(lines.slice(-41, -1).map(lineKey)).toEqual(before);
    expect(new Set(lines.map(lineKey)).size).toBe(2000);
  });
});
