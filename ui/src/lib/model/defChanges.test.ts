import { describe, expect, it } from 'vitest';
import { defOf, describeChange, fieldChanges, rebase } from './defChanges';
import type { ServerDef, ServerView } from '../types';

const base: ServerDef = {
  name: 'notes',
  transport: 'stdio',
  command: 'python',
  args: ['-m', 'notes'],
  env: { TOKEN: 's3cret-value', LOG: 'info' },
  enabled: true,
  timeout: 60000,
};

describe('definition changes', () => {
  it('lists the fields that differ, in the form order', () => {
    const after = { ...base, timeout: 120000, args: ['-m', 'notes', '--ro'], cwd: '/srv' };
    expect(fieldChanges(base, after).map((c) => c.field)).toEqual(['args', 'cwd', 'timeout']);
    expect(fieldChanges(base, { ...base, env: { LOG: 'info', TOKEN: 's3cret-value' } })).toEqual(
      [],
    );
  });

  it('says what changed in the file without showing env or header values', () => {
    const [args] = fieldChanges(base, { ...base, args: ['-m', 'other'] });
    expect(describeChange(args)).toBe(
      'args changed in the file: ["-m", "notes"] → ["-m", "other"]',
    );
    const [env] = fieldChanges(base, { ...base, env: { TOKEN: 'n3w-secret', DEBUG: '1' } });
    const text = describeChange(env);
    expect(text).toBe('env changed in the file: TOKEN changed, DEBUG added, LOG removed');
    expect(text).not.toContain('secret');
    const [cwd] = fieldChanges(base, { ...base, cwd: '/srv' });
    expect(describeChange(cwd)).toBe('cwd changed in the file: not set → "/srv"');
  });

  it("puts the user's edit on top of the new version: both changes survive", () => {
    const mine = { ...base, timeout: 5000 };
    const theirs = { ...base, args: ['-m', 'notes', '--ro'] };
    expect(rebase(mine, base, theirs)).toEqual({
      ...base,
      args: ['-m', 'notes', '--ro'],
      timeout: 5000,
    });
    // The same field changed on both sides: the user chose to save theirs over it.
    expect(rebase({ ...base, args: ['x'] }, base, theirs).args).toEqual(['x']);
    // A field the user cleared stays cleared.
    const cleared: ServerDef = { ...base };
    delete cleared.timeout;
    expect(rebase(cleared, base, theirs).timeout).toBeUndefined();
  });

  it('takes the definition out of a server view, keeping fields the UI does not know', () => {
    const view = {
      ...base,
      source: 'cline',
      path: '/x.json',
      errors: [],
      warnings: [],
      shadowed: [],
      runtime: undefined,
      envFile: '.env',
    } as ServerView;
    expect(defOf(view)).toEqual({ ...base, envFile: '.env' });
  });
});
