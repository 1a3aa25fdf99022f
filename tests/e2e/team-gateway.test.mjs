// A team gateway from the desktop app (issue 30): a real team gateway
// (`switchboard serve --config DIR --oidc-issuer URL --resource URL`) in
// front of the fixture server, for the group `engineering`, signed in
// through the identity-provider stand-in (`fixture-idp`, which approves at
// once as alice of engineering). In the app: Add → Team gateway with its
// URL, which lands in the Team source and waits for a sign-in; Sign in (the
// test is the browser); then the gateway's team server and its tools show on
// its page and in the Servers list. axe in light and dark.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import readline from 'node:readline';
import {
  startApp,
  gotoView,
  byTestId,
  waitForStatus,
  screenshot,
  screenshotDark,
  eventually,
  fill,
  freePort,
  sel,
  E2E,
} from './lib/app.mjs';
import { seriousViolations, darkViolations } from './lib/axe.mjs';

let app;
let idp;
let gateway;
let gatewayUrl;

/** The first stdout line of `child`, parsed as JSON. */
function firstJsonLine(child, what) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} printed nothing within 60 s`)), 60_000);
    readline.createInterface({ input: child.stdout }).once('line', (line) => {
      clearTimeout(timer);
      try {
        resolve(JSON.parse(line));
      } catch {
        reject(new Error(`${what}: unexpected first line ${line}`));
      }
    });
    child.once('exit', (code) => reject(new Error(`${what} exited (${code})`)));
  });
}

/** Ends `child` with SIGTERM (SIGKILL after 15 s) and waits for it. */
function stop(child) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

before(async () => {
  idp = spawn(E2E.fixtureIdp, ['--user', 'alice:engineering'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const issuer = (await firstJsonLine(idp, 'fixture-idp')).url;

  // The team's folder: the fixture server for the engineering group. The
  // gateway and its server run from their real paths, not the run's bin
  // links: they are the team's, not the app's, and end with this file.
  const dir = path.join(E2E.runDir, 'team-gateway');
  const config = path.join(dir, 'config');
  fs.mkdirSync(config, { recursive: true });
  const fixture = fs.realpathSync(E2E.fixtureServer);
  const write = (name, v) => fs.writeFileSync(path.join(config, name), JSON.stringify(v, null, 2));
  write('servers.json', { mcpServers: { fx: { command: fixture, args: ['--name', 'fx'] } } });
  write('settings.json', { profiles: { list: [{ name: 'dev', servers: [{ name: 'fx' }] }] } });
  write('team.json', { access: [{ group: 'engineering', profiles: ['dev'] }] });
  // The port first, so that --resource is the URL the app connects to.
  const port = await freePort();
  gatewayUrl = `http://127.0.0.1:${port}/mcp`;
  gateway = spawn(
    E2E.switchboard,
    ['serve', '--http', `127.0.0.1:${port}`, '--config', config, '--oidc-issuer', issuer,
      '--resource', gatewayUrl, '--state', path.join(dir, 'state')],
    { stdio: ['ignore', 'pipe', 'inherit'], env: { PATH: process.env.PATH, HOME: path.join(dir, 'state') } },
  );
  const listening = await firstJsonLine(gateway, 'the team gateway');
  assert.equal(listening.url, gatewayUrl);
  const end = Date.now() + 30_000;
  while ((await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.status, () => 0)) !== 200) {
    assert.ok(Date.now() < end, 'the team gateway gets ready');
    await new Promise((r) => setTimeout(r, 100));
  }

  app = await startApp('team-gateway');
});

after(async () => {
  await stop(gateway);
  if (app) await app.close();
  await stop(idp);
});

