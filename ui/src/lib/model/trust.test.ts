import { describe, expect, it } from 'vitest';
import {
  brokenSources,
  changeText,
  clock,
  heldFolder,
  lastGoodText,
  otherWarnings,
  parseReason,
} from './trust';
import type { ServerView, SourceInfo } from '../types';

const at = (h: number, m: number, day = 30) => new Date(2026, 10, day, h, m).getTime();

const source = (extra: Partial<SourceInfo> = {}): SourceInfo => ({
  id: 'cursor-user',
  client: 'cursor',
  clientName: 'Cursor',
  level: 'user',
  path: '/home/me/.cursor/mcp.json',
  format: 'json',
  exists: true,
  readOnly: false,
  priority: 0,
  serverCount: 2,
  warnings: [],
  fields: [],
  ...extra,
});

const broken = {
  message:
    '/home/me/.cursor/mcp.json:3: cannot parse: Unexpected token in object (line 3, column 26)',
  line: 3,
  column: 26,
};

describe('a file caught mid-save', () => {
  it('says since when the last good version runs, or that there is none', () => {
    expect(lastGoodText({ ...broken, lastGoodAt: at(14, 5) }, at(15, 0))).toBe(
      'Using the last good version from 14:05: its servers keep running.',
    );
    expect(clock(at(9, 7), at(10, 0))).toBe('09:07');
    expect(clock(at(9, 7, 29), at(10, 0))).toMatch(/ 09:07$/);
    expect(clock(at(9, 7, 29), at(10, 0))).not.toBe('09:07');
    expect(lastGoodText(broken)).toBe(
      'No last good version: the file has not parsed since Switchboard started, so none of its servers run until it does.',
    );
  });

  it('shows the parse error once, without repeating the file where it is shown', () => {
    const s = source({
      parseError: broken,
      warnings: [
        `${broken.message}; its servers keep running from the last good version`,
        'another warning',
      ],
    });
    expect(otherWarnings(s)).toEqual(['another warning']);
    expect(otherWarnings(source({ warnings: ['w'] }))).toEqual(['w']);
    expect(brokenSources([source(), s]).map((x) => x.parseError)).toEqual([broken]);
    expect(parseReason(s)).toBe('cannot parse: Unexpected token in object (line 3, column 26)');
  });
});

describe('a held project server', () => {
  it('shows each difference and the folder to approve it in', () => {
    expect(changeText({ field: 'args', before: '-y server', after: '-y server --evil' })).toBe(
      'args: -y server → -y server --evil',
    );
    expect(changeText({ field: 'env.NEW', after: 'set' })).toBe('env.NEW: (none) → set');
    const project = source({ id: 'cursor-project@/w', level: 'project', project: '/w' });
    const server = {
      name: 'p',
      transport: 'stdio',
      enabled: true,
      source: 'cursor-project@/w',
      path: '/w/.cursor/mcp.json',
      errors: [],
      warnings: [],
      shadowed: [],
      held: {
        kind: 'changed',
        reason: 'changed since you trusted this folder; approve the change to run it',
        changes: [],
      },
    } as ServerView;
    expect(heldFolder(server, [project])).toBe('/w');
    expect(heldFolder({ ...server, held: undefined }, [project])).toBeUndefined();
  });
});
