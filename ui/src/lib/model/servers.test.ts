import { describe, expect, it } from 'vitest';
import { filterServers, maskValue, NO_FILTER, promoteExplanation, sourceLabel } from './servers';
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
const sources = [src('cursor-user', 'Cursor', 'user'), src('claude-desktop', 'Claude Desktop', 'user')];

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
    sv('github', { runtime: { name: 'github', status: { state: 'connected' }, transport: 'stdio', toolCount: 3, deferred: false, warnings: [], restarts: 0 } }),
    sv('broken', { errors: ['Invalid server config: missing command'] }),
    sv('remote', { transport: 'http', command: undefined, url: 'https://mcp.sentry.dev/mcp', source: 'claude-desktop', enabled: false }),
  ];

  it('filters by search text over name, command, args and URL', () => {
    expect(filterServers(list, { ...NO_FILTER, query: 'sentry' }).map((s) => s.name)).toEqual(['remote']);
    expect(filterServers(list, { ...NO_FILTER, query: 'GITHUB-pkg' }).map((s) => s.name)).toEqual(['github']);
  });

  it('filters by status kind and by source', () => {
    expect(filterServers(list, { ...NO_FILTER, status: 'invalid' }).map((s) => s.name)).toEqual(['broken']);
    expect(filterServers(list, { ...NO_FILTER, status: 'disabled' }).map((s) => s.name)).toEqual(['remote']);
    expect(filterServers(list, { ...NO_FILTER, source: 'claude-desktop' }).map((s) => s.name)).toEqual(['remote']);
  });

  it('labels statuses, including restarting n/m', () => {
    const r = sv('r', { runtime: { name: 'r', status: { state: 'restarting', attempt: 2, of: 5 }, transport: 'stdio', toolCount: 0, deferred: false, warnings: [], restarts: 2 } });
    expect(serverStatus(r).label).toBe('restarting 2/5');
    expect(serverStatus(list[1])).toMatchObject({ kind: 'invalid', detail: 'Invalid server config: missing command' });
  });

  it('shows a held project server as waiting for approval, with why', () => {
    const reason = 'Claude Code has not approved it for this project (it asks when the project is opened); approve it here or in Claude Code to run it';
    const pending = sv('pending', { held: { kind: 'not-approved', reason } });
    expect(serverStatus(pending)).toEqual({ kind: 'held', label: 'not approved', detail: reason });
    const changed = sv('changed', { held: { kind: 'changed', reason: 'changed since you trusted this folder; approve the change to run it', changes: [] } });
    expect(serverStatus(changed)).toMatchObject({ kind: 'held', label: 'changed' });
    expect(filterServers([...list, pending, changed], { ...NO_FILTER, status: 'held' }).map((s) => s.name)).toEqual(['pending', 'changed']);
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
