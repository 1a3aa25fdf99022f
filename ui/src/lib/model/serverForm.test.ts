import { describe, expect, it } from 'vitest';
import { BOTH_ERROR, emptyForm, fromDef, nameError, parseQuickAdd, splitCommandLine, startFrom, toDef, TOKEN_ERROR, validateForm } from './serverForm';
import type { ServerDef } from '../types';
import { moveItem } from './sources';

describe('server form', () => {
  it('validates names like the engine (C3)', () => {
    expect(nameError('my-server_1.0')).toBeNull();
    expect(nameError('')).toMatch(/required/);
    expect(nameError('a'.repeat(101))).toMatch(/100/);
    expect(nameError('has space')).toMatch(/" " is not allowed/);
  });

  it('refuses both a URL and a command, and names duplicates', () => {
    const f = { ...emptyForm(), name: 'x', command: 'npx', url: 'https://a.dev/mcp' };
    expect(validateForm(f).url).toBe(BOTH_ERROR);
    expect(validateForm({ ...f, url: '' }, ['x']).name).toMatch(/already exists/);
    expect(validateForm({ ...f, transport: 'http', command: '', url: 'ftp://x' }).url).toMatch(/absolute http/);
  });

  it('splits command lines like a shell', () => {
    expect(splitCommandLine(`npx -y "@scope/pkg" 'a b' c\\ d ""`)).toEqual(['npx', '-y', '@scope/pkg', 'a b', 'c d', '']);
  });

  it('quick-adds a command line with env and a suggested name', () => {
    const r = parseQuickAdd('GITHUB_TOKEN=abc npx -y @modelcontextprotocol/server-github --verbose');
    expect('form' in r).toBe(true);
    if (!('form' in r)) return;
    expect(r.form).toMatchObject({ name: 'github', transport: 'stdio', command: 'npx', args: '-y\n@modelcontextprotocol/server-github\n--verbose' });
    expect(r.form.env).toEqual([{ key: 'GITHUB_TOKEN', value: 'abc' }]);
    const uv = parseQuickAdd('uvx mcp-server-fetch');
    expect('form' in uv && uv.form.name).toBe('fetch');
  });

  it('quick-adds a URL with a token, SSE by path, and refuses the mixes', () => {
    const r = parseQuickAdd('https://mcp.sentry.dev/sse --token s3cret');
    if (!('form' in r)) throw new Error(r.error);
    expect(r.form).toMatchObject({ name: 'sentry', transport: 'sse', url: 'https://mcp.sentry.dev/sse' });
    expect(r.form.headers).toEqual([{ key: 'Authorization', value: 'Bearer s3cret' }]);
    expect(parseQuickAdd('https://a.dev/mcp npx foo')).toEqual({ error: BOTH_ERROR });
    expect(parseQuickAdd('--token abc npx foo')).toEqual({ error: TOKEN_ERROR });
    expect(parseQuickAdd('  ')).toHaveProperty('error');
  });

  it('round-trips a definition through the form', () => {
    const def = { name: 'n', transport: 'stdio' as const, command: 'node', args: ['a b', 'c'], env: { K: 'v' }, enabled: false, timeout: 5000 };
    expect(toDef(fromDef(def))).toEqual(def);
  });

  // A Cline entry as the engine reads it: fields the form shows, and fields it
  // does not (auth, restartPolicy, a field newer than this UI).
  const cline = (): ServerDef =>
    ({
      name: 'notes',
      transport: 'stdio',
      command: 'python',
      args: ['-m', 'mcp_server_notes', ''],
      cwd: '/home/me/notes',
      env: { NOTES_DIR: '/home/me/notes' },
      enabled: true,
      timeout: 120000,
      autoApprove: ['list_notes', 'search_notes'],
      auth: { type: 'oauth', credentialId: 'notes' },
      restartPolicy: { initialDelayMs: 1, maxDelayMs: 2, backoffMultiplier: 2, maxRestartAttempts: 3 },
      envFile: '.env',
    }) as ServerDef;

  it('an edit changes only the field the user changed and keeps every other field', () => {
    const start = startFrom(cline());
    const f = fromDef(cline());
    f.args = '-m\nmcp_server_notes\n--verbose';
    const def = toDef(f, start);
    expect(def).toEqual({ ...cline(), args: ['-m', 'mcp_server_notes', '--verbose'] });
  });

  it('an untouched form gives back the definition it was opened with, byte for byte', () => {
    // The empty argument would be lost by rebuilding args from the textarea.
    expect(toDef(fromDef(cline()), startFrom(cline()))).toEqual(cline());
  });

  it('clearing a field removes it; cwd, timeout and auto-approve are edited like the rest', () => {
    const f = fromDef(cline());
    f.cwd = '';
    f.timeout = '30000';
    f.autoApprove = 'list_notes\n  read_note \n';
    const def = toDef(f, startFrom(cline()));
    expect(def.cwd).toBeUndefined();
    expect(def.timeout).toBe(30000);
    expect(def.autoApprove).toEqual(['list_notes', 'read_note']);
    expect(def.auth).toEqual(cline().auth);
  });

  it('never writes a field the client cannot store', () => {
    const f = fromDef(cline());
    f.timeout = '5000';
    f.cwd = '/tmp';
    const def = toDef(f, startFrom(cline()), ['command', 'args', 'env', 'cwd']);
    expect(def.timeout).toBe(120000);
    expect(def.cwd).toBe('/tmp');
    expect(validateForm({ ...f, timeout: 'soon' }, [], ['command']).timeout).toBeUndefined();
    expect(validateForm({ ...f, timeout: 'soon' }).timeout).toMatch(/Milliseconds/);
  });

  it('switching a command to a URL drops the command fields and keeps the rest', () => {
    const f = fromDef(cline());
    f.transport = 'http';
    f.url = 'https://notes.example.com/mcp';
    const def = toDef(f, startFrom(cline()));
    expect(def).toMatchObject({ transport: 'http', url: 'https://notes.example.com/mcp', timeout: 120000, envFile: '.env' });
    for (const gone of ['command', 'args', 'env', 'cwd'] as const) expect(def[gone]).toBeUndefined();
  });

  it('moves sources for the priority list', () => {
    expect(moveItem(['a', 'b', 'c'], 2, 0)).toEqual(['c', 'a', 'b']);
    expect(moveItem(['a', 'b', 'c'], 0, 5)).toEqual(['a', 'b', 'c']);
  });
});
