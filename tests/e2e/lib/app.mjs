// Helpers for the E2E tests: start the real app through WebKitWebDriver with
// a fresh fixture home, find elements by data-testid (failing fast and by
// name when one is missing), wait for server statuses, take screenshots, and
// tear everything down checking that no app or fixture process is left.
//
// Everything is time-boxed: a WebDriver session whose app crashes or cannot
// start hangs instead of failing.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { remote } from 'webdriverio';
import { makeFixtureHome } from './fixture-home.mjs';

function need(name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run the E2E tests through tests/e2e/run.sh`);
  return v;
}

/** What run.sh tells the tests. */
export const E2E = {
  get port() { return Number(need('E2E_DRIVER_PORT')); },
  get runDir() { return need('E2E_RUN_DIR'); },
  /** Symlink dir: every process started from here is ours (stray check). */
  get binDir() { return path.join(need('E2E_RUN_DIR'), 'bin'); },
  get launcher() { return need('E2E_LAUNCHER'); },
  get fixtureServer() { return need('E2E_FIXTURE_SERVER'); },
  /** The test OAuth authorization server + protected MCP server (tests/README.md). */
  get oauthServer() { return need('E2E_OAUTH_SERVER'); },
  /** The identity-provider stand-in of team mode (`fixture-idp`, tests/src/idp.rs). */
  get fixtureIdp() { return need('E2E_FIXTURE_IDP'); },
  /** The headless `switchboard` binary (a team gateway, `serve --config`). */
  get switchboard() { return need('E2E_SWITCHBOARD'); },
  get artifacts() { return need('E2E_ARTIFACTS'); },
  /** The fixture home run.sh made (the driver's HOME). Sessions get fresh copies. */
  get home() { return need('E2E_HOME'); },
};

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The process has exited (a zombie waiting for its parent counts as exited). */
export function processGone(pid) {
  try {
    return /^\d+ \(.*\) [ZX]/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

/** Polls `fn` every 100 ms without WebDriver (for a hidden window or a lost session); fails naming `what`. */
export async function until(fn, what, timeout = 15_000) {
  const end = Date.now() + timeout;
  while (Date.now() < end) {
    if (await fn()) return;
    await sleep(100);
  }
  if (!(await fn())) throw new Error(`timed out after ${timeout} ms: ${typeof what === 'function' ? what() : what}`);
}

/** Rejects with `what timed out after N ms` unless `promise` settles first. */
export async function timeBox(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function tail(file, lines = 40) {
  try {
    const text = fs.readFileSync(file, 'utf8').trimEnd().split('\n');
    return text.slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) Z/.test(stat); // a zombie is as good as gone
  } catch {
    return false;
  }
}

/** [{pid, cmd}] of live processes whose command line contains `needle`. */
export function processesMatching(needle) {
  const out = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    let cmd;
    try {
      cmd = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
    } catch {
      continue;
    }
    if (cmd.includes(needle) && alive(Number(entry))) out.push({ pid: Number(entry), cmd });
  }
  return out;
}

/** The app's environment as the kernel sees it (proves what HOME it got). */
export function environOf(pid) {
  const raw = fs.readFileSync(`/proc/${pid}/environ`, 'utf8');
  return Object.fromEntries(
    raw.split('\0').filter(Boolean).map((kv) => {
      const i = kv.indexOf('=');
      return [kv.slice(0, i), kv.slice(i + 1)];
    }),
  );
}

let sessionCount = 0;
/** Each session's app pid (for screenshots of its window). */
const appPids = new WeakMap();

/**
 * Starts the app in a new WebDriver session with a fresh fixture home.
 * Returns { browser, fx, pid, log, close() }. `close()` ends the session,
 * makes sure the app and its servers are gone, and throws if anything stayed.
 */
export async function startApp(
  label,
  { startTimeoutMs = 60_000, uiTimeoutMs = 30_000, extraServers = {}, prepare, appArgs = [], makeHome, binary } = {},
) {
  const n = ++sessionCount;
  const dir = path.join(E2E.runDir, 'sessions', `${label}-${n}`);
  fs.mkdirSync(dir, { recursive: true });
  // `makeHome(dir, fixtureServer)`: a home of the caller's own (the benchmarks'), shaped like makeFixtureHome's result.
  const fx = (makeHome ?? makeFixtureHome)(dir, path.join(E2E.binDir, 'fixture-server'));
  // `prepare(fx)`: changes to this session's copy of the fixture files, made before the app reads them.
  if (prepare) await prepare(fx);
  if (Object.keys(extraServers).length) {
    // More servers in Switchboard's own file, before the app reads it.
    const own = JSON.parse(fs.readFileSync(fx.servers, 'utf8'));
    Object.assign(own.mcpServers, extraServers);
    fs.writeFileSync(fx.servers, JSON.stringify(own, null, 2) + '\n');
  }
  // The gateway of this session listens on a port of its own (the default
  // one may be taken by a Switchboard the developer runs).
  const gatewayPort = await freePort();
  const settings = fs.existsSync(fx.settings) ? JSON.parse(fs.readFileSync(fx.settings, 'utf8')) : {};
  settings.gateway = { ...(settings.gateway ?? {}), port: gatewayPort };
  fs.mkdirSync(path.dirname(fx.settings), { recursive: true });
  fs.writeFileSync(fx.settings, JSON.stringify(settings, null, 2) + '\n');
  const log = path.join(dir, 'app.log');
  const pidfile = path.join(dir, 'app.pid');
  const appPid = () => {
    try {
      return Number(fs.readFileSync(pidfile, 'utf8').trim()) || null;
    } catch {
      return null;
    }
  };

  const session = remote({
    hostname: '127.0.0.1',
    port: E2E.port,
    logLevel: process.env.E2E_WDIO_LOG ?? 'error',
    connectionRetryTimeout: startTimeoutMs,
    connectionRetryCount: 0,
    waitforTimeout: 5_000,
    capabilities: {
      // WebKitGTK speaks classic WebDriver; no BiDi.
      'wdio:enforceWebDriverClassic': true,
      'webkitgtk:browserOptions': {
        binary: E2E.launcher,
        args: [
          '--e2e-home', fx.home, '--e2e-system-root', fx.system, '--e2e-log', log, '--e2e-pidfile', pidfile,
          // `binary`: another program than the app under test (the benchmarks' bare window).
          ...(binary ? ['--e2e-app', binary] : []),
          ...appArgs,
        ],
      },
    },
  });

  let browser;
  try {
    browser = await timeBox(session, startTimeoutMs, `WebDriver session creation (${label})`);
  } catch (e) {
    killHard(appPid());
    session.then((b) => b.deleteSession().catch(() => {}), () => {});
    throw new Error(`${e.message}\n--- app log (${log}) ---\n${tail(log)}`);
  }

  appPids.set(browser, appPid());
  const app = {
    browser,
    fx,
    gatewayUrl: `http://127.0.0.1:${gatewayPort}/mcp`,
    log,
    get pid() { return appPid(); },
    async close() {
      await closeApp(browser, appPid(), log);
    },
  };

  try {
    // The Svelte app mounts into #app; wait until it rendered something.
    // (Another binary's page has no #app: the session is ready as it is.)
    if (!binary) await browser.waitUntil(
      () => browser.execute(() => (document.getElementById('app')?.children.length ?? 0) > 0),
      { timeout: uiTimeoutMs, interval: 200, timeoutMsg: `the UI did not render into #app within ${uiTimeoutMs} ms` },
    );
  } catch (e) {
    await app.close().catch(() => {});
    throw new Error(`${e.message}\n--- app log (${log}) ---\n${tail(log)}`);
  }
  return app;
}

