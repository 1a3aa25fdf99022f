// Sign in (issue 7): a remote server that needs OAuth shows
// "needs auth" and a Sign in button; clicking it starts the flow (the page
// would open in the system browser — here the test is the browser: it
// follows the authorization redirect back to the app's 127.0.0.1 listener);
// the server then connects with its tools. Sign out takes it back.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import readline from 'node:readline';
import { startApp, gotoView, byTestId, waitForStatus, screenshot, screenshotDark, eventually, E2E } from './lib/app.mjs';

let app;
let oauth;
let mcpUrl;

/** Starts oauth-server and resolves with the URL of its protected /mcp. */
function startOAuthServer() {
  oauth = spawn(E2E.oauthServer, ['--addr', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('oauth-server did not print LISTENING within 10 s')), 10_000);
    readline.createInterface({ input: oauth.stdout }).once('line', (line) => {
      clearTimeout(timer);
      const m = /^LISTENING (\S+)/.exec(line);
      m ? resolve(m[1]) : reject(new Error(`unexpected oauth-server output: ${line}`));
    });
    oauth.once('exit', (code) => reject(new Error(`oauth-server exited (${code})`)));
  });
}

async function stats() {
  return (await fetch(new URL('/_control/stats', mcpUrl))).json();
}

before(async () => {
  mcpUrl = await startOAuthServer();
  app = await startApp('sign-in', { extraServers: { secure: { type: 'http', url: mcpUrl } } });
});
after(async () => {
  if (app) await app.close();
  oauth?.kill();
});

test('a server that needs OAuth shows Sign in; the browser round trip connects it', async () => {
  const b = app.browser;
  await gotoView(b, 'servers');
  await waitForStatus(b, 'secure', 'needs-auth', { timeout: 30_000 });
  await waitForStatus(b, 'alpha', 'connected', { timeout: 30_000 });
  await screenshot(b, 'sign-in-needed');

  await (await byTestId(b, 'sign-in-secure')).click();
  // The app shows the link it sent to the browser (for users whose browser did not open).
  const field = await byTestId(b, 'sign-in-url-secure', { timeout: 15_000 });
  const authUrl = await field.getValue();
  assert.match(authUrl, /\/authorize\?/, `an authorization URL: ${authUrl}`);
  const u = new URL(authUrl);
  assert.equal(u.searchParams.get('code_challenge_method'), 'S256', 'PKCE S256');
  assert.ok(u.searchParams.get('state'), 'a state parameter');
  assert.match(u.searchParams.get('redirect_uri') ?? '', /^http:\/\/127\.0\.0\.1:\d+\/callback$/, 'redirect to a 127.0.0.1 listener');
  await screenshot(b, 'sign-in-waiting');
  await screenshotDark(b, 'sign-in-waiting-dark');

  // The browser: the authorization server approves and redirects to the app.
  const approve = await fetch(authUrl, { redirect: 'manual' });
  assert.equal(approve.status, 302, `the authorization server redirects: ${approve.status}`);
  const back = await fetch(approve.headers.get('location'));
  const page = await back.text();
  assert.equal(back.status, 200, page);
  assert.match(page, /You can close this tab/);

  await waitForStatus(b, 'secure', 'connected', { timeout: 30_000 });
  await eventually(b, async () => !(await b.$('[data-testid="sign-in-waiting-secure"]').isExisting()), 'the waiting banner goes away');
  const s = await stats();
  assert.equal(s.code_exchanges, 1, `one code exchange: ${JSON.stringify(s)}`);
  assert.ok(s.mcp_requests_authorized > 0, 'the MCP server saw authorized requests');
  await screenshot(b, 'sign-in-done');
});

test('after a restart the app connects with the saved sign-in, no browser step', async () => {
  const before = await stats();
  await app.close();
  // A new app process on a fresh copy of the fixture home: the sign-in lives
  // only in the keychain (this run's private Secret Service), not in a file.
  app = await startApp('sign-in-restart', { extraServers: { secure: { type: 'http', url: mcpUrl } } });
  const b = app.browser;
  await gotoView(b, 'servers');
  await waitForStatus(b, 'secure', 'connected', { timeout: 30_000 });
  const after = await stats();
  assert.equal(after.authorizations, before.authorizations, 'no new authorization (no browser step)');
  assert.equal(after.registrations, before.registrations, 'no new client registration');
  assert.ok(!(await b.$('[data-testid="sign-in-secure"]').isExisting()), 'no Sign in button');
});

test('the server detail says where the tokens are; signing out needs auth again', async () => {
  const b = app.browser;
  await gotoView(b, 'servers');
  await (await byTestId(b, 'server-row-secure')).click();
  const state = await byTestId(b, 'sign-in-state-secure', { timeout: 10_000 });
  await eventually(b, async () => (await state.getAttribute('data-signed-in')) === 'true', 'the detail shows the server as signed in');
  assert.match(await state.getText(), /Secret Service/, 'names the keychain');
  await screenshot(b, 'sign-in-detail');
  await (await byTestId(b, 'sign-out-secure')).click();
  await waitForStatus(b, 'secure', 'needs-auth', { timeout: 30_000 });
  await eventually(b, async () => (await (await byTestId(b, 'sign-in-state-secure')).getAttribute('data-signed-in')) === 'false', 'signed out');
});
