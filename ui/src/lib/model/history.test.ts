import { describe, expect, it } from 'vitest';
import { filterEntries, formatWhen, lineCounts, sign, stateNote } from './history';
import type { HistoryEntry } from '../types';

const entry = (over: Partial<HistoryEntry> = {}): HistoryEntry => ({
  id: 7,
  at: 0,
  server: 'github',
  summary: 'update "github" in Cursor (args)',
  files: [
    {
      path: '/home/ada/.cursor/mcp.json',
      diff: [
        { kind: 'skipped', text: '4 unchanged lines' },
        { kind: 'removed', text: '"args": ["a"]', old: 5 },
        { kind: 'added', text: '"args": ["a", "b"]', new: 5 },
        { kind: 'same', text: '}', old: 6, new: 6 },
      ],
    },
  ],
  state: 'ready',
  ...over,
});

describe('formatWhen', () => {
  const now = new Date(2025, 2, 14, 18, 30).getTime();
  it('says today, yesterday, a date this year, or a date with its year', () => {
    expect(formatWhen(new Date(2025, 2, 14, 9, 5).getTime(), now)).toBe('Today 09:05');
    expect(formatWhen(new Date(2025, 2, 13, 23, 59).getTime(), now)).toBe('Yesterday 23:59');
    expect(formatWhen(new Date(2025, 0, 2, 7, 0).getTime(), now)).toBe('2 Jan 07:00');
    expect(formatWhen(new Date(2024, 11, 31, 12, 0).getTime(), now)).toBe('31 Dec 2024 12:00');
  });
});

describe('history entries', () => {
  it('name what undo can do', () => {
    expect(stateNote(entry())).toBeNull();
    expect(stateNote(entry({ state: 'changed' }))).toBe('File changed since');
    expect(stateNote(entry({ state: 'undone' }))).toBe('Undone');
  });

  it('count added and removed lines, and sign them', () => {
    expect(lineCounts(entry())).toEqual({ added: 1, removed: 1 });
    expect(entry().files[0].diff.map(sign)).toEqual(['⋯', '−', '+', ' ']);
  });

  it('filter by summary, server, file and id', () => {
    const list = [
      entry(),
      entry({ id: 8, server: 'notes', summary: 'disable "notes" in Cline', files: [] }),
    ];
    expect(filterEntries(list, '').length).toBe(2);
    expect(filterEntries(list, 'cursor args').map((e) => e.id)).toEqual([7]);
    expect(filterEntries(list, 'NOTES').map((e) => e.id)).toEqual([8]);
    expect(filterEntries(list, '#8').map((e) => e.id)).toEqual([8]);
    expect(filterEntries(list, '.cursor/mcp.json').map((e) => e.id)).toEqual([7]);
  });
});
