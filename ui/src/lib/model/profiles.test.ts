import { describe, expect, it } from 'vitest';
import {
  activeProfile,
  applyLines,
  applyTitle,
  biggestText,
  formatTokens,
  pickProfile,
  profileSummary,
  profileToolNames,
  serverChoices,
  tokensBy,
  tokensText,
  toolSwitches,
} from './profiles';
import type { ApplyReport, ProfileServerView, ProfileView, ToolCost } from '../types';

const cost = (server: string, tool: string, tokens: number): ToolCost => ({
  name: `mcp_${server}_${tool}`,
  server,
  tool,
  tokens,
});

const server = (name: string, tools: ToolCost[], leftOut: ToolCost[] = []): ProfileServerView => ({
  name,
  missing: false,
  tools,
  leftOut,
  tokens: tools.reduce((n, t) => n + t.tokens, 0),
});

const profile = (name: string, servers: ProfileServerView[], extra: Partial<ProfileView> = {}) =>
  ({
    name,
    builtIn: false,
    active: false,
    servers,
    tokens: servers.reduce((n, s) => n + s.tokens, 0),
    tokenizer: 'o200k_base',
    usedBy: [],
    ...extra,
  }) satisfies ProfileView;

const everything = profile(
  'Everything',
  [server('alpha', [cost('alpha', 'echo', 40), cost('alpha', 'add', 60)])],
  { builtIn: true },
);

describe('token figures', () => {
  it('always name the tokenizer, with grouped digits', () => {
    expect(formatTokens(1234567)).toBe('1,234,567');
    expect(tokensText(12345, 'o200k_base')).toBe('12,345 tokens · o200k_base');
    expect(tokensText(1, 'o200k_base')).toBe('1 token · o200k_base');
  });

  it('add up per tool and per server', () => {
    const costs = [cost('a', 'x', 5), cost('a', 'y', 7), cost('b', 'x', 1)];
    expect(tokensBy(costs, 'server')).toEqual(
      new Map([
        ['a', 12],
        ['b', 1],
      ]),
    );
    expect(tokensBy(costs, 'name').get('mcp_a_y')).toBe(7);
  });
});

describe('the active profile', () => {
  it('is the one marked active, else Everything', () => {
    const writing = profile('Writing', [], { active: true });
    expect(activeProfile([{ ...everything }, writing])?.name).toBe('Writing');
    expect(activeProfile([everything, profile('Writing', [])])?.name).toBe('Everything');
    expect(activeProfile([])).toBeUndefined();
  });

  it('lets through exactly the tools its servers keep, and says how many and what they cost', () => {
    const p = profile('Focus', [
      server('alpha', [cost('alpha', 'echo', 40)], [cost('alpha', 'add', 60)]),
    ]);
    expect([...profileToolNames(p)]).toEqual(['mcp_alpha_echo']);
    expect(profileSummary(p)).toEqual({
      name: 'Focus',
      builtIn: false,
      tools: 1,
      tokens: 40,
      tokenizer: 'o200k_base',
    });
    expect(profileSummary(everything).tools).toBe(2);
  });
});

describe('servers offered to a profile', () => {
  it('lists every known server, checked when in the profile, then the missing ones (never hidden)', () => {
    const p = profile('Focus', [server('beta', []), { ...server('gone', []), missing: true }]);
    expect(serverChoices(p, ['alpha', 'beta'])).toEqual([
      { name: 'alpha', inProfile: false, missing: false },
      { name: 'beta', inProfile: true, missing: false },
      { name: 'gone', inProfile: true, missing: true },
    ]);
  });

  it('shows a server\u2019s tools on and off together, by raw name', () => {
    const s = server('alpha', [cost('alpha', 'echo', 40)], [cost('alpha', 'add', 60)]);
    expect(toolSwitches(s)).toEqual([
      { name: 'mcp_alpha_add', tool: 'add', tokens: 60, on: false },
      { name: 'mcp_alpha_echo', tool: 'echo', tokens: 40, on: true },
    ]);
  });
});

describe('over budget', () => {
  it('names the biggest contributors, largest first, with their tokens', () => {
    expect(
      biggestText({
        budget: 20000,
        biggest: [
          ['github', 12000],
          ['linear', 8500],
        ],
        toolSearchTokens: 450,
      }),
    ).toBe('github 12,000 · linear 8,500');
  });
});

describe('which profile the view shows', () => {
  const list = [everything, profile('Writing', [], { active: true })];

  it('is the one in the address, matched as the engine matches names', () => {
    expect(pickProfile(list, 'writing')?.name).toBe('Writing');
    expect(pickProfile(list, 'Everything')?.name).toBe('Everything');
  });

  it('is the active one when none or an unknown one is asked for (a deleted profile)', () => {
    expect(pickProfile(list, null)?.name).toBe('Writing');
    expect(pickProfile(list, 'Gone')?.name).toBe('Writing');
  });
});

describe('what applying a profile to a client did', () => {
  const report = (extra: Partial<ApplyReport> = {}): ApplyReport => ({
    client: 'cursor',
    label: 'Cursor',
    profile: 'Focus',
    via: 'file',
    source: 'cursor-user',
    path: '/home/u/.cursor/mcp.json',
    enabled: [],
    disabled: [],
    added: [],
    removed: [],
    notes: [],
    ...extra,
  });

  it('says what was switched on, off, added and taken out, then the notes', () => {
    const r = report({
      enabled: ['alpha'],
      disabled: ['github', 'linear'],
      added: ['beta'],
      notes: ['"x" is left out: its file is read-only'],
    });
    expect(applyTitle(r)).toBe('Focus in Cursor, in its own file');
    expect(applyLines(r)).toEqual([
      'Switched on: alpha',
      'Switched off: github, linear',
      'Added: beta',
      '"x" is left out: its file is read-only',
    ]);
  });

  it('says so when the file already held exactly the profile', () => {
    const r = report({ via: 'gateway' });
    expect(applyTitle(r)).toBe('Focus in Cursor, through the gateway');
    expect(applyLines(r)).toEqual([
      'Nothing to change: the file already holds exactly these servers.',
    ]);
  });
});
