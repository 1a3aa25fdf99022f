import { describe, expect, it } from 'vitest';
import {
  BOTH_ERROR,
  emptyForm,
  fromDef,
  hasOAuthApp,
  loopbackRedirect,
  nameError,
  oauthErrors,
  parsePort,
  parseQuickAdd,
  redirectFor,
  splitCommandLine,
  startFrom,
  toDef,
  TOKEN_ERROR,
  validateForm,
} from './serverForm';
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
    expect(validateForm({ ...f, transport: 'http', command: '', url: 'ftp://x' }).url).toMatch(
      /absolute http/,
    );
  });

  it('splits command lines like a shell', () => {
    expect(splitCommandLine(`npx -y "@scope/pkg" 'a b' c\\ d ""`)).toEqual([
      'npx',
      '-y',
      '@scope/pkg',
      'a b',
      'c d',
      '',
    ]);
  });

  it('quick-adds a command line with env and a suggested name', () => {
    const r = parseQuickAdd(
      'GITHUB_TOKEN=abc npx -y @modelcontextprotocol/server-github --verbose',
    );
    expect('form' in r).toBe(true);
    if (!('form' in r)) return;
    expect(r.form).toMatchObject({
      name: 'github',
      transport: 'stdio',
      command: 'npx',
      args: '-y\n@modelcontextprotocol/server-github\n--verbose',
    });
    expect(r.form.env).toEqual([{ key: 'GITHUB_TOKEN', value: 'abc' }]);
    const uv = parseQuickAdd('uvx mcp-server-fetch');
    expect('form' in uv && uv.form.name).toBe('fetch');
  });

  it('quick-adds a URL with a token, SSE by path, and refuses the mixes', () => {
    const r = parseQuickAdd('https://mcp.sentry.dev/sse --token s3cret');
    if (!('form' in r)) throw new Error(r.error);
    expect(r.form).toMatchObject({
      name: 'sentry',
      transport: 'sse',
      url: 'https://mcp.sentry.dev/sse',
    });
    expect(r.form.headers).toEqual([{ key: 'Authorization', value: 'Bearer s3cret' }]);
    expect(parseQuickAdd('https://a.dev/mcp npx foo')).toEqual({ error: BOTH_ERROR });
    expect(parseQuickAdd('--token abc npx foo')).toEqual({ error: TOKEN_ERROR });
    expect(parseQuickAdd('  ')).toHaveProperty('error');
  });

  it('round-trips a definition through the form', () => {
    const def = {
      name: 'n',
      transport: 'stdio' as const,
      command: 'node',
      args: ['a b', 'c'],
      env: { K: 'v' },
      enabled: false,
      timeout: 5000,
    };
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
      restartPolicy: {
        initialDelayMs: 1,
        maxDelayMs: 2,
        backoffMultiplier: 2,
        maxRestartAttempts: 3,
      },
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
    expect(def).toMatchObject({
      transport: 'http',
      url: 'https://notes.example.com/mcp',
      timeout: 120000,
      envFile: '.env',
    });
    for (const gone of ['command', 'args', 'env', 'cwd'] as const)
      expect(def[gone]).toBeUndefined();
  });

  it('moves sources for the priority list', () => {
    expect(moveItem(['a', 'b', 'c'], 2, 0)).toEqual(['c', 'a', 'b']);
    expect(moveItem(['a', 'b', 'c'], 0, 5)).toEqual(['a', 'b', 'c']);
  });
});

// A server as `claude mcp add --transport http --client-id ID --callback-port 8765 linear URL`
// writes it, read by the engine; the Gemini one has a secret written by hand.
const claudeApp = (): ServerDef => ({
  name: 'linear',
  transport: 'http',
  url: 'https://mcp.linear.app/mcp',
  enabled: true,
  oauth: { clientId: 'ID', callbackPort: 8765 },
});
const CLAUDE_FIELDS = [
  'command',
  'args',
  'env',
  'cwd',
  'url',
  'headers',
  'oauth',
  'oauth.clientId',
  'oauth.callbackPort',
  'oauth.scopes',
];