/** A TCP port free on loopback right now. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function killHard(pid) {
  if (!pid) return;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {}
}

async function waitGone(check, ms) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await sleep(100);
  }
  return check();
}

async function closeApp(browser, pid, log) {
  const problems = [];
  try {
    await timeBox(browser.deleteSession(), 20_000, 'deleteSession');
  } catch (e) {
    problems.push(e.message);
  }
  // The driver ends the app with the session; give it time to stop its servers.
  if (pid && !(await waitGone(() => !alive(pid), 10_000))) {
    problems.push(`the app (pid ${pid}) was still running 10 s after the session ended; killed it`);
    killHard(pid);
    await waitGone(() => !alive(pid), 3_000);
  }
  // Everything the app started from our bin dir (fixture servers) must go too.
  const bin = E2E.binDir + '/';
  if (!(await waitGone(() => processesMatching(bin).length === 0, 10_000))) {
    const left = processesMatching(bin);
    for (const p of left) killHard(p.pid);
    problems.push(
      `processes left behind after the app ended (killed now):\n` + left.map((p) => `  ${p.pid} ${p.cmd}`).join('\n'),
    );
  }
  if (problems.length) {
    throw new Error(`teardown: ${problems.join('; ')}\n--- app log (${log}) ---\n${tail(log)}`);
  }
}

// ---- finding things --------------------------------------------------------

const README = 'tests/e2e/README.md lists the data-testid attributes the app must render';

export function sel(testId) {
  return `[data-testid="${testId.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"]`;
}

async function where(browser) {
  try {
    return await browser.execute(() => window.location.hash || '/');
  } catch {
    return '?';
  }
}

/**
 * Waits (default 8 s) for the element with this data-testid and returns it;
 * fails naming the testid when it never shows up. In a long list that renders
 * only the rows in view (the Servers table past 60 rows), a row that is not
 * in the page is scrolled into view first, as a user would scroll to it.
 */
