// Claude Desktop extensions (.mcpb) in the app (issue 31). Bundles are
// packed and self-signed by the real `@anthropic-ai/mcpb` CLI (tests/npm):
// a node MCP server that starts only with the right API key. The file is
// picked in the real GTK file chooser ("Open a .mcpb file…" in the Add
// dialog, driven with xdotool as a person types a path). The form shows the
// extension, its signature, that it runs here, unpacking reaching the end,
// a password field for the key and the exact command with the key kept in
// the keychain; nothing is written before Install. Installed, the file holds
// `${keychain:…}`, the server connects (it would not without the key) and
// its page names the extension. "Update from a .mcpb…" on that page opens
// a newer version with the settings kept: the server runs from the new
// folder and the old one is gone. Remove takes the files along. A tampered
// bundle is refused naming the file. axe-core finds nothing serious on the
// form, light and dark.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import { execFileSync, spawnSync } from 'node:child_process';
import {
  startApp, gotoView, byTestId, exists, eventually, screenshot, screenshotDark, readJson, waitForStatus, until, clickUntil,
} from './lib/app.mjs';
import { darkViolations, seriousViolations } from './lib/axe.mjs';

const SECRET = 'mcpb-e2e-key-51d0';
const ROOT = path.resolve(import.meta.dirname, '../..');
const MCPB = path.join(ROOT, 'tests/npm/node_modules/.bin/mcpb');

/** The mcpb CLI and xdotool, or why this file cannot run (fails under CI). */
function missing() {
  if (!fs.existsSync(MCPB)) return `${MCPB} (npm ci in tests/npm)`;
  if (spawnSync('xdotool', ['version']).status !== 0) return 'xdotool (.ci/install-system-packages)';
  return null;
}
const lacking = missing();
if (lacking && process.env.CI) throw new Error(`install-bundle E2E needs ${lacking}`);
const skip = lacking ? `needs ${lacking}` : false;

const manifest = (version) => ({
  manifest_version: '0.3',
  name: 'hello-bundle',
  display_name: 'Hello bundle',
  version,
  description: 'A fixture extension for Switchboard’s tests',
  author: { name: 'Switchboard tests' },
  server: {
    type: 'node',
    entry_point: 'server/index.js',
    mcp_config: {
      command: 'node',
      args: ['${__dirname}/server/index.js', '--greeting', '${user_config.greeting}'],
      env: { API_KEY: '${user_config.api_key}' },
    },
  },
  user_config: {
    api_key: { type: 'string', title: 'API key', description: 'The key it starts with', sensitive: true, required: true },
    greeting: { type: 'string', title: 'Greeting', description: 'Said first', default: 'hello' },
  },
  compatibility: { platforms: ['darwin', 'win32', 'linux'], runtimes: { node: '>=16.0.0' } },
});

/** A newline-delimited JSON-RPC server that exits unless API_KEY is right (checked by its hash). */
const serverJs = () => `const key = process.env.API_KEY || "";
if (require("crypto").createHash("sha256").update(key).digest("hex") !== "${crypto.createHash('sha256').update(SECRET).digest('hex')}") {
  process.stderr.write("API_KEY is missing or wrong\\n");
  process.exit(3);
}
const send = (m) => process.stdout.write(JSON.stringify(m) + "\\n");
require("readline").createInterface({ input: process.stdin }).on("line", (line) => {
  let m;
  try { m = JSON.parse(line); } catch { return; }
  if (m.id === undefined) return;
  if (m.method === "initialize") send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "hello-bundle", version: "1" } } });
  else if (m.method === "tools/list") send({ jsonrpc: "2.0", id: m.id, result: { tools: [{ name: "say_hello", description: "Says hello", inputSchema: { type: "object", properties: {} } }] } });
  else if (m.method === "ping") send({ jsonrpc: "2.0", id: m.id, result: {} });
  else send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "no such method" } });
});
`;

/** Packs (and self-signs) the extension at `version` into `<dir>/hello-<version>.mcpb`. */
function pack(dir, version) {
  const ext = path.join(dir, `ext-${version}`);
  fs.mkdirSync(path.join(ext, 'server'), { recursive: true });
  fs.writeFileSync(path.join(ext, 'manifest.json'), JSON.stringify(manifest(version), null, 2));
  fs.writeFileSync(path.join(ext, 'server/index.js'), serverJs());
  const out = path.join(dir, `hello-${version}.mcpb`);
  execFileSync(MCPB, ['pack', ext, out], { cwd: dir, stdio: 'pipe', timeout: 60_000 });
  execFileSync(MCPB, ['sign', out, '--self-signed'], { cwd: dir, stdio: 'pipe', timeout: 60_000 });
  return out;
}