describe('the OAuth app section', () => {
  it('shows what the file has and gives it back untouched', () => {
    const f = fromDef(claudeApp());
    expect(f.oauth).toEqual({ clientId: 'ID', callbackPort: '8765', scopes: '', redirectUri: '' });
    expect(toDef(f, startFrom(claudeApp()), CLAUDE_FIELDS)).toEqual(claudeApp());
    expect(redirectFor(f.oauth)).toBe('http://localhost:8765/callback');
    expect(hasOAuthApp(f.oauth)).toBe(true);
    expect(hasOAuthApp(emptyForm().oauth)).toBe(false);
  });

  it('writes the members the user changed, scopes as a list, and removes an emptied app', () => {
    const f = fromDef(claudeApp());
    f.oauth.scopes = '  read   write ';
    f.oauth.callbackPort = '9000';
    expect(toDef(f, startFrom(claudeApp()), CLAUDE_FIELDS).oauth).toEqual({
      clientId: 'ID',
      callbackPort: 9000,
      scopes: ['read', 'write'],
    });
    const cleared = fromDef(claudeApp());
    cleared.oauth = { clientId: ' ', callbackPort: '', scopes: '', redirectUri: '' };
    expect(toDef(cleared, startFrom(claudeApp()), CLAUDE_FIELDS).oauth).toBeUndefined();
  });

  it('adds an app to a new remote server; never to a stdio one or a client without the field', () => {
    const f = {
      ...emptyForm(),
      name: 'r',
      transport: 'http' as const,
      url: 'https://r.example/mcp',
    };
    f.oauth.clientId = 'abc';
    f.oauth.callbackPort = '8765';
    expect(toDef(f).oauth).toEqual({ clientId: 'abc', callbackPort: 8765 });
    expect(toDef(f, undefined, ['url', 'headers']).oauth).toBeUndefined();
    expect(toDef({ ...f, transport: 'stdio', url: '', command: 'x' }).oauth).toBeUndefined();
  });

  it('keeps a secret written in the file by hand, and never takes one from the form', () => {
    const gemini: ServerDef = {
      name: 'g',
      transport: 'http',
      url: 'https://g.example/mcp',
      enabled: true,
      oauth: {
        clientId: 'gem',
        clientSecret: '${GEM_SECRET}',
        redirectUri: 'http://localhost:7777/oauth/callback',
      },
    };
    const f = fromDef(gemini);
    expect(JSON.stringify(f)).not.toContain('GEM_SECRET');
    f.oauth.scopes = 'a';
    expect(toDef(f, startFrom(gemini)).oauth).toEqual({
      clientId: 'gem',
      redirectUri: 'http://localhost:7777/oauth/callback',
      scopes: ['a'],
      clientSecret: '${GEM_SECRET}',
    });
    expect(toDef(fromDef(gemini), startFrom(gemini))).toEqual(gemini);
  });

  it('validates ports, redirect URIs, scopes and a secret without a client ID, with what to do', () => {
    const remote = (o: Partial<ReturnType<typeof emptyForm>['oauth']>, secret = '') =>
      validateForm(
        {
          ...emptyForm(),
          name: 'r',
          transport: 'http',
          url: 'https://r.example/mcp',
          oauth: { ...emptyForm().oauth, ...o },
        },
        [],
        undefined,
        secret,
      );
    expect(remote({ clientId: 'id', callbackPort: '8765', scopes: 'read write:all' })).toEqual({});
    for (const bad of ['0', '65536', '80a', '-1', '8.5'])
      expect(remote({ callbackPort: bad })['oauth.callbackPort']).toMatch(/from 1 to 65535/);
    expect(remote({ callbackPort: '65535' })).toEqual({});
    expect(remote({ clientId: 'has space' })['oauth.clientId']).toMatch(/no spaces/);
    expect(remote({ scopes: 'read,write' })['oauth.scopes']).toMatch(/spaces, not commas/);
    expect(remote({ scopes: 'read "x"' })['oauth.scopes']).toMatch(/“"x"” is not a scope/);
    expect(remote({ redirectUri: 'https://example.com/cb' })['oauth.redirectUri']).toMatch(
      /localhost:PORT/,
    );
    expect(remote({ redirectUri: 'http://localhost/cb' })['oauth.redirectUri']).toMatch(
      /localhost:PORT/,
    );
    expect(
      remote({ redirectUri: 'http://localhost:7777/oauth/callback', callbackPort: '8765' })[
        'oauth.callbackPort'
      ],
    ).toMatch(/uses port 7777/);
    expect(remote({}, 's3cret')['oauth.clientSecret']).toMatch(/enter the client ID too/);
    expect(remote({ clientId: 'id' }, 's3cret')).toEqual({});
    // Local servers have no OAuth app; a client without the field is not checked.
    expect(
      validateForm({
        ...emptyForm(),
        name: 'l',
        command: 'x',
        oauth: { ...emptyForm().oauth, callbackPort: '0' },
      }),
    ).toEqual({});
    expect(oauthErrors({ ...emptyForm().oauth, callbackPort: '0' }, ['url'])).toEqual({});
  });

  it('reads ports and loopback redirect URIs like the engine', () => {
    expect(parsePort(' 8765 ')).toBe(8765);
    expect(parsePort('')).toBeNull();
    expect(loopbackRedirect('http://127.0.0.1:9000/oauth/cb')).toEqual({
      port: 9000,
      path: '/oauth/cb',
    });
    expect(loopbackRedirect('http://[::1]:9000/')).toEqual({ port: 9000, path: '/' });
    expect(loopbackRedirect('http://example.com:9000/')).toBeNull();
    expect(loopbackRedirect('not a url')).toBeNull();
    expect(redirectFor({ clientId: '', callbackPort: '', scopes: '', redirectUri: '' })).toBeNull();
  });
});
