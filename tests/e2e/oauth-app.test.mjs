// Issue 17 in the app: a remote server whose provider wants an OAuth app
// registered in advance. `oauth-server` runs WITHOUT a registration endpoint
// and with one confidential client, `claude-app` (redirect URI
// http://localhost:PORT/callback, a secret). In the fixture home's
// ~/.claude.json, `prereg` is written the way
// `claude mcp add --transport http --client-id claude-app --callback-port PORT prereg URL`
// writes it, and `noapp` is the same server with no OAuth app.
//
// `noapp`'s sign-in says it needs an OAuth app and opens its Edit form at the
// OAuth app section. For `prereg` the user enters the secret in that section
// (it goes to the keychain, never to a file), signs in (the test is the
// browser), and the server connects with its tools. The Accounts view lists
// the sign-in; Sign out and Sign out everywhere (confirmed) end it.
//
// `scoped` answers every request 403 insufficient_scope (a server asking for
// more scopes): Sign in first shows the scopes and the server's reason.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { spawn } from 'node:child_process';
import readline from 'node:readline';
import { seriousViolations } from './lib/axe.mjs';
import { startApp, gotoView, byTestId, waitForStatus, screenshot, screenshotDark, eventually, clickUntil, fill, exists, E2E } from './lib/app.mjs';

let app;
let oauth;
let forbidding;
let mcpUrl;
let port;
const SECRET = `e2e-app-secret-${process.pid}-${Date.now()}`;

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const p = srv.address().port;
      srv.close(() => resolve(p));
    });
  });
}

/** Starts oauth-server with `args` and resolves with the URL of its protected /mcp. */
function startOAuthServer(args) {
  oauth = spawn(E2E.oauthServer, ['--addr', '127.0.0.1:0', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
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

/** Files under `dir` whose bytes contain `needle`. */
function filesContaining(dir, needle) {
  const hits = [];
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && fs.readFileSync(p).includes(needle)) hits.push(p);
    }
  };
  walk(dir);
  return hits;
}

/** The page's HTML and every input's value: where a secret would show up in the DOM. */
async function domText(b) {
  return b.execute(() => document.documentElement.outerHTML + '\n' + [...document.querySelectorAll('input, textarea')].map((i) => i.value).join('\n'));
}

/** The browser: the authorization server approves at once and redirects to the app's listener. */
async function approveInBrowser(authUrl) {
  const approve = await fetch(authUrl, { redirect: 'manual' });
  assert.equal(approve.status, 302, `the authorization server redirects: ${approve.status} ${await approve.text()}`);
  const back = await fetch(approve.headers.get('location'));
  const page = await back.text();
  assert.equal(back.status, 200, page);
  assert.match(page, /You can close this tab/);
}

const dialogOpen = (b) => b.$('[role="dialog"]').isExisting();

/** Scrolls the form so the whole OAuth app section is in view (for its screenshot). */
async function showSection(b) {
  await b.execute(() => {
    const section = document.querySelector('[data-testid="oauth-section"]');
    const body = section?.closest('.body');
    if (section && body) body.scrollTop += section.getBoundingClientRect().bottom - body.getBoundingClientRect().bottom + 8;
  });
}

/** Waits until no notice is shown (a success notice fades after 3.5 s; it sits over a dialog's footer). */
async function noticeGone(b) {
  await eventually(b, async () => !(await b.$('.toast').isExisting()), 'the notice fades', 8_000);
}

/** An MCP URL whose server answers everything 403 insufficient_scope. */
function startForbiddingServer() {
  forbidding = http.createServer((req, res) => {
    req.resume();
    res.writeHead(403, { 'WWW-Authenticate': 'Bearer error="insufficient_scope", scope="files:read files:write", error_description="Writing files needs files:write"' });
    res.end();
  });
  return new Promise((resolve) => forbidding.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${forbidding.address().port}/mcp`)));
}

before(async () => {
  port = await freePort();
  const scopedUrl = await startForbiddingServer();
  mcpUrl = await startOAuthServer(['--no-registration', '--client', `claude-app=http://localhost:${port}/callback`, '--client-secret', `claude-app=${SECRET}`]);
  app = await startApp('oauth-app', {
    prepare(fx) {
      const file = path.join(fx.home, '.claude.json');
      const claude = JSON.parse(fs.readFileSync(file, 'utf8'));
      // As `claude mcp add --transport http --client-id claude-app --callback-port PORT prereg URL` writes it.
      claude.mcpServers.prereg = { type: 'http', url: mcpUrl, oauth: { clientId: 'claude-app', callbackPort: port } };
      claude.mcpServers.noapp = { type: 'http', url: mcpUrl };
      claude.mcpServers.scoped = { type: 'http', url: scopedUrl };
      fs.writeFileSync(file, JSON.stringify(claude, null, 2) + '\n');
    },
  });
});
after(async () => {
  if (app) await app.close();
  oauth?.kill();
  forbidding?.close();
});

