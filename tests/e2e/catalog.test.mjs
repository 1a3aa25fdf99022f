// The Catalog (issue 13) in the real app, against the fixture registry
// (registry-server over tests/fixtures/registry, named in Settings'
// registryUrl): search as you type, open a server, fill the form generated
// from its server.json (a required secret, a choice, a positional
// argument), install into Switchboard's own list, and the server appears in
// Servers and connects: its npm package `@switchboard-fixtures/weather` is
// run by run.sh's `npx` stub as the fixture server, which refuses to start
// unless WEATHER_API_KEY reached it (from the keychain). A server whose
// runtime (dnx) is not installed is explained and not installed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import {
  startApp, gotoView, byTestId, fill, waitForStatus, screenshot, eventually, readJson, exists, timeBox, clickUntil, E2E, processesMatching,
} from './lib/app.mjs';

/** Two animation frames: what the DOM holds is painted before a screenshot. */
const painted = (b) => b.executeAsync((done) => requestAnimationFrame(() => requestAnimationFrame(() => done())));

const SECRET = 'e2e-weather-key-5b3f';
const NOTES_TOKEN = 'e2e-notes-token-77c1';
let app;
let registry;
let registryUrl;

async function startRegistry() {
  const exe = process.env.E2E_REGISTRY_SERVER;
  if (!exe) throw new Error('E2E_REGISTRY_SERVER is not set: run the E2E tests through tests/e2e/run.sh');
  const child = spawn(exe, ['--listen', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout });
  const first = await timeBox(new Promise((resolve, reject) => {
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`registry-server exited (${code}) before LISTENING`)));
  }), 10_000, 'registry-server LISTENING');
  const url = String(first).replace(/^LISTENING /, '').trim();
  return { child, url };
}

before(async () => {
  registry = await startRegistry();
  registryUrl = registry.url;
  app = await startApp('catalog', {
    // A server of Switchboard's own list with a token written in the file.
    extraServers: { notes: { command: E2E.fixtureServer, args: ['--name', 'notes', '--require-env', 'NOTES_TOKEN'], env: { NOTES_TOKEN: NOTES_TOKEN } } },
    prepare: (fx) => {
      const settings = fs.existsSync(fx.settings) ? readJson(fx.settings) : {};
      settings.registryUrl = registryUrl;
      fs.mkdirSync(path.dirname(fx.settings), { recursive: true });
      fs.writeFileSync(fx.settings, JSON.stringify(settings, null, 2) + '\n');
    },
  });
});

const ended = (child) => child.exitCode !== null || child.signalCode !== null;

after(async () => {
  try {
    // First: closing the app checks that nothing started from the run's bin folder is left.
    if (registry && !ended(registry.child)) {
      const exited = new Promise((r) => registry.child.once('exit', r));
      registry.child.kill('SIGTERM');
      await timeBox(exited, 10_000, 'registry-server exit');
    }
  } finally {
    if (app) await app.close();
  }
});

const WEATHER = 'io.github.switchboard-fixtures/weather';

test('search, open, fill the generated form, install: the server connects with its secret from the keychain', async () => {
  const b = app.browser;
  await gotoView(b, 'catalog');
  const search = await byTestId(b, 'catalog-search', { displayed: true });
  await fill(search, 'weath');
  await byTestId(b, `catalog-result-${WEATHER}`, { timeout: 10_000 });
  await eventually(b, async () => !(await exists(b, 'catalog-result-io.github.switchboard-fixtures/toolbox')), 'search narrowed the list to weather servers');
  assert.ok(!(await exists(b, 'catalog-result-com.example/gone-weather')), 'a deleted server is not listed');
  const legacy = await byTestId(b, 'catalog-status-com.example/legacy-weather');
  assert.equal((await legacy.getText()).trim(), 'deprecated');
  const result = await byTestId(b, `catalog-result-${WEATHER}`);
  const text = await result.getText();
  for (const want of ['Weather', '1.2.0', 'npm', 'pypi', 'remote', 'Repository']) assert.ok(text.includes(want), `the result shows ${want}: ${text}`);
  await screenshot(b, 'catalog');

  const open = await byTestId(b, `catalog-open-${WEATHER}`);
  await clickUntil(b, open, () => exists(b, 'catalog-detail'), 'the weather server opened');
  const runtime = await byTestId(b, 'catalog-runtime', { timeout: 10_000 });
  assert.match(await runtime.getText(), /npx is installed/);
  const versions = await (await byTestId(b, 'catalog-version')).getText();
  assert.ok(versions.includes('1.2.0') && versions.includes('1.0.0'), `every version is offered: ${versions}`);

  // A choice (select), a positional file path, a required secret (password input).
  const choice = await byTestId(b, 'catalog-input-arg:--name');
  assert.equal((await choice.getTagName()).toLowerCase(), 'select');
  await choice.selectByAttribute('value', 'weather-slow');
  const dataDir = path.join(app.fx.home, 'weather-data');
  fs.mkdirSync(dataDir, { recursive: true });
  await fill(await byTestId(b, 'catalog-input-arg:data_dir'), dataDir);
  const secret = await byTestId(b, 'catalog-input-env:WEATHER_API_KEY');
  assert.equal(await secret.getAttribute('type'), 'password', 'a secret is a password input');
  assert.equal(await (await byTestId(b, 'catalog-input-env:WEATHER_UNITS')).getValue(), 'metric', 'defaults are filled in');
  assert.equal(await (await byTestId(b, 'catalog-install')).isEnabled(), false, 'Install waits for the required secret');
  await fill(secret, SECRET);
  await byTestId(b, 'catalog-keychain-note');
  // Into Cursor's file the secret would be plain text: said, with Switchboard's list offered instead.
  await (await byTestId(b, 'catalog-target')).selectByAttribute('value', 'cursor-user');
  const warning = await byTestId(b, 'catalog-plaintext-warning');
  assert.match(await warning.getText(), /Cursor keeps secret values in plain text/);
  await (await byTestId(b, 'catalog-use-own')).click();
  await byTestId(b, 'catalog-keychain-note');
  assert.equal(await (await byTestId(b, 'catalog-target')).getValue(), 'switchboard');
  await screenshot(b, 'catalog-install-form');

  const install = await byTestId(b, 'catalog-install');
  await clickUntil(b, install, () => exists(b, 'catalog-installed'), 'the server was installed');
  const own = readJson(app.fx.servers);
  const w = own.mcpServers.weather;
  assert.ok(w, `weather is in ${app.fx.servers}`);
  assert.equal(w.command, 'npx');
  assert.deepEqual(w.args, ['-y', '@switchboard-fixtures/weather@1.2.0', '--require-env', 'WEATHER_API_KEY', '--name', 'weather-slow', dataDir]);
  assert.equal(w.env.WEATHER_API_KEY, '${keychain:weather.WEATHER_API_KEY}');
  assert.ok(!fs.readFileSync(app.fx.servers, 'utf8').includes(SECRET), 'the secret is not in the file');
  assert.ok(!(await exists(b, 'catalog-input-env:WEATHER_API_KEY')), 'the form with the secret is gone');
  const test = await byTestId(b, 'catalog-test-result');
  await eventually(b, async () => /Connected to "weather"/.test(await test.getText()), 'Test connection of the installed server succeeded', 30_000);
  assert.ok(!(await b.getPageSource()).includes(SECRET), 'the secret is nowhere in the page');
  await painted(b);
  await screenshot(b, 'catalog-installed');

  await gotoView(b, 'servers');
  await byTestId(b, 'server-row-weather', { timeout: 15_000 });
  await waitForStatus(b, 'weather', 'connected', { timeout: 30_000 });
});

