import { describe, expect, it } from 'vitest';
import { BOTH_ERROR, emptyForm, fromDef, nameError, parseQuickAdd, splitCommandLine, toDef, TOKEN_ERROR, validateForm } from './serverForm';
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

  it('moves sources for the priority list', () => {
    expect(moveItem(['a', 'b', 'c'], 2, 0)).toEqual(['c', 'a', 'b']);
    expect(moveItem(['a', 'b', 'c'], 0, 5)).toEqual(['a', 'b', 'c']);
  });
});