test('a team gateway is added by its URL, signed in through the browser, and shows its team servers', async () => {
  const b = app.browser;
  await gotoView(b, 'servers');
  await waitForStatus(b, 'alpha', 'connected', { timeout: 30_000 });

  await (await byTestId(b, 'add-server-button')).click();
  await (await byTestId(b, 'add-kind-team')).click();
  const url = await byTestId(b, 'team-url', { displayed: true });
  await fill(url, gatewayUrl);
  const name = await byTestId(b, 'team-name');
  await eventually(b, async () => (await name.getValue()) === 'team', 'the name comes from the host (an IP address: "team")');
  await fill(name, 'acme');
  assert.match(await (await byTestId(b, 'team-target')).getText(), /team-gateways\.json/);
  await screenshot(b, 'team-gateway-add');
  assert.deepEqual(await seriousViolations(b), [], 'the Team gateway form passes axe');
  assert.deepEqual(await darkViolations(b), [], 'the Team gateway form passes axe in dark mode');
  await (await byTestId(b, 'team-save')).click();

  // Written to the Team list, and the gateway's 401 asks for a sign-in.
  const file = path.join(path.dirname(app.fx.servers), 'team-gateways.json');
  await eventually(b, async () => fs.existsSync(file), 'team-gateways.json is written');
  assert.deepEqual(JSON.parse(fs.readFileSync(file, 'utf8')), { mcpServers: { acme: { url: gatewayUrl } } });
  await waitForStatus(b, 'acme', 'needs-auth', { timeout: 30_000 });
  const about = await byTestId(b, 'team-about-acme');
  assert.match(await about.getText(), /Team gateway at .*your team’s servers, as your groups allow; sign in with your team account/);
  assert.match(await (await byTestId(b, 'team-servers-detail-acme')).getText(), /once you are signed in/);
  assert.equal(await (await byTestId(b, 'server-source-acme')).getAttribute('data-source'), 'team');
  await screenshot(b, 'team-gateway-needs-auth');

  // Sign in: the app shows the link it sent to the browser; the test is the browser.
  await (await byTestId(b, 'sign-in-detail-acme')).click();
  const field = await byTestId(b, 'sign-in-url-acme', { timeout: 15_000 });
  const authUrl = await field.getValue();
  assert.ok(authUrl.startsWith(`${new URL(authUrl).origin}/authorize?`), authUrl);
  assert.equal(new URL(authUrl).searchParams.get('resource'), gatewayUrl, 'the token is asked for this gateway');
  const approve = await fetch(authUrl, { redirect: 'manual' });
  assert.equal(approve.status, 302, 'the stand-in approves at once');
  const back = await fetch(approve.headers.get('location'));
  assert.equal(back.status, 200, await back.text());

  await waitForStatus(b, 'acme', 'connected', { timeout: 30_000 });
  const fx = await byTestId(b, 'team-server-acme-fx', { timeout: 15_000 });
  assert.match(await fx.getText(), /^fx \d+ tools/);
  const tools = await b.execute(
    (s) => [...document.querySelectorAll(`${s} li`)].map((li) => li.textContent.trim()),
    sel('team-server-acme-fx'),
  );
  for (const tool of ['echo', 'add', 'fail']) assert.ok(tools.includes(tool), `${tool} among ${tools}`);
  await screenshot(b, 'team-gateway-detail');
  assert.deepEqual(await seriousViolations(b), [], 'the team gateway page passes axe');
  assert.deepEqual(await darkViolations(b), [], 'the team gateway page passes axe in dark mode');
  await screenshotDark(b, 'team-gateway-detail-dark');

  // The Servers list: the Team source, and what the gateway serves.
  await gotoView(b, 'servers');
  const summary = await byTestId(b, 'team-servers-acme', { timeout: 15_000 });
  assert.match(await summary.getText(), /^Team servers: fx \(\d+ tools\)$/);
  const row = await byTestId(b, 'server-source-acme');
  assert.equal(await row.getAttribute('data-source'), 'team');
  assert.equal(await b.execute((s) => document.querySelector(s)?.textContent?.trim(), sel('server-source-acme')), 'Team · user');
  await screenshot(b, 'team-gateway-servers');
  assert.deepEqual(await seriousViolations(b), [], 'the Servers view passes axe');
  assert.deepEqual(await darkViolations(b), [], 'the Servers view passes axe in dark mode');
});
