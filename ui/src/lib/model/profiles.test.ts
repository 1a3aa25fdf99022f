import { describe, expect, it } from 'vitest';
import {
  activeProfile,
  applyLines,
  applyTitle,
  biggestText,
  clientProfileText,
  exportFileName,
  formatTokens,
  importActionText,
  importHeadline,
  importReportLines,
  parseBudget,
  pickProfile,
  profileSummary,
  profileToolNames,
  secretValues,
  secretsByKind,
  serverChoices,
  tokensBy,
  tokensText,
  toolSwitches,
} from './profiles';
import type {
  ApplyReport,
  ClientCost,
  ImportPreview,
  ProfileServerView,
  ProfileView,
  SecretToEnter,
  ToolCost,
} from '../types';

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

describe('clients', () => {
  const client = (extra: Partial<ClientCost> = {}): ClientCost => ({
    client: 'cursor',
    label: 'Cursor',
    servers: [['alpha', 499]],
    tokens: 499,
    tokenizer: 'o200k_base',
    budget: 20000,
    ...extra,
  });

  it('says which profile a client follows, and how', () => {
    expect(clientProfileText(client())).toBe('No profile applied');
    expect(clientProfileText(client({ profile: 'Focus', via: 'file' }))).toBe(
      'Follows Focus, in its own file',
    );
    expect(clientProfileText(client({ profile: 'Focus', via: 'gateway' }))).toBe(
      'Follows Focus, through the gateway',
    );
  });

  it('takes a budget as a whole number of tokens above 0 (commas allowed)', () => {
    expect(parseBudget(' 12,000 ')).toEqual({ tokens: 12000 });
    expect(parseBudget('1')).toEqual({ tokens: 1 });
    for (const bad of ['', '0', '-5', '1.5', 'lots', '99999999999999999999'])
      expect(parseBudget(bad), bad).toHaveProperty('error');
  });
});

describe('sharing', () => {
  const secret = (name: string, kind: SecretToEnter['kind'], set = false): SecretToEnter => ({
    server: 'github',
    field: 'env.TOKEN',
    reference: kind === 'keychain' ? `\${keychain:${name}}` : `\${${name}}`,
    kind,
    name,
    set,
  });
  const preview = (extra: Partial<ImportPreview> = {}): ImportPreview => ({
    profile: 'Focus',
    profileExists: false,
    profileServers: [{ name: 'alpha' }],
    file: '/home/me/.config/switchboard/servers.json',
    servers: [
      {
        name: 'alpha',
        action: 'add',
        def: { name: 'alpha', transport: 'stdio', command: 'alpha-mcp', enabled: true },
      },
    ],
    conflicts: [],
    missingRuntimes: [],
    secrets: [],
    writes: true,
    ...extra,
  });

  it('suggests a file named after the profile', () => {
    expect(exportFileName('Focus')).toBe('Focus.switchboard-profile.json');
  });

  it('names what happens to each server', () => {
    expect(importActionText('add')).toMatch(/Added to Switchboard's own file/);
    expect(importActionText('reuse')).toMatch(/same definition is here/);
    expect(importActionText('replace')).toMatch(/document's definition/);
    expect(importActionText('conflict')).toMatch(/nothing is written/);
  });

  it('sends only the secrets asked for and typed, never the variables', () => {
    const secrets = [
      secret('github.TOKEN', 'keychain'),
      secret('GITHUB_TOKEN', 'variable'),
      secret('github.oauth.clientSecret', 'oauthAppSecret'),
    ];
    expect(secretsByKind(secrets).enter.map((s) => s.name)).toEqual([
      'github.TOKEN',
      'github.oauth.clientSecret',
    ]);
    expect(secretsByKind(secrets).variables.map((s) => s.name)).toEqual(['GITHUB_TOKEN']);
    expect(
      secretValues(secrets, {
        'github.TOKEN': 'ghp_x',
        GITHUB_TOKEN: 'not sent',
        'github.oauth.clientSecret': '',
        other: 'not asked for',
      }),
    ).toEqual({ 'github.TOKEN': 'ghp_x' });
  });

  it('heads the preview with the profile it makes, or why none', () => {
    expect(importHeadline(preview())).toBe('Makes the profile Focus with 1 server.');
    expect(importHeadline(preview({ profileExists: true }))).toBe(
      'The profile Focus is here already, with the same 1 server.',
    );
    expect(importHeadline(preview({ profile: undefined }))).toBe(
      'Its 1 server join Everything here; no profile is made.',
    );
  });

  it('reports what was written, kept and is still to enter', () => {
    const p = preview({ secrets: [secret('github.TOKEN', 'keychain'), secret('X', 'variable')] });
    expect(
      importReportLines({
        preview: p,
        historyId: 12,
        kept: ['github.TOKEN'],
        toEnter: [secret('X', 'variable')],
      }),
    ).toEqual([
      'Imported the profile Focus (change #12).',
      'Written to /home/me/.config/switchboard/servers.json: alpha',
      'Kept in the OS keychain: github.TOKEN',
      'Environment variables to set where Switchboard starts: X',
    ]);
    expect(
      importReportLines({
        preview: preview({ writes: false, servers: [] }),
        kept: [],
        toEnter: [secret('github.TOKEN', 'keychain'), secret('SET', 'variable', true)],
      }),
    ).toEqual([
      'Nothing to write: all of it is here already.',
      'Still to enter (import the file again): github.TOKEN',
    ]);
  });
});