test('a sign-in at a server without registration says it needs an OAuth app and opens that section of the form', async () => {
  const b = app.browser;
  await gotoView(b, 'servers');
  await waitForStatus(b, 'noapp', 'needs-auth', { timeout: 30_000 });
  await clickUntil(b, await byTestId(b, 'sign-in-noapp'), () => exists(b, 'notice-action'), 'the sign-in failed with a notice that offers to set up the app');
  const notice = await (await byTestId(b, 'notice-action')).$('..');
  assert.match(await notice.getText(), /needs an OAuth app registered in advance/, 'the notice says why');
  assert.equal(await (await byTestId(b, 'notice-action')).getText(), 'Set up OAuth app');
  await screenshot(b, 'oauth-app-needed');

  await clickUntil(b, await byTestId(b, 'notice-action'), () => dialogOpen(b), 'the Edit form opens');
  const section = await byTestId(b, 'oauth-section');
  assert.equal(await section.getAttribute('open'), 'true', 'the OAuth app section is open');
  await eventually(b, () => b.execute(() => document.activeElement?.id === 'oauth-client-id'), 'the client ID field has the focus');
  await screenshot(b, 'oauth-app-form-empty');
  await b.keys('Escape');
  await eventually(b, async () => !(await dialogOpen(b)), 'Escape closes the form');
  // The detail of `noapp` keeps saying what is missing, with the same button.
  await byTestId(b, 'sign-in-needs-app-noapp');
});

test('the secret entered in the OAuth app section goes to the keychain; the sign-in with that app connects', async () => {
  const b = app.browser;
  await gotoView(b, 'servers');
  await waitForStatus(b, 'prereg', 'needs-auth', { timeout: 30_000 });
  await clickUntil(b, await byTestId(b, 'server-row-prereg'), () => exists(b, 'edit-server'), 'the detail of prereg opens');
  assert.equal(await (await byTestId(b, 'oauth-app-prereg')).getText(), `claude-app · redirect http://localhost:${port}/callback`, 'the detail shows the app');
  await clickUntil(b, await byTestId(b, 'edit-server'), () => dialogOpen(b), 'the Edit form opens');

  // What `claude mcp add` wrote, as the form shows it.
  const section = await byTestId(b, 'oauth-section');
  assert.equal(await section.getAttribute('open'), 'true', 'a server with an OAuth app shows the section open');
  assert.equal(await (await byTestId(b, 'oauth-client-id')).getValue(), 'claude-app');
  assert.equal(await (await byTestId(b, 'oauth-callback-port')).getValue(), String(port));
  assert.match(await (await byTestId(b, 'oauth-redirect')).getText(), new RegExp(`http://localhost:${port}/callback`));
  assert.equal(await (await byTestId(b, 'oauth-client-secret')).getAttribute('type'), 'password', 'the secret is typed into a password field');
  await fill(await byTestId(b, 'oauth-client-secret'), SECRET);
  await showSection(b);
  await screenshot(b, 'oauth-app-form');
  assert.deepEqual(await seriousViolations(b), [], 'the form with its OAuth app section passes axe');
  await clickUntil(b, await byTestId(b, 'add-save'), async () => !(await dialogOpen(b)), 'Save closes the form');
  assert.match(await (await b.$('.toast')).getText(), /client secret of “prereg” is kept in Secret Service/);
  await noticeGone(b);
  assert.deepEqual(filesContaining(app.fx.dir, SECRET), [], 'the secret is in no file of the fixture home (nor the app log)');
  assert.ok(!(await domText(b)).includes(SECRET), 'the secret is gone from the page once saved');

  // Opened again: the keychain has it, the form does not show it.
  await clickUntil(b, await byTestId(b, 'edit-server'), () => dialogOpen(b), 'the Edit form opens again');
  const stored = await byTestId(b, 'oauth-secret-stored', { timeout: 10_000 });
  assert.match(await stored.getText(), /Secret stored in Secret Service/);
  await byTestId(b, 'oauth-secret-replace');
  await showSection(b);
  await screenshot(b, 'oauth-app-secret-stored');
  assert.ok(!(await domText(b)).includes(SECRET), 'the stored secret is never sent to the page');
  await clickUntil(b, await byTestId(b, 'add-cancel'), async () => !(await dialogOpen(b)), 'Cancel closes the form');

  // Sign in with the pre-registered app: its client id and fixed redirect URI.
  await clickUntil(b, await byTestId(b, 'sign-in-detail-prereg'), () => exists(b, 'sign-in-url-prereg'), 'the sign-in starts');
  const authUrl = await (await byTestId(b, 'sign-in-url-prereg')).getValue();
  const u = new URL(authUrl);
  assert.equal(u.searchParams.get('client_id'), 'claude-app', authUrl);
  assert.equal(u.searchParams.get('redirect_uri'), `http://localhost:${port}/callback`, authUrl);
  await approveInBrowser(authUrl);
  await waitForStatus(b, 'prereg', 'connected', { timeout: 30_000 });
  await eventually(
    b,
    async () => (await b.execute(() => [...document.querySelectorAll('a[href^="#/tools/mcp_prereg_"]')].map((a) => a.textContent.trim()).sort().join(','))) === 'mcp_prereg_echo,mcp_prereg_whoami',
    'the detail lists its two tools',
    15_000,
  );
  const s = await stats();
  assert.equal(s.registrations, 0, `no registration: ${JSON.stringify(s)}`);
  assert.equal(s.code_exchanges, 1, `one code exchange with the client's secret: ${JSON.stringify(s)}`);
  assert.deepEqual(filesContaining(app.fx.dir, SECRET), [], 'still in no file after signing in');
  await screenshot(b, 'oauth-app-connected');
});