export async function byTestId(browser, testId, { timeout = 8_000, within, displayed = false } = {}) {
  const root = within ?? browser;
  const deadline = Date.now() + timeout;
  for (;;) {
    const el = await root.$(sel(testId));
    if ((await el.isExisting()) && (!displayed || (await el.isDisplayed()))) return el;
    const revealed = !within && (await revealInWindowedList(browser, sel(testId)));
    if (!revealed && Date.now() >= deadline) {
      throw new Error(
        `missing data-testid="${testId}" (waited ${timeout} ms on view ${await where(browser)}${within ? ', inside its parent' : ''}). ${README}.`,
      );
    }
    if (!revealed) await sleep(100);
  }
}

/**
 * Scrolls a windowed list (`tbody.windowed`) page by page until an element
 * matching `selector` is rendered, and centres it. False when the page has no
 * windowed list or the element is not in it.
 */
async function revealInWindowedList(browser, selector) {
  return browser.executeAsync((selector, done) => {
    const body = document.querySelector('tbody.windowed');
    let view = body;
    while (view && !/auto|scroll/.test(getComputedStyle(view).overflowY)) view = view.parentElement;
    if (!view) return done(false);
    const frames = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    (async () => {
      const step = Math.max(100, view.clientHeight - 100);
      for (let top = 0; top <= view.scrollHeight; top += step) {
        view.scrollTop = top;
        await frames();
        const found = document.querySelector(selector);
        if (found) {
          found.scrollIntoView({ block: 'center' });
          await frames();
          return done(Boolean(document.querySelector(selector)));
        }
      }
      done(false);
    })();
  }, selector);
}

export async function exists(browser, testId) {
  return (await browser.$$(sel(testId))).length > 0;
}

/** data-testid values starting with `prefix`, in document order. */
export async function testIds(browser, prefix) {
  return browser.execute(
    (p) => [...document.querySelectorAll('[data-testid]')].map((e) => e.getAttribute('data-testid')).filter((t) => t.startsWith(p)),
    prefix,
  );
}

/** Clicks nav-<view> and waits for the hash route to follow. */
export async function gotoView(browser, view) {
  const link = await byTestId(browser, `nav-${view}`);
  await link.click();
  await browser.waitUntil(async () => (await where(browser)).includes(view), {
    timeout: 5_000,
    timeoutMsg: `clicking nav-${view} did not switch to #/${view} (now ${await where(browser)})`,
  });
}

/** Navigation without the nav testids (the app routes on location.hash). */
export async function gotoViewByHash(browser, view) {
  await browser.execute((v) => {
    window.location.hash = `#/${v}`;
  }, view);
  await browser.waitUntil(async () => (await where(browser)).includes(view), { timeout: 5_000 });
  await sleep(300); // let the view render
}

/** A server's status: data-status if the element has one, else its text. */
export async function statusOf(browser, name) {
  const el = await byTestId(browser, `server-status-${name}`);
  const attr = await el.getAttribute('data-status');
  return (attr ?? (await el.getText()) ?? '').trim().toLowerCase();
}

/**
 * Polls server-status-<name> until it matches `want` (a word such as
 * "connected" — "disconnected" does not count) and returns every distinct
 * status seen on the way.
 */