let app;
let work;
let bundles = {};
let data;
before(async () => {
  if (skip) return;
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'switchboard-mcpb-'));
  bundles = { v1: pack(work, '1.2.0'), v2: pack(work, '1.3.0') };
  const tampered = path.join(work, 'tampered.mcpb');
  const bytes = fs.readFileSync(bundles.v1);
  bytes[Math.floor(bytes.length / 3)] ^= 0x20;
  fs.writeFileSync(tampered, bytes);
  bundles.tampered = tampered;
  app = await startApp('install-bundle');
  data = path.join(app.fx.home, '.local/share/switchboard');
});
after(async () => {
  if (app) await app.close();
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

const text = async (b, id) => (await (await byTestId(b, id)).getText()).trim();
const xdotool = (...args) => execFileSync('xdotool', args, { encoding: 'utf8', timeout: 10_000 }).trim();

/**
 * Picks `file` in the file chooser that `opens()` makes the app show, as a
 * person does: the file is put alone in the user's Downloads folder first
 * (the chooser opens there for a .mcpb, when that folder exists as it is
 * opened), then its row is chosen with the keyboard. Returns the path the
 * app was given.
 */
async function pickInDialog(file, opens) {
  const downloads = path.join(app.fx.home, 'Downloads');
  fs.rmSync(downloads, { recursive: true, force: true });
  fs.mkdirSync(downloads, { recursive: true });
  const picked = path.join(downloads, path.basename(file));
  fs.copyFileSync(file, picked);
  await opens();
  let dialog;
  await until(() => {
    const ids = spawnSync('xdotool', ['search', '--onlyvisible', '--pid', String(app.pid), '--name', '.*'], { encoding: 'utf8' })
      .stdout.split('\n').filter(Boolean);
    // The chooser is the app's other titled window (GTK's own helper windows have no title).
    dialog = ids.find((id) => !['', 'Switchboard'].includes(xdotool('getwindowname', id)));
    return Boolean(dialog);
  }, 'the file chooser opened', 15_000);
  xdotool('windowfocus', '--sync', dialog);
  const shown = () =>
    spawnSync('xdotool', ['search', '--onlyvisible', '--pid', String(app.pid), '--name', '.*'], { encoding: 'utf8' })
      .stdout.split('\n').includes(dialog);
  try {
    const end = Date.now() + 15_000;
    while (shown()) {
      if (Date.now() > end) throw new Error(`the file chooser did not take ${picked} and close within 15 s`);
      // The list shows the one file (it may still be loading): first row, Enter.
      spawnSync('xdotool', ['key', 'Home', 'Return']);
      // Then wait for it to close before pressing again: a second Return sent
      // while the chooser closes reaches the app's window, where it presses
      // the focused "Open a .mcpb file…" again and opens a second chooser.
      await until(() => !shown(), 'the chooser closes', 3_000).catch(() => {});
    }
  } catch (e) {
    spawnSync('import', ['-window', 'root', path.join(import.meta.dirname, 'artifacts', 'install-bundle-chooser.png')]);
    throw e;
  }
  return picked;
}

/** Focuses a button and presses Enter on it, as a keyboard user does. */
async function pressButton(b, testId) {
  const el = await byTestId(b, testId);
  await b.execute((e) => e.focus(), el);
  await b.keys(['Enter']);
}

async function openAdd(b) {
  if (await exists(b, 'bundle-form')) await (await byTestId(b, 'bundle-cancel')).click();
  if (await exists(b, 'link-text')) await b.keys(['Escape']);
  await gotoView(b, 'servers');
  await (await byTestId(b, 'add-server-button')).click();
  await byTestId(b, 'open-bundle', { displayed: true });
}

/** The server's page, by its address (`#/servers/<name>`), as a link to it opens it. */
async function openServer(b, name) {
  await b.execute((n) => (location.hash = `#/servers/${encodeURIComponent(n)}`), name);
  await byTestId(b, `server-bundle-${name}`, { timeout: 10_000 });
}

test('an extension picked in the Add dialog shows its form, installs with the key in the keychain, and connects', { skip }, async () => {
  const b = app.browser;
  const before = fs.readFileSync(app.fx.servers, 'utf8');
  await openAdd(b);
  await pickInDialog(bundles.v1, async () => (await byTestId(b, 'open-bundle')).click());
  await byTestId(b, 'bundle-form', { timeout: 15_000 });
  assert.equal(await text(b, 'bundle-title'), 'Hello bundle');
  assert.equal(await text(b, 'bundle-version'), '1.2.0');
  assert.equal(await (await byTestId(b, 'bundle-signature')).getAttribute('data-status'), 'self_signed');
  assert.match(await text(b, 'bundle-compatible'), /^Runs on this computer/);
  await eventually(b, async () => (await (await byTestId(b, 'bundle-progress')).getAttribute('data-state')) === 'ready', 'unpacking finished', 20_000);
  const key = await byTestId(b, 'bundle-input-api_key');
  assert.equal(await key.getAttribute('type'), 'password');
  assert.equal(await (await byTestId(b, 'bundle-input-greeting')).getValue(), 'hello', 'the default');
  assert.equal(await (await byTestId(b, 'bundle-target')).getValue(), 'switchboard');
  assert.equal(await (await byTestId(b, 'bundle-name')).getValue(), 'hello-bundle');
  const dir = path.join(data, 'bundles/hello-bundle/1.2.0');
  await eventually(b, async () => (await text(b, 'bundle-command')) === 'node', 'the preview shows the command');
  const args = await b.execute(() => [...document.querySelectorAll('[data-testid="bundle-args"] li')].map((li) => li.textContent.trim()));
  assert.deepEqual(args, [path.join(dir, 'server/index.js'), '--greeting', 'hello']);
  assert.match(await text(b, 'bundle-env'), /API_KEY\s+\$\{keychain:hello-bundle\.api_key\}/);
  assert.match(await text(b, 'bundle-where'), new RegExp(`to ${app.fx.servers.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
  assert.equal(fs.readFileSync(app.fx.servers, 'utf8'), before, 'nothing written before Install');
  assert.equal(fs.existsSync(path.join(data, 'bundles')), false, 'nothing unpacked where anything reads it');
  await screenshot(b, 'install-bundle-form');
  await screenshotDark(b, 'install-bundle-form-dark');
  assert.deepEqual(await seriousViolations(b), [], 'axe: the bundle form (light)');
  assert.deepEqual(await darkViolations(b), [], 'axe: the bundle form (dark)');

  // Without the key: refused in the form, nothing written.
  await (await byTestId(b, 'bundle-install')).click();
  await eventually(b, async () => (await b.execute(() => document.querySelector('[data-testid="bundle-field-api_key"] .error')?.textContent?.trim() ?? '')) === 'Required.', 'the key is asked for');
  assert.equal(fs.readFileSync(app.fx.servers, 'utf8'), before);

  await key.setValue(SECRET);
  const greeting = await byTestId(b, 'bundle-input-greeting');
  await greeting.clearValue();
  await greeting.setValue('hi there');
  await (await byTestId(b, 'bundle-install')).click();
  let entry;
  await eventually(b, async () => {
    entry = readJson(app.fx.servers).mcpServers?.['hello-bundle'];
    return Boolean(entry);
  }, 'hello-bundle was written', 20_000);
  assert.equal(entry.command, 'node');
  assert.deepEqual(entry.args, [path.join(dir, 'server/index.js'), '--greeting', 'hi there']);
  assert.equal(entry.env.API_KEY, '${keychain:hello-bundle.api_key}');
  assert.ok(!fs.readFileSync(app.fx.servers, 'utf8').includes(SECRET), 'the key is in no file');
  assert.ok(fs.existsSync(path.join(dir, 'server/index.js')), 'unpacked into the data folder');
  await eventually(b, async () => !(await exists(b, 'bundle-form')), 'the form closed');
  // It exits without the key: connected means the keychain gave it.
  await waitForStatus(b, 'hello-bundle', 'connected', { timeout: 30_000 });
  await openServer(b, 'hello-bundle');
  assert.match(await text(b, 'server-bundle-hello-bundle'), /Hello bundle\s+1\.2\.0/);
  // The key is read from the keychain at launch: no "not set" warning about it.
  const page = await b.execute(() => document.querySelector('.detail')?.textContent ?? '');
  assert.ok(!/keychain:hello-bundle\.api_key\} is not set/.test(page), 'no warning about the keychain reference');
  await screenshot(b, 'install-bundle-detail');
  // Six buttons in a half-width card (the window is 1200 pixels wide): all
  // of them whole inside it, none cut off at its edge.
  const cut = await b.execute(() => {
    const card = document.querySelector('.head-actions').closest('.card').getBoundingClientRect();
    return [...document.querySelectorAll('.head-actions .button')]
      .filter((el) => {
        const r = el.getBoundingClientRect();
        return r.left < card.left || r.right > card.right || r.width < el.scrollWidth;
      })
      .map((el) => el.textContent.trim());
  });
  assert.deepEqual(cut, [], 'every Definition button is whole inside its card');
});

test('Update from a newer .mcpb keeps the settings and the key and removes the old version; Remove takes the files', { skip }, async () => {
  const b = app.browser;
  await openServer(b, 'hello-bundle');
  const update = await byTestId(b, 'update-bundle-hello-bundle');
  await update.scrollIntoView({ block: 'center' });
  await pickInDialog(bundles.v2, () => update.click());
  await byTestId(b, 'bundle-form', { timeout: 15_000 });
  assert.equal(await text(b, 'bundle-version'), '1.3.0');
  const name = await byTestId(b, 'bundle-name');
  assert.equal(await name.getValue(), 'hello-bundle');
  assert.equal(await name.getAttribute('readonly'), 'true');
  assert.equal(await (await byTestId(b, 'bundle-input-greeting')).getValue(), 'hi there', 'the current setting');
  assert.equal(await (await byTestId(b, 'bundle-input-api_key')).getValue(), '', 'the key is not shown');
  assert.match(await (await byTestId(b, 'bundle-input-api_key')).getAttribute('placeholder'), /keep the current value/);
  assert.equal(await text(b, 'bundle-install'), 'Update');
  await screenshot(b, 'install-bundle-update');
  await clickUntil(b, await byTestId(b, 'bundle-install'), async () => !(await exists(b, 'bundle-form')), 'the update is installed', { wait: 15_000 });
  const newDir = path.join(data, 'bundles/hello-bundle/1.3.0');
  await eventually(b, async () => (readJson(app.fx.servers).mcpServers?.['hello-bundle']?.args?.[0] ?? '') === path.join(newDir, 'server/index.js'), 'it runs from 1.3.0', 20_000);
  assert.deepEqual(readJson(app.fx.servers).mcpServers['hello-bundle'].args.slice(1), ['--greeting', 'hi there']);
  assert.equal(fs.existsSync(path.join(data, 'bundles/hello-bundle/1.2.0')), false, 'the old version is gone');
  await waitForStatus(b, 'hello-bundle', 'connected', { timeout: 30_000 });
  await openServer(b, 'hello-bundle');
  await eventually(b, async () => /1\.3\.0/.test(await text(b, 'server-bundle-hello-bundle')), 'the page names 1.3.0');

  // Pressed from the keyboard (focus, Enter): after the native chooser closed,
  // WebKit under Xvfb may not repaint the page, and pointer hit-testing of
  // the header's buttons goes by what was painted.
  await pressButton(b, 'remove-hello-bundle');
  await byTestId(b, 'remove-confirm');
  await pressButton(b, 'remove-confirm');
  await eventually(b, async () => !readJson(app.fx.servers).mcpServers?.['hello-bundle'], 'removed from the file', 15_000);
  await eventually(b, async () => !fs.existsSync(path.join(data, 'bundles/hello-bundle')), 'its files are gone', 15_000);
});

test('a tampered extension is refused naming the file, with nothing unpacked', { skip }, async () => {
  const b = app.browser;
  await openAdd(b);
  const picked = await pickInDialog(bundles.tampered, async () => (await byTestId(b, 'open-bundle')).click());
  const err = await byTestId(b, 'bundle-open-error', { timeout: 15_000 });
  const said = (await err.getText()).trim();
  assert.ok(said.includes(picked), said);
  assert.match(said, /signature is invalid/);
  assert.equal(fs.existsSync(path.join(data, 'bundles/hello-bundle')), false);
  assert.deepEqual(fs.readdirSync(data).filter((n) => n.startsWith('.mcpb-')), [], 'no unpacking left behind');
  await screenshot(b, 'install-bundle-tampered');
  await b.keys(['Escape']);
});
