// The tray (issue: the gateway keeps serving while the window is closed). A
// stand-in desktop (lib/desktop.py) plays the user's panel and window
// manager: the app's tray icon registers with it over D-Bus, closing the
// window with the window manager's close button hides the window while the
// gateway keeps answering other clients, the tray menu's "Show Switchboard"
// brings the window back, and its "Quit Switchboard" ends the app and every
// server it started. The menu lists the profiles, the active one checked: a
// profile made elsewhere appears in it, and choosing one switches to it.
// Hidden in the tray, a switchboard:// link opened (a second launch) brings
// the window back with the Add dialog.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { startApp, gotoView, byTestId, screenshot, eventually, processesMatching, timeBox, processGone as gone, until, E2E } from './lib/app.mjs';
import { McpHttpClient } from './lib/mcp.mjs';
import { Desktop, desktopAvailable } from './lib/desktop.mjs';

const missing = !desktopAvailable();
if (missing && process.env.CI) throw new Error('tests/python/.venv is missing: run tests/python/setup.sh (the tray test needs dbus-fast and python-xlib)');

let desktop;
let app;
let quit = false;
before(async () => {
  if (missing) return;
  // The panel is up before the app starts, as on a desktop.
  desktop = await Desktop.start();
  app = await startApp('tray');
});
after(async () => {
  if (app && !quit) await app.close();
  await desktop?.stop();
});

const text = async (b, id) => (await (await byTestId(b, id)).getText()).trim();
/** The menu's entries, separators left out. */
const labels = (menu) => menu.filter((e) => e.type !== 'separator').map((e) => e.label);
/** The menu of the newest registered item, as the panel reads it now. */
const trayMenu = async () => (await desktop.request('items')).items.at(-1)?.menu ?? [];
const checked = (menu) => menu.filter((e) => e.checked).map((e) => e.label);
const isMapped = async () => (await desktop.request('mapped', { pid: app.pid, title: 'Switchboard' })).mapped;

test('the tray icon shows Show and Quit; closing the window hides it, the gateway keeps serving, Show brings it back', { skip: missing && 'tests/python/.venv is missing (tests/python/setup.sh)' }, async () => {
  const b = app.browser;
  const item = await desktop.waitFor((m) => m.event === 'registered' && !m.error, 'the app\'s tray icon to register', 30_000);
  assert.deepEqual(labels(item.menu), ['Show Switchboard', 'Profile', 'Everything', 'Quit Switchboard'], JSON.stringify(item));
  assert.deepEqual(checked(item.menu), ['Everything'], 'the active profile is checked');
  assert.ok(item.title || item.id, `the item names itself: ${JSON.stringify(item)}`);
  assert.ok(item.iconFile || item.pixmaps > 0, `the item has an icon: ${JSON.stringify(item)}`);
  if (item.iconFile) fs.copyFileSync(item.iconFile, path.join(E2E.artifacts, 'tray-icon.png'));

  // A client of the gateway, as another program on the machine would be.
  await gotoView(b, 'gateway');
  await eventually(b, async () => /listening/i.test(await text(b, 'gateway-state')), 'the gateway listens', 20_000);
  await (await byTestId(b, 'gateway-show-token')).click();
  await eventually(b, async () => (await text(b, 'gateway-token')).length >= 20, 'the token is shown');
  const client = new McpHttpClient(app.gatewayUrl, await text(b, 'gateway-token'));
  await client.initialize('e2e-tray-client', '1.0.0');
  await eventually(b, async () => (await client.listTools()).includes('mcp_alpha_echo'), 'alpha\'s tools through the gateway', 20_000);

  assert.ok(await isMapped(), 'the window is shown at first');
  // The close button, pressed again if the first press seems lost (as a
  // person would); which press worked goes to the log.
  let presses = 0;
  let closed;
  for (; presses < 3 && (await isMapped()); presses++) {
    closed = await desktop.request('close', { pid: app.pid, title: 'Switchboard' });
    try {
      await until(async () => !(await isMapped()), 'the window is hidden after its close button', 5_000);
    } catch {}
  }
  if (await isMapped()) {
    const all = await desktop.request('windows');
    assert.fail(`the window is still shown after ${presses} presses of its close button (sent to ${JSON.stringify(closed.windows)}); the windows:\n${all.windows.map((w) => JSON.stringify(w)).join('\n')}`);
  }
  console.log(`# the window was hidden after ${presses} press(es) of its close button`);
  // Still running, still serving: a new request in the open session and a new session.
  assert.ok(app.pid && fs.existsSync(`/proc/${app.pid}`), 'the app still runs');
  assert.ok((await client.listTools()).includes('mcp_alpha_echo'), 'the open session still gets the tools');
  const second = new McpHttpClient(app.gatewayUrl, client.token);
  await second.initialize('e2e-tray-second', '1.0.0');
  assert.ok((await second.listTools()).includes('mcp_alpha_echo'), 'a new session is served while the window is hidden');
  await second.close();
  await client.close();

  await desktop.request('click', { label: 'Show Switchboard' });
  await until(isMapped, 'the window is shown again after Show Switchboard');
  // The same window, still working.
  await gotoView(b, 'servers');
  await screenshot(b, 'tray-window-shown-again');
});

