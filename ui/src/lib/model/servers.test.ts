import { describe, expect, it } from 'vitest';
import {
  filterServers,
  maskValue,
  NO_FILTER,
  promoteExplanation,
  sourceLabel,
  writableSources,
} from './servers';
import { serverStatus } from './status';
import type { ServerView, SourceInfo } from '../types';

const src = (id: string, clientName: string, level: 'user' | 'project'): SourceInfo => ({
  id,
  client: 'cursor',
  clientName,
  level,
  path: `/${id}`,
  format: 'json',
  exists: true,
  readOnly: false,
  priority: 0,
  serverCount: 1,
  warnings: [],
  fields: [],
});
const sources = [
  src('cursor-user', 'Cursor', 'user'),
  src('claude-desktop', 'Claude Desktop', 'user'),
];

const sv = (name: string, extra: Partial<ServerView> = {}): ServerView => ({
  name,
  transport: 'stdio',
  command: 'npx',
  args: ['-y', `${name}-pkg`],
  enabled: true,
  source: 'cursor-user',
  path: '/x',
  errors: [],
  warnings: [],
  shadowed: [],
  ...extra,
});

describe('servers', () => {
  const list = [
    sv('github', {
      runtime: {
        name: 'github',
        status: { state: 'connected' },
        transport: 'stdio',
        toolCount: 3,
        deferred: false,
        warnings: [],
        restarts: 0,
      },
    }),
    sv('broken', { errors: ['Invalid server config: missing command'] }),
    sv('remote', {
      transport: 'http',
      command: undefined,
      url: 'https://mcp.sentry.dev/mcp',
      source: 'claude-desktop',
      enabled: false,
    }),
  ];

  it('filters by search text over name, command, args and URL', () => {
    expect(filterServers(list, { ...NO_FILTER, query: 'sentry' }).map((s) => s.name)).toEqual([
      'remote',
    ]);
    expect(filterServers(list, { ...NO_FILTER, query: 'GITHUB-pkg' }).map((s) => s.name)).toEqual([
      'github',
    ]);
  });

  it('filters by status kind and by source', () => {
    expect(filterServers(list, { ...NO_FILTER, status: 'invalid' }).map((s) => s.name)).toEqual([
      'broken',
    ]);
    expect(filterServers(list, { ...NO_FILTER, status: 'disabled' }).map((s) => s.name)).toEqual([
      'remote',
    ]);
    expect(
      filterServers(list, { ...NO_FILTER, source: 'claude-desktop' }).map((s) => s.name),
    ).toEqual(['remote']);
  });

  it('labels statuses, including restarting n/m', () => {
    const r = sv('r', {
      runtime: {
        name: 'r',
        status: { state: 'restarting', attempt: 2, of: 5 },
        transport: 'stdio',
        toolCount: 0,
        deferred: false,
        warnings: [],
        restarts: 2,
      },
    });
    expect(serverStatus(r).label).toBe('restarting 2/5');
    expect(serverStatus(list[1])).toMatchObject({
      kind: 'invalid',
      detail: 'Invalid server config: missing command',
    });
  });

  it('shows a held project server as waiting for approval, with why', () => {
    const reason =
      'Claude Code has not approved it for this project (it asks when the project is opened); approve it here or in Claude Code to run it';
    const pending = sv('pending', { held: { kind: 'not-approved', reason } });
    expect(serverStatus(pending)).toEqual({ kind: 'held', label: 'not approved', detail: reason });
    const changed = sv('changed', {
      held: {
        kind: 'changed',
        reason: 'changed since you trusted this folder; approve the change to run it',
        changes: [],
      },
    });
    expect(serverStatus(changed)).toMatchObject({ kind: 'held', label: 'changed' });
    expect(
      filterServers([...list, pending, changed], { ...NO_FILTER, status: 'held' }).map(
        (s) => s.name,
      ),
    ).toEqual(['pending', 'changed']);
  });

  it('names sources by client and level and explains promotion', () => {
    expect(sourceLabel('cursor-user', sources)).toBe('Cursor · user');
    expect(promoteExplanation('claude-desktop', 'cursor-user', sources)).toBe(
      'Moves Claude Desktop · user above Cursor · user in the priority list.',
    );
  });

  it('masks secrets but not variable references', () => {
    expect(maskValue('sk-live-1234567890')).not.toContain('sk');
    expect(maskValue('${GITHUB_TOKEN}')).toBe('${GITHUB_TOKEN}');
  });
});

describe('a diagnosed failure', () => {
  const diagnosis = {
    class: 'command-not-found' as const,
    summary: 'npx not found — install Node.js',
    detail: '"npx" was not found: it comes with Node.js. Install Node.js 20 or newer…',
    error: 'command "npx" was not found on PATH',
  };
  const rt = (state: 'failed' | 'restarting' | 'connected') => ({
    name: 'fs',
    status:
      state === 'failed'
        ? { state, error: diagnosis.error }
        : state === 'restarting'
          ? { state, attempt: 1, of: 5 }
          : { state },
    transport: 'stdio' as const,
    toolCount: 0,
    deferred: false,
    warnings: [],
    restarts: 0,
    diagnosis,
  });

  it('reads in plain words in the row, with the whole explanation behind it', () => {
    const st = serverStatus(sv('fs', { runtime: rt('failed') as ServerView['runtime'] }));
    expect(st).toMatchObject({
      kind: 'failed',
      detail: diagnosis.summary,
      explain: diagnosis.detail,
    });
    expect(
      serverStatus(sv('fs', { runtime: rt('restarting') as ServerView['runtime'] })).detail,
    ).toBe(diagnosis.summary);
  });

  it('is not shown once the server is connected', () => {
    expect(
      serverStatus(sv('fs', { runtime: rt('connected') as ServerView['runtime'] })).detail,
    ).toBeNull();
  });
});

describe('writableSources', () => {
  it('offers the Team list only for a server already in it', () => {
    const team: SourceInfo = { ...src('team', 'Team', 'user'), client: 'team' };
    const managed: SourceInfo = { ...src('m', 'Claude Code', 'user'), readOnly: true };
    const all = [...sources, team, managed];
    expect(writableSources(all).map((s) => s.id)).toEqual(['cursor-user', 'claude-desktop']);
    expect(writableSources(all, 'team').map((s) => s.id)).toEqual([
      'cursor-user',
      'claude-desktop',
      'team',
    ]);
  });
});
