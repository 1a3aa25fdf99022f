// The harness itself: a session starts the real app with the fixture home,
// every view can be shown and photographed, and teardown leaves nothing
// running. Uses hash navigation (no data-testids) so it works on any UI.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { startApp, environOf, gotoViewByHash, screenshot, exists, waitForStatus, E2E } from './lib/app.mjs';

let app;
before(async () => {
  app = await startApp('harness');
});
after(async () => {
  // Normally closed by the last test; this catches an early failure.
  if (app) await app.close().catch(() => {});
});

test('the app runs with the fixture home and system root', () => {
  assert.ok(app.pid, 'launch-app.sh wrote the app pid');
  const env = environOf(app.pid);
  assert.equal(env.HOME, app.fx.home, 'HOME is the session fixture home');
  assert.equal(env.SWITCHBOARD_SYSTEM_ROOT, app.fx.system);
  assert.equal(env.TAURI_WEBVIEW_AUTOMATION, 'true');
  assert.equal(env.XDG_CONFIG_HOME, undefined, 'XDG_CONFIG_HOME unset, so config is <home>/.config');
  assert.equal(env.SHELL, undefined, 'no login-shell PATH lookup');
  assert.ok(fs.readlinkSync(`/proc/${app.pid}/exe`).endsWith('/switchboard-app'), 'the process is switchboard-app');
  // The driver's own HOME (what run.sh set up) is a fixture home too.
  assert.ok(fs.existsSync(`${E2E.home}/.claude.json`));
});

test('the window shows Switchboard', async () => {
  const title = await app.browser.getTitle();
  assert.match(title, /Switchboard/);
});

test('every view renders and is photographed (artifacts/*.png)', async () => {
  const b = app.browser;
  await gotoViewByHash(b, 'servers');
  // Let live statuses settle when the view already shows them.
  if (await exists(b, 'server-status-alpha')) await waitForStatus(b, 'alpha', 'connected').catch(() => {});
  for (const view of ['servers', 'tools', 'sources', 'logs', 'history', 'settings']) {
    await gotoViewByHash(b, view);
    const text = await b.execute(() => document.body.innerText);
    assert.ok(text.trim().length > 0, `#/${view} renders some text`);
    const file = await screenshot(b, `view-${view}`);
    assert.ok(fs.statSync(file).size > 1000, `${file} is a real PNG`);
  }
});

test('closing the session ends the app and every server it started', async () => {
  const a = app;
  app = null;
  await a.close(); // throws naming any process left behind
});