test('a profile made elsewhere (the settings file, as the CLI writes it) appears in the tray menu; choosing it switches, and the header follows', { skip: missing && 'tests/python/.venv is missing (tests/python/setup.sh)' }, async () => {
  const b = app.browser;
  const s = JSON.parse(fs.readFileSync(app.fx.settings, 'utf8'));
  s.profiles = { list: [{ name: 'Focus', servers: [{ name: 'alpha' }] }] };
  fs.writeFileSync(`${app.fx.settings}.tmp`, JSON.stringify(s, null, 2) + '\n');
  fs.renameSync(`${app.fx.settings}.tmp`, app.fx.settings);
  let seen = [];
  const menuHas = (fn) => async () => fn((seen = await trayMenu()));
  await until(menuHas((m) => labels(m).includes('Focus')), () => `Focus in the tray menu: ${JSON.stringify(labels(seen))}`, 10_000);
  assert.deepEqual(labels(await trayMenu()), ['Show Switchboard', 'Profile', 'Everything', 'Focus', 'Quit Switchboard']);
  await desktop.request('click', { label: 'Focus' });
  await until(() => JSON.parse(fs.readFileSync(app.fx.settings, 'utf8')).profiles?.active === 'Focus', 'settings.json: Focus is active after the tray click');
  await until(menuHas((m) => JSON.stringify(checked(m)) === '["Focus"]'), () => `only Focus checked: ${JSON.stringify(seen)}`);
  await eventually(b, async () => (await (await byTestId(b, 'profile-switch')).getAttribute('data-active')) === 'Focus', 'the header shows Focus active');
  await screenshot(b, 'tray-profile-switched');
});

test('Quit Switchboard in the tray menu ends the app and every server it started', { skip: missing && 'tests/python/.venv is missing (tests/python/setup.sh)' }, async () => {
  const pid = app.pid;
  assert.ok(processesMatching(E2E.binDir + '/').length > 0, 'servers run before Quit');
  await desktop.request('click', { label: 'Quit Switchboard' });
  quit = true;
  await until(() => gone(pid), 'the app exits after Quit', 20_000);
  await until(() => processesMatching(E2E.binDir + '/').length === 0, `no server is left: ${JSON.stringify(processesMatching(E2E.binDir + '/'))}`, 15_000);
  // The driver's session went with the app.
  await timeBox(app.browser.deleteSession().catch(() => {}), 20_000, 'deleteSession after Quit');
});

test('started at login (the autostart entry passes --hidden), the app waits in the tray with its window closed; Show opens it', { skip: missing && 'tests/python/.venv is missing (tests/python/setup.sh)' }, async () => {
  const before = desktop.messages.length;
  app = await startApp('tray-at-login', { appArgs: ['--hidden'] });
  quit = false;
  const item = await desktop.waitFor((m) => m.event === 'registered' && !m.error && desktop.messages.indexOf(m) >= before, 'the tray icon of the app started at login', 30_000);
  assert.deepEqual(labels(item.menu), ['Show Switchboard', 'Profile', 'Everything', 'Quit Switchboard']);
  // The servers start as usual while the window stays closed.
  await until(() => processesMatching(E2E.binDir + '/').length > 0, 'the servers start while the window is closed', 30_000);
  assert.equal(await isMapped(), false, 'the window is not shown at login');
  await desktop.request('click', { label: 'Show Switchboard' });
  await until(isMapped, 'the window is shown after Show Switchboard');
  await gotoView(app.browser, 'servers');
  await byTestId(app.browser, 'server-row-alpha', { timeout: 20_000 });
});

test('hidden in the tray, the app shows its window with the Add dialog when a switchboard:// link is opened (a second launch, which exits)', { skip: missing && 'tests/python/.venv is missing (tests/python/setup.sh)' }, async () => {
  if (app && !quit) await app.close();
  const before = desktop.messages.length;
  app = await startApp('tray-link', { appArgs: ['--hidden'] });
  quit = false;
  await desktop.waitFor((m) => m.event === 'registered' && !m.error && desktop.messages.indexOf(m) >= before, 'the tray icon of the hidden app', 30_000);
  assert.equal(await isMapped(), false, 'the window starts closed');
  const entry = Buffer.from(JSON.stringify({ command: '/opt/tray/linked-server' })).toString('base64url');
  const url = `switchboard://install?name=from-tray&config=${entry}`;
  // What a browser's click does: the desktop starts the app with the link (same user, same data folder).
  const env = { ...process.env, HOME: app.fx.home, SWITCHBOARD_SYSTEM_ROOT: app.fx.system, PATH: process.env.E2E_APP_PATH ?? process.env.PATH };
  for (const v of ['XDG_CONFIG_HOME', 'XDG_DATA_HOME', 'XDG_CACHE_HOME', 'XDG_STATE_HOME']) delete env[v];
  const second = spawn(path.join(E2E.binDir, 'switchboard-app'), [url], { env, stdio: 'ignore' });
  const exited = new Promise((r) => second.once('exit', (code, signal) => r(code ?? signal)));
  assert.equal(await timeBox(exited, 20_000, 'the second launch with the link'), 0, 'the second launch hands the link over and exits');
  await until(isMapped, 'the window is shown for the link');
  const b = app.browser;
  await byTestId(b, 'link-form', { timeout: 20_000 });
  assert.equal(await (await byTestId(b, 'link-name')).getValue(), 'from-tray');
  await screenshot(b, 'tray-link-shown');
});