export async function waitForStatus(browser, name, want, { timeout = 20_000, interval = 100 } = {}) {
  const re = want instanceof RegExp ? want : new RegExp(`(^|[^a-z])${want}([^a-z]|$)`);
  const seen = [];
  const end = Date.now() + timeout;
  for (;;) {
    let s;
    try {
      s = await statusOf(browser, name);
    } catch (e) {
      // The list re-rendered between finding the badge and reading it: read it again.
      if (!/stale element/i.test(String(e?.name ?? '') + String(e?.message ?? ''))) throw e;
      await sleep(interval);
      continue;
    }
    if (seen[seen.length - 1] !== s) seen.push(s);
    if (re.test(s)) return seen;
    if (Date.now() > end) {
      throw new Error(`server-status-${name} never became "${want}" within ${timeout} ms; seen: ${seen.join(' → ')}`);
    }
    await sleep(interval);
  }
}

/** Replaces an input's value the way a user would (fires input events). */
/**
 * Clicks `el` (scrolled to the middle of the window first) until `effect()`
 * holds, at most `tries` times. A view that re-renders above the element
 * between WebDriver's locating and its mouse events (a status line, a list
 * reloading) moves it, and that click lands beside it; a person would click
 * again, and so does this. Only for clicks whose effect is checked and that
 * are harmless to repeat once they have an effect (the effect is checked
 * before every new click).
 */
export async function clickUntil(browser, el, effect, what, { tries = 3, wait = 3_000 } = {}) {
  for (let i = 0; i < tries; i++) {
    if (i > 0 && (await effect())) return;
    await el.scrollIntoView({ block: 'center' });
    await el.waitForEnabled({ timeout: 10_000 });
    try {
      await el.click();
    } catch (e) {
      // Something lay over it for a moment (a notice, a re-render): try again.
      if (!/intercepted/i.test(String(e?.name ?? '') + String(e?.message ?? ''))) throw e;
      await sleep(200);
      continue;
    }
    try {
      await browser.waitUntil(effect, { timeout: wait, interval: 100 });
      return;
    } catch {}
  }
  if (await effect()) return;
  // What a person would have seen: the window, what lies at the middle of
  // the element (an overlay takes the click), and any notice the app showed.
  const shot = `click-failed-${String(what).replace(/[^a-z0-9]+/gi, '-').slice(0, 60)}`;
  await screenshot(browser, shot).catch(() => {});
  const seen = await browser
    .execute((target) => {
      const r = target.getBoundingClientRect();
      const at = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
      const describe = (e) => (e ? `<${e.tagName.toLowerCase()}${e.dataset?.testid ? ` data-testid="${e.dataset.testid}"` : ''}${e.className ? ` class="${e.className}"` : ''}>` : 'nothing');
      const notices = [...document.querySelectorAll('[role="status"], [role="alert"]')].map((n) => n.textContent.trim()).filter(Boolean);
      return `element at (${Math.round(r.left)}, ${Math.round(r.top)}) ${Math.round(r.width)}x${Math.round(r.height)}, disabled=${target.disabled}; at its middle: ${describe(at)}${at && at !== target && !target.contains(at) ? ' (not the element)' : ''}; notices: ${notices.join(' | ') || 'none'}`;
    }, el)
    .catch((e) => `(could not inspect the page: ${e.message})`);
  throw new Error(`${tries} clicks and still not: ${what}\n${seen}\nscreenshot: artifacts/${shot}.png`);
}

export async function fill(el, value) {
  await el.click();
  await el.clearValue();
  if (value !== '') await el.setValue(value);
}

/**
 * Photographs the app's window into artifacts/NAME.png. The picture is taken
 * from the X display (xdotool finds the window, ImageMagick's `import` reads
 * it), not through WebDriver: WebKitGTK's own snapshot waits for a frame that
 * a page drawn without GPU compositing (as the app ships) does not always
 * produce, and hangs. The page first runs two animation frames, so what the
 * DOM holds has been painted.
 */
export async function screenshot(browser, name) {
  fs.mkdirSync(E2E.artifacts, { recursive: true });
  const file = path.join(E2E.artifacts, `${name}.png`);
  await timeBox(
    browser.executeAsync((done) => requestAnimationFrame(() => requestAnimationFrame(() => done()))),
    15_000,
    `painting before screenshot ${name}`,
  );
  await captureWindow(appPids.get(browser), file);
  return file;
}