test('the Accounts view lists the sign-in, nothing secret; Sign out ends it', async () => {
  const b = app.browser;
  await gotoView(b, 'accounts');
  const row = await byTestId(b, 'account-prereg', { timeout: 10_000 });
  assert.equal(await (await byTestId(b, 'account-issuer-prereg')).getText(), new URL(mcpUrl).host);
  assert.equal(await (await byTestId(b, 'account-scopes-prereg')).getText(), 'mcp');
  assert.match(await (await byTestId(b, 'account-expires-prereg')).getText(), /^in (59|60) min$|^in 1 h$/);
  assert.equal(await (await byTestId(b, 'account-refresh-prereg')).getAttribute('data-refresh'), 'true');
  assert.equal(await (await byTestId(b, 'account-used-by-prereg')).getText(), 'prereg');
  assert.match(await row.getText(), /claude-app/, 'the client id is shown');
  assert.ok(!(await exists(b, 'account-noapp')), 'noapp has no sign-in');
  assert.ok(!(await domText(b)).includes(SECRET), 'no secret in the view');
  await screenshot(b, 'accounts-view');
  assert.deepEqual(await seriousViolations(b), [], 'the Accounts view passes axe');
  await screenshotDark(b, 'accounts-view-dark');

  await clickUntil(b, await byTestId(b, 'account-sign-out-prereg'), async () => !(await exists(b, 'account-prereg')), 'the sign-in leaves the list');
  await b.$('//h2[normalize-space()="No sign-ins yet"]').waitForExist({ timeout: 5_000 });
  await screenshot(b, 'accounts-empty');
  await gotoView(b, 'servers');
  await waitForStatus(b, 'prereg', 'needs-auth', { timeout: 30_000 });
});

