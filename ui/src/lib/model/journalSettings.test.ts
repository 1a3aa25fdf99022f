import { describe, expect, it } from 'vitest';
import { fromJournalForm, journalFigures, toJournalForm } from './journalSettings';

describe('journal settings form', () => {
  it('round-trips the saved limits', () => {
    const form = toJournalForm({ keepDays: 30, keepMb: 200 });
    expect(form).toEqual({ keepDays: '30', keepMb: '200' });
    expect(fromJournalForm(form)).toEqual({ ok: true, limits: { keepDays: 30, keepMb: 200 } });
  });

  it('trims what was typed', () => {
    expect(fromJournalForm({ keepDays: ' 7 ', keepMb: '50' })).toEqual({
      ok: true,
      limits: { keepDays: 7, keepMb: 50 },
    });
  });

  it('refuses zero, fractions, words and empty fields, naming the field', () => {
    expect(fromJournalForm({ keepDays: '0', keepMb: '200' })).toEqual({
      ok: false,
      field: 'keepDays',
      error: 'Keep calls for: give a whole number of days, 1 or more ("0" is not)',
    });
    expect(fromJournalForm({ keepDays: '30', keepMb: '1.5' })).toMatchObject({
      ok: false,
      field: 'keepMb',
    });
    expect(fromJournalForm({ keepDays: 'ten', keepMb: '200' })).toEqual({
      ok: false,
      field: 'keepDays',
      error: 'Keep calls for: "ten" is not a number of days',
    });
    expect(fromJournalForm({ keepDays: '30', keepMb: '' })).toMatchObject({
      ok: false,
      field: 'keepMb',
      error: 'Keep the journal under: "" is not a number of MB',
    });
    expect(fromJournalForm({ keepDays: '-3', keepMb: '200' })).toMatchObject({ ok: false });
    expect(fromJournalForm({ keepDays: '5000000000', keepMb: '200' })).toMatchObject({
      ok: false,
    });
  });

  it('says how many calls and how much disk', () => {
    const base = {
      limits: { keepDays: 30, keepMb: 200 },
      path: '/x/journal.db',
      stats: null,
    };
    expect(journalFigures({ ...base, entries: 1234, bytes: 2048 })).toBe(
      '1,234 calls, 2.0 KiB on disk',
    );
    expect(journalFigures({ ...base, entries: 1, bytes: 10 })).toBe('1 call, 10 B on disk');
    expect(journalFigures({ ...base, entries: null, bytes: 0 })).toBe(
      'calls not counted, 0 B on disk',
    );
  });
});