/** Writes a PNG of app `pid`'s window (or the screen) as the X display shows it now; `crop` e.g. '230x600+0+0'. */
export async function captureWindow(pid, file, { crop } = {}) {
  const window = await appWindow(pid);
  await run('import', ['-window', window, ...(crop ? ['-crop', crop] : []), file], 15_000, `screenshot ${path.basename(file)}`);
  return file;
}

/** How many pixels of two same-sized PNGs differ (ImageMagick `compare`). */
export async function pixelsDiffering(a, b) {
  // `compare` exits 1 when the pictures differ and prints the count on stderr.
  return new Promise((resolve, reject) => {
    execFile('compare', ['-metric', 'AE', a, b, 'null:'], { timeout: 15_000 }, (err, _stdout, stderr) => {
      const n = Number(String(stderr).trim().split(/\s/)[0]);
      if (Number.isFinite(n)) resolve(n);
      else reject(new Error(`compare ${a} ${b}: ${stderr || err?.message}`));
    });
  });
}

/** The X window id of the app's main window ("Switchboard", on screen), or the whole screen. */
async function appWindow(pid) {
  if (!pid) return 'root';
  const found = await run('xdotool', ['search', '--onlyvisible', '--pid', String(pid), '--name', '^Switchboard$'], 10_000, 'xdotool search', { allowFailure: true });
  return found.split('\n').find((id) => /^\d+$/.test(id.trim()))?.trim() ?? 'root';
}

/** Runs a program; rejects with its stderr (unless `allowFailure`) or when it takes longer than `ms`. */
function run(cmd, args, ms, what, { allowFailure = false } = {}) {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { timeout: ms }, (err, stdout, stderr) => {
      if (err && !allowFailure) reject(new Error(`${what}: ${cmd} ${args.join(' ')} failed: ${err.killed ? `no result within ${ms} ms` : stderr || err.message}`));
      else resolve(String(stdout));
    });
  });
}

/** Waits until `fn()` is truthy; `what` names the condition in the failure. */
/**
 * Photographs the view in the dark theme too: the app's own
 * `prefers-color-scheme: dark` rules are applied as if the system were dark
 * (WebKitGTK under Xvfb follows the GTK theme, which the suite does not set).
 */
export async function screenshotDark(b, name) {
  const rules = await b.execute(() => {
    const css = [];
    for (const sheet of document.styleSheets) {
      let list;
      try {
        list = sheet.cssRules;
      } catch {
        continue;
      }
      for (const r of list) {
        if (r instanceof CSSMediaRule && /prefers-color-scheme:\s*dark/.test(r.media.mediaText)) {
          for (const inner of r.cssRules) css.push(inner.cssText);
        }
      }
    }
    const style = document.createElement('style');
    style.id = 'e2e-dark';
    style.textContent = css.join('\n');
    document.head.append(style);
    return css.length;
  });
  if (rules === 0) throw new Error('the app has no prefers-color-scheme: dark rules');
  try {
    await screenshot(b, name);
  } finally {
    await b.execute(() => document.getElementById('e2e-dark')?.remove());
  }
}

/** Empties a view's search box (input[type="search"]) the way typing would. */
export async function clearSearch(browser) {
  await browser.execute(() => {
    const el = document.querySelector('input[type="search"]');
    el.value = '';
    el.dispatchEvent(new Event('input', { bubbles: true }));
  });
}

export async function eventually(browser, fn, what, timeout = 10_000) {
  await browser.waitUntil(fn, { timeout, interval: 150, timeoutMsg: `${what} (waited ${timeout} ms)` });
}

export function readJson(file) {
  return JSON.parse(fs.readFileSync(file, 'utf8'));
}

// ---- Switchboard-specific ------------------------------------------------

/** The source id of a server's winning definition (server-source-<name>). */
export async function winnerOf(browser, name) {
  const el = await byTestId(browser, `server-source-${name}`);
  return ((await el.getAttribute('data-source')) ?? (await el.getText())).trim();
}

/**
 * Makes shadowed-<name>-<source> visible: it may be listed inline or only in
 * the server's detail, opened by clicking server-row-<name>.
 */
export async function showShadowed(browser, name, source) {
  const id = `shadowed-${name}-${source}`;
  if (!(await exists(browser, id)) || !(await (await browser.$(sel(id))).isDisplayed())) {
    await (await byTestId(browser, `server-row-${name}`)).click();
  }
  return byTestId(browser, id, { displayed: true });
}