test('Sign out everywhere asks first (Escape keeps everything), then signs out; the kept secret signs in again', async () => {
  const b = app.browser;
  // The secret outlived the sign-out: signing in again needs nothing more.
  await clickUntil(b, await byTestId(b, 'sign-in-prereg'), () => exists(b, 'sign-in-url-prereg'), 'the sign-in starts');
  await approveInBrowser(await (await byTestId(b, 'sign-in-url-prereg')).getValue());
  await waitForStatus(b, 'prereg', 'connected', { timeout: 30_000 });

  await gotoView(b, 'accounts');
  await byTestId(b, 'account-prereg', { timeout: 10_000 });
  await clickUntil(b, await byTestId(b, 'sign-out-everywhere'), () => exists(b, 'sign-out-everywhere-confirm'), 'the confirmation opens');
  assert.match(await (await byTestId(b, 'sign-out-everywhere-confirm')).getText(), /prereg/, 'it names what is signed out');
  await screenshot(b, 'accounts-sign-out-everywhere');
  assert.deepEqual(await seriousViolations(b), [], 'the confirmation passes axe');
  await eventually(b, () => b.execute(() => document.activeElement?.getAttribute('data-testid') === 'sign-out-everywhere-cancel'), 'focus starts on Cancel');
  await b.keys('Escape');
  await eventually(b, async () => !(await exists(b, 'sign-out-everywhere-confirm')), 'Escape cancels');
  assert.ok(await exists(b, 'account-prereg'), 'nothing was signed out');

  await clickUntil(b, await byTestId(b, 'sign-out-everywhere'), () => exists(b, 'sign-out-everywhere-confirm'), 'the confirmation opens again');
  await clickUntil(b, await byTestId(b, 'sign-out-everywhere-confirm-button'), async () => !(await exists(b, 'account-prereg')), 'every sign-in leaves the list');
  await gotoView(b, 'servers');
  await waitForStatus(b, 'prereg', 'needs-auth', { timeout: 30_000 });
});

test('a server that asks for more scopes: Sign in shows the scopes and its reason first; Escape cancels, Continue signs in', async () => {
  const b = app.browser;
  await gotoView(b, 'servers');
  await waitForStatus(b, 'scoped', 'needs-auth', { timeout: 30_000 });
  await clickUntil(b, await byTestId(b, 'sign-in-scoped'), () => exists(b, 'step-up-scoped'), 'the step-up dialog opens');
  const dialog = await byTestId(b, 'step-up-scoped');
  const text = await dialog.getText();
  assert.match(text, /files:read/);
  assert.match(text, /files:write/);
  assert.match(await (await byTestId(b, 'step-up-reason')).getText(), /Writing files needs files:write/);
  await eventually(b, () => b.execute(() => document.activeElement?.getAttribute('data-testid') === 'step-up-cancel'), 'focus starts on Cancel');
  await screenshot(b, 'step-up');
  assert.deepEqual(await seriousViolations(b), [], 'the step-up dialog passes axe');
  await b.keys('Escape');
  await eventually(b, async () => !(await exists(b, 'step-up-scoped')), 'Escape cancels');
  assert.ok(!(await exists(b, 'sign-in-waiting-scoped')), 'no sign-in started');

  await clickUntil(b, await byTestId(b, 'sign-in-scoped'), () => exists(b, 'step-up-scoped'), 'the step-up dialog opens again');
  await clickUntil(b, await byTestId(b, 'step-up-continue'), async () => !(await exists(b, 'step-up-scoped')), 'Continue closes the dialog');
  // This test server has no OAuth metadata: the sign-in that starts fails and says why.
  await eventually(b, async () => /scoped/.test((await b.$('.toast').isExisting()) ? await (await b.$('.toast')).getText() : ''), 'the sign-in ran and reported', 20_000);
  // An error stays until dismissed (it would sit over the next dialog's buttons).
  await clickUntil(b, await b.$('.toast button[aria-label="Dismiss"]'), async () => !(await b.$('.toast').isExisting()), 'the error is dismissed');
});

test('Remove secret takes the kept secret out of the keychain when the form is saved', async () => {
  const b = app.browser;
  await gotoView(b, 'servers');
  await clickUntil(b, await byTestId(b, 'server-row-prereg'), () => exists(b, 'edit-server'), 'the detail of prereg opens');
  await clickUntil(b, await byTestId(b, 'edit-server'), () => dialogOpen(b), 'the Edit form opens');
  await clickUntil(b, await byTestId(b, 'oauth-secret-forget', { timeout: 10_000 }), () => exists(b, 'oauth-secret-forgotten'), 'the form says the secret goes on save');
  await clickUntil(b, await byTestId(b, 'add-save'), async () => !(await dialogOpen(b)), 'Save closes the form');
  assert.match(await (await b.$('.toast')).getText(), /Removed the client secret of “prereg” from Secret Service/);
  await noticeGone(b);
  await clickUntil(b, await byTestId(b, 'edit-server'), () => dialogOpen(b), 'the Edit form opens again');
  await byTestId(b, 'oauth-client-secret');
  assert.equal(await (await byTestId(b, 'oauth-secret')).getAttribute('data-stored'), 'false', 'no secret is kept any more');
  await b.keys('Escape');
  await eventually(b, async () => !(await dialogOpen(b)), 'Escape closes the form');
});
