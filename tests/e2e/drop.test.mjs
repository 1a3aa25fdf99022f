// Files dropped on the window (issue 31), dropped the way a file manager
// drops them: lib/xdnd.py is an XDND drag source that offers the files as a
// `text/uri-list` to the app's real X window under Xvfb, so the drop goes
// through GTK's drag destination, WebKitGTK and wry into Tauri's
// `DragDropEvent::Drop` and src-tauri/src/drops.rs, as on a desktop. Nothing
// is simulated in the page.
//
// - A `.mcpb` packed by the real `mcpb` CLI (tests/npm) opens its install
//   form: its name and version, unpacking reaching the end; Cancel writes
//   nothing and leaves nothing unpacked.
// - A `.json` file holding a server entry opens the Add dialog with the
//   entry read: its name and exact command. The same entry dragged as text
//   (from an editor or a browser: no file) does the same.
// - A folder shows an error naming it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync, spawn } from 'node:child_process';
import { startApp, gotoView, byTestId, exists, eventually, screenshot, readJson, timeBox, until, E2E } from './lib/app.mjs';
import { desktopAvailable } from './lib/desktop.mjs';

const here = import.meta.dirname;
const ROOT = path.resolve(here, '../..');
const MCPB = path.join(ROOT, 'tests/npm/node_modules/.bin/mcpb');
/** tests/python/setup.sh's venv, with python-xlib (the tray test's stand-in desktop uses it too). */
const PYTHON = path.join(ROOT, 'tests/python/.venv/bin/python');

/** What this file needs and is missing, or null; missing things fail under CI. */
function missing() {
  if (!desktopAvailable()) return 'tests/python/.venv (tests/python/setup.sh: python-xlib)';
  if (!fs.existsSync(MCPB)) return `${MCPB} (npm ci in tests/npm)`;
  return null;
}
const lacking = missing();
if (lacking && process.env.CI) throw new Error(`the drop E2E test needs ${lacking}`);
const skip = lacking ? `needs ${lacking}` : false;

/** A bundle with no settings to fill in: only opening and unpacking it matter here. */
const MANIFEST = {
  manifest_version: '0.3',
  name: 'dropped-bundle',
  display_name: 'Dropped bundle',
  version: '0.4.1',
  description: 'A fixture extension dropped on Switchboard’s window',
  author: { name: 'Switchboard tests' },
  server: {
    type: 'node',
    entry_point: 'server/index.js',
    mcp_config: { command: 'node', args: ['${__dirname}/server/index.js'] },
  },
};

let app;
let work;
let data;
const files = {};
before(async () => {
  if (skip) return;
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'switchboard-drop-'));
  const ext = path.join(work, 'ext');
  fs.mkdirSync(path.join(ext, 'server'), { recursive: true });
  fs.writeFileSync(path.join(ext, 'manifest.json'), JSON.stringify(MANIFEST, null, 2));
  // Never run here: Cancel comes before Install.
  fs.writeFileSync(path.join(ext, 'server/index.js'), 'process.exit(0);\n');
  // A space and a non-ASCII letter: the URI the file manager sends is percent-encoded.
  files.bundle = path.join(work, 'Dropped bundlé.mcpb');
  execFileSync(MCPB, ['pack', ext, files.bundle], { cwd: work, stdio: 'pipe', timeout: 60_000 });
  files.entry = path.join(work, 'entry.json');
  files.entryText = JSON.stringify({ dropped: { command: E2E.fixtureServer, args: ['--name', 'dropped'] } }, null, 2) + '\n';
  fs.writeFileSync(files.entry, files.entryText);
  files.folder = path.join(work, 'a folder');
  fs.mkdirSync(files.folder);
  app = await startApp('drop');
  data = path.join(app.fx.home, '.local/share/switchboard');
});
after(async () => {
  if (app) await app.close();
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

/**
 * Drops `paths` on the middle of the app's window through lib/xdnd.py and
 * resolves with what the drag source saw (the target's XdndStatus and
 * XdndFinished, the data it asked for); rejects with the source's reason.
 * `dropText(text)` drags text instead, as from an editor or a browser.
 */
const drop = (...paths) => xdnd(['--', ...paths]);
const dropText = (text) => xdnd(['--text', text]);

function xdnd(args) {
  const what = args.filter((a) => a !== '--').join(' ');
  const child = spawn(PYTHON, [path.join(here, 'lib/xdnd.py'), '--pid', String(app.pid), '--title', 'Switchboard', '--timeout', '10', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const done = new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (code === 0) resolve(JSON.parse(out));
      else reject(new Error(`the drop of ${what} failed (xdnd.py exit ${code ?? signal}):\n${err}${out}`));
    });
  });
  return timeBox(done, 40_000, `dropping ${what}`).catch((e) => {
    child.kill('SIGKILL');
    throw e;
  });
}

/** The hidden folders a bundle is unpacked into before Install (`.mcpb-unpack-<pid>-<n>`, engine bundle/archive.rs). */
const unpacking = () => (fs.existsSync(data) ? fs.readdirSync(data).filter((f) => f.startsWith('.mcpb-unpack-')) : []);

/** Back to the Servers view with no dialog open (a failed test may have left one). */
async function start(b) {
  if (await exists(b, 'bundle-cancel')) await (await byTestId(b, 'bundle-cancel')).click();
  if (await exists(b, 'link-text')) await b.keys(['Escape']);
  await eventually(b, async () => !(await exists(b, 'bundle-form')) && !(await exists(b, 'link-text')), 'no dialog is open');
  await gotoView(b, 'servers');
}

const text = async (b, id) => (await (await byTestId(b, id)).getText()).trim();