test('a server whose runtime is missing is explained and not installed', async () => {
  const b = app.browser;
  await gotoView(b, 'catalog');
  await fill(await byTestId(b, 'catalog-search', { displayed: true }), 'nuget');
  const open = await byTestId(b, 'catalog-open-io.github.switchboard-fixtures/dotnet-notes', { timeout: 10_000 });
  await clickUntil(b, open, () => exists(b, 'catalog-detail'), 'the dotnet server opened');
  const runtime = await byTestId(b, 'catalog-runtime', { timeout: 10_000 });
  const said = await runtime.getText();
  assert.match(said, /dnx is not installed on this computer/);
  assert.match(said, /\.NET 10 SDK/);
  assert.equal(await (await byTestId(b, 'catalog-install')).isEnabled(), false, 'Install is not offered without the runtime');
  await painted(b);
  await screenshot(b, 'catalog-missing-runtime');
  assert.ok(!readJson(app.fx.servers).mcpServers['dotnet-notes']);
});

test("a value already in Switchboard's list moves into the keychain and the server still starts", async () => {
  const b = app.browser;
  await gotoView(b, 'servers');
  await waitForStatus(b, 'notes', 'connected', { timeout: 30_000 });
  const row = await byTestId(b, 'server-row-notes', { timeout: 20_000 });
  const notesPids = () => processesMatching('--require-env NOTES_TOKEN').map((p) => p.pid);
  const before = notesPids();
  assert.equal(before.length, 1, 'notes runs once');
  const keepId = 'keep-in-keychain-notes-env-NOTES_TOKEN';
  await clickUntil(b, row, () => exists(b, keepId), 'the detail of notes opens');
  await clickUntil(b, await byTestId(b, keepId), () => exists(b, 'in-keychain-notes-env-NOTES_TOKEN'), 'NOTES_TOKEN is kept in the keychain');
  const text = fs.readFileSync(app.fx.servers, 'utf8');
  assert.equal(JSON.parse(text).mcpServers.notes.env.NOTES_TOKEN, '${keychain:notes.NOTES_TOKEN}');
  assert.ok(!text.includes(NOTES_TOKEN), 'the token left the file');
  // Restarted with the changed definition, it gets the token from the keychain
  // (the fixture server exits at once without it).
  await eventually(b, async () => {
    const now = notesPids();
    return now.length === 1 && now[0] !== before[0];
  }, 'notes was restarted with its new definition', 20_000);
  await waitForStatus(b, 'notes', 'connected', { timeout: 30_000 });
  const pid = notesPids()[0];
  assert.equal(fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').find((kv) => kv.startsWith('NOTES_TOKEN=')), `NOTES_TOKEN=${NOTES_TOKEN}`, 'the value came back from the keychain');
});

test('offline, the Catalog shows the cached results and says from when', async () => {
  const b = app.browser;
  const exited = new Promise((r) => registry.child.once('exit', r));
  registry.child.kill('SIGTERM');
  await timeBox(exited, 10_000, 'registry-server exit');
  await gotoView(b, 'catalog');
  const back = await exists(b, 'catalog-back');
  if (back) await (await byTestId(b, 'catalog-back')).click();
  await fill(await byTestId(b, 'catalog-search', { displayed: true }), 'weath');
  const note = await byTestId(b, 'catalog-offline', { timeout: 15_000 });
  const said = await note.getText();
  assert.match(said, /could not be reached/);
  assert.match(said, /Showing what was fetched on/);
  await byTestId(b, `catalog-result-${WEATHER}`);
  await painted(b);
  await screenshot(b, 'catalog-offline');
});
