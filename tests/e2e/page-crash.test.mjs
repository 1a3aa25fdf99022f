// The page's process dies (a GPU driver crash, the out-of-memory killer):
// WebKitGTK draws the window's page in a separate web process, and without
// help the window stays blank for good. The app reloads the page, which
// reads everything from the engine again; the servers never stopped.
//
// WebKitWebDriver ends its session when the page's process dies, so after
// the crash this test looks at the app from outside: its log, its processes,
// the window as the X display shows it, and its gateway.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { startApp, gotoView, byTestId, fill, waitForStatus, captureWindow, pixelsDiffering, processesMatching, processGone as gone, until, timeBox, E2E } from './lib/app.mjs';

let app;
let ended = false;
after(async () => {
  if (app && !ended) await app.close().catch(() => {});
  if (app) for (const p of processesMatching(E2E.binDir + '/')) process.kill(p.pid, 'SIGKILL');
});

/** Pictures from `take(i)` until two in a row are the same (anything still settling has ended); the last one. */
async function settledShot(take, what) {
  let i = 0;
  let last = await take(i++);
  let differing = Infinity;
  await until(async () => {
    const next = await take(i++ % 2);
    differing = await pixelsDiffering(last, next);
    last = next;
    return differing === 0;
  }, () => `${what} (${differing} pixels differ)`);
  return last;
}

/** The app's web process (the page), by its parent. */
function webProcessOf(pid) {
  let out = '';
  try {
    out = execFileSync('pgrep', ['-P', String(pid), '-f', 'WebKitWebProcess'], { encoding: 'utf8' }).trim();
  } catch (e) {
    if (e.status !== 1) throw e; // 1: none
  }
  return out ? Number(out.split('\n')[0]) : null;
}
test('when the page\'s process is killed the window reloads it, and the servers keep running', async () => {
  app = await startApp('page-crash');
  const b = app.browser;
  await gotoView(b, 'servers');
  await waitForStatus(b, 'alpha', 'connected');
  await byTestId(b, 'nav-servers', { displayed: true });
  // The top of the view as the page draws it at rest: its title and the
  // toolbar (search box empty, "N of N" servers). Not the sidebar: the nav
  // button clicked to get here may keep a focus ring the reload drops. Nor
  // the right edge: the page's overlay scrollbar comes and fades there.
  const dir = E2E.artifacts;
  fs.mkdirSync(dir, { recursive: true });
  const top = '950x140+232+0';
  const shot = (name) => captureWindow(app.pid, path.join(dir, `page-crash-${name}.png`), { crop: top });
  const atRest = await settledShot((i) => shot(`at-rest-${i}`), 'the top of the window to stay the same between two pictures');
  // Then a search only this page knows about (nothing keeps it across a
  // reload): the X window keeps showing the dead page's last frame, so the
  // page is back only when the top is drawn at rest again, search box empty.
  await fill(await b.$('input[type="search"]'), 'no-such-server');
  let differing = 0;
  await until(async () => (differing = await pixelsDiffering(atRest, await shot('searching'))) > 1000, () => `the search to show in the window (${differing} pixels differ)`);
  const alphaPid = Number(execFileSync('pgrep', ['-P', String(app.pid), '-f', 'fixture-server --name alpha'], { encoding: 'utf8' }).trim());
  assert.ok(alphaPid > 0, 'alpha runs as a child of the app');

  const web = webProcessOf(app.pid);
  assert.ok(web, 'the app has a web process');
  process.kill(web, 'SIGKILL');
  await until(() => gone(web), 'the web process to end');

  await until(() => /page process crashed; reloading the page/.test(fs.readFileSync(app.log, 'utf8')), 'the app log to say it reloads the page');
  await until(() => { const w = webProcessOf(app.pid); return w && w !== web; }, 'a new web process');
  // The dead page's frame (search filled in) differs from the top at rest in
  // thousands of pixels, so does a blank window; a page drawn again may
  // differ in a few (anti-aliasing).
  const fewPixels = 25;
  differing = Infinity;
  await until(async () => {
    differing = await pixelsDiffering(atRest, await shot('reloaded-top'));
    return differing <= fewPixels;
  }, () => `the window to show the page again, search box empty (${differing} pixels differ from the top at rest, at most ${fewPixels} may; artifacts/page-crash-*.png)`, 20_000);
  await captureWindow(app.pid, path.join(dir, 'page-crash-reloaded.png'));
  assert.ok(!gone(alphaPid), 'alpha kept running: the crash of the page touched no server');

  // The app still ends cleanly, servers and all.
  ended = true;
  process.kill(app.pid, 'SIGTERM');
  await until(() => gone(app.pid), 'the app to exit after SIGTERM');
  await until(() => processesMatching(E2E.binDir + '/').length === 0, 'every server the app started to end');
  // WebKitWebDriver still counts the session its page crash ended: end it,
  // so the next file can start its own.
  try {
    await timeBox(b.deleteSession(), 20_000, 'deleteSession after the page crash');
  } catch (e) {
    if (!/invalid session id/i.test(e.message)) throw e;
  }
  const status = await timeBox(fetch(`http://127.0.0.1:${E2E.port}/status`).then((r) => r.json()), 10_000, 'driver /status');
  assert.equal(status.value?.ready, true, `WebKitWebDriver is ready for a new session: ${JSON.stringify(status)}`);
});