/** Every file and folder under `dir` (relative), [] when it does not exist. */
function under(dir) {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { recursive: true }).map(String).sort();
}

test('a .mcpb dropped on the window opens its install form; Cancel writes nothing and leaves nothing unpacked', { skip }, async () => {
  const b = app.browser;
  await start(b);
  const servers = fs.readFileSync(app.fx.servers, 'utf8');
  const t0 = Date.now();
  const dropped = await drop(files.bundle);
  // What the page's drop target asked the file manager for, and that it took the drop.
  assert.ok(dropped.asked.some((a) => a.target === 'text/uri-list' && a.answered), JSON.stringify(dropped));
  assert.deepEqual(dropped.finished, { accepted: true, action: 'XdndActionCopy' }, JSON.stringify(dropped));
  console.log(`# the window asked for ${dropped.asked.map((a) => `${a.target}${a.answered ? '' : ' (refused)'}`).join(', ')}; XdndStatus ${dropped.statuses.map((st) => (st.accept ? 'accept' : 'refuse')).join(', ')}`);

  await byTestId(b, 'bundle-form', { timeout: 15_000, displayed: true });
  assert.equal(await text(b, 'bundle-title'), 'Dropped bundle');
  assert.equal(await text(b, 'bundle-version'), '0.4.1');
  assert.match(await text(b, 'bundle-signature'), /unsigned/i, 'packed without signing');
  assert.equal(await (await byTestId(b, 'bundle-name')).getValue(), 'dropped-bundle');
  const progress = await byTestId(b, 'bundle-progress');
  await eventually(b, async () => (await progress.getAttribute('data-state')) === 'ready', 'unpacking reached the end', 20_000);
  console.log(`# drop to unpacked form: ${Date.now() - t0} ms`);
  // It unpacked into a hidden staging folder in the data folder (moved to
  // bundles/<name>/<version> only on Install)...
  const staged = unpacking();
  assert.equal(staged.length, 1, `one staging folder in ${data}: ${JSON.stringify(fs.readdirSync(data))}`);
  assert.ok(under(path.join(data, staged[0])).includes('manifest.json'), `the bundle unpacked into ${staged[0]}`);
  await screenshot(b, 'drop-bundle-form');

  await (await byTestId(b, 'bundle-cancel')).click();
  await eventually(b, async () => !(await exists(b, 'bundle-form')), 'the form closed');
  // ...and Cancel took it away again; nothing was installed or written.
  await until(() => unpacking().length === 0, () => `no staging folder left in ${data}: ${JSON.stringify(fs.readdirSync(data))}`, 10_000);
  assert.equal(fs.existsSync(path.join(data, 'bundles')), false, `no ${data}/bundles folder`);
  assert.equal(fs.readFileSync(app.fx.servers, 'utf8'), servers, 'nothing was written');
  await screenshot(b, 'drop-bundle-cancelled');
});

test('a .json file holding a server entry dropped on the window opens the Add dialog with the entry read', { skip }, async () => {
  const b = app.browser;
  await start(b);
  const servers = fs.readFileSync(app.fx.servers, 'utf8');
  await drop(files.entry);
  await byTestId(b, 'link-form', { timeout: 15_000, displayed: true });
  assert.equal(await (await byTestId(b, 'link-text')).getValue(), files.entryText, 'the file’s text is in the paste box');
  assert.equal(await (await byTestId(b, 'link-name')).getValue(), 'dropped');
  assert.equal(await text(b, 'link-command'), E2E.fixtureServer, 'the exact program');
  await screenshot(b, 'drop-entry-form');
  await b.keys(['Escape']);
  await eventually(b, async () => !(await exists(b, 'link-text')), 'the dialog closed');
  assert.equal(fs.readFileSync(app.fx.servers, 'utf8'), servers, 'nothing was written');
  assert.equal(readJson(app.fx.servers).mcpServers.dropped, undefined);
});

test('a server entry dragged as text (from an editor or a browser) opens the Add dialog with it', { skip }, async () => {
  const b = app.browser;
  await start(b);
  const servers = fs.readFileSync(app.fx.servers, 'utf8');
  const snippet = JSON.stringify({ snippet: { command: E2E.fixtureServer, args: ['--name', 'snippet'] } });
  // No file: the page's own drop handler takes the text (wry passes drops without files on to WebKit).
  await dropText(snippet);
  await byTestId(b, 'link-form', { timeout: 15_000, displayed: true });
  assert.equal(await (await byTestId(b, 'link-text')).getValue(), snippet);
  assert.equal(await (await byTestId(b, 'link-name')).getValue(), 'snippet');
  assert.equal(await text(b, 'link-command'), E2E.fixtureServer);
  await screenshot(b, 'drop-text-form');
  await b.keys(['Escape']);
  await eventually(b, async () => !(await exists(b, 'link-text')), 'the dialog closed');
  assert.equal(fs.readFileSync(app.fx.servers, 'utf8'), servers, 'nothing was written');
});

test('a folder dropped on the window shows an error naming it', { skip }, async () => {
  const b = app.browser;
  await start(b);
  await drop(files.folder);
  const alerts = () => b.execute(() => [...document.querySelectorAll('.toast[role="alert"]')].map((n) => n.textContent.trim()));
  let seen = [];
  await until(async () => (seen = await alerts()).some((t) => t.includes(files.folder)), () => `an error naming ${files.folder}; shown: ${JSON.stringify(seen)}`, 10_000);
  assert.match(seen.find((t) => t.includes(files.folder)), /is a folder/);
  assert.equal(await exists(b, 'bundle-form'), false, 'no install form');
  assert.equal(await exists(b, 'link-text'), false, 'no Add dialog');
  await screenshot(b, 'drop-folder-refused');
});
