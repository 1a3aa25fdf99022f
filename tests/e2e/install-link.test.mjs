// Install links pasted into the Add dialog (issue 31). VS Code's documented
// link form (`vscode:mcp/install?{URL-encoded JSON}`, from
// code.visualstudio.com's MCP developer guide) for the fixture server, which
// refuses to start without FIXTURE_TOKEN, fills the dialog: where it came
// from, the exact command, the target (Switchboard's own list), a password
// field for the token. Nothing is written until Install; then the file holds
// `${keychain:linked.token}`, never the token, and the server connects with
// it and lists its tools. A malformed Cursor link shows its error, a link
// whose program is in /tmp its warning; a `switchboard://install?registry=`
// link opens that server in the Catalog (the fixture registry). axe-core
// finds nothing serious on the dialog, light and dark.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import {
  startApp, gotoView, byTestId, exists, fill, eventually, screenshot, screenshotDark, readJson, waitForStatus, timeBox, E2E,
} from './lib/app.mjs';
import { darkViolations, seriousViolations } from './lib/axe.mjs';

const SECRET = 'fx-token-e2e-7c41d9';

let app;
/** The fixture MCP Registry, for the `registry=` link. */
let registry;
before(async () => {
  const exe = process.env.E2E_REGISTRY_SERVER;
  if (!exe) throw new Error('E2E_REGISTRY_SERVER is not set: run the E2E tests through tests/e2e/run.sh');
  const child = spawn(exe, ['--listen', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const first = await timeBox(new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`registry-server exited (${code}) before LISTENING`)));
  }), 10_000, 'registry-server LISTENING');
  registry = { child, url: String(first).replace(/^LISTENING /, '').trim() };
  app = await startApp('install-link', {
    prepare: (fx) => {
      const settings = fs.existsSync(fx.settings) ? readJson(fx.settings) : {};
      settings.registryUrl = registry.url;
      fs.mkdirSync(path.dirname(fx.settings), { recursive: true });
      fs.writeFileSync(fx.settings, JSON.stringify(settings, null, 2) + '\n');
    },
  });
});
after(async () => {
  try {
    if (registry && registry.child.exitCode === null && registry.child.signalCode === null) {
      const exited = new Promise((r) => registry.child.once('exit', r));
      registry.child.kill('SIGTERM');
      await timeBox(exited, 10_000, 'registry-server exit');
    }
  } finally {
    if (app) await app.close();
  }
});

const text = async (b, id) => (await (await byTestId(b, id)).getText()).trim();

/** VS Code's handler link: `vscode:mcp/install?${encodeURIComponent(JSON.stringify(obj))}`. */
const vscodeLink = (obj) => `vscode:mcp/install?${encodeURIComponent(JSON.stringify(obj))}`;

const fixtureLink = () =>
  vscodeLink({
    name: 'linked',
    command: E2E.fixtureServer,
    args: ['--name', 'linked', '--require-env', 'FIXTURE_TOKEN'],
    env: { FIXTURE_TOKEN: '${input:token}' },
    inputs: [{ type: 'promptString', id: 'token', description: 'Fixture token', password: true }],
  });

/** Puts `value` into a Svelte-bound text area as a paste does (one input event). */
async function paste(b, testId, value) {
  await b.execute((id, v) => {
    const el = document.querySelector(`[data-testid="${id}"]`);
    el.value = v;
    el.dispatchEvent(new Event('input', { bubbles: true }));
  }, testId, value);
}

async function openAdd(b) {
  // A test that failed may have left the dialog open.
  if (await exists(b, 'link-text')) await closeDialog(b);
  await gotoView(b, 'servers');
  await (await byTestId(b, 'add-server-button')).click();
  await byTestId(b, 'link-text', { displayed: true });
}

async function closeDialog(b) {
  await b.keys(['Escape']);
  await eventually(b, async () => !(await exists(b, 'link-text')), 'the dialog closed');
}

test('a pasted VS Code link shows the command and target, installs with the secret in the keychain, and the server connects', async () => {
  const b = app.browser;
  const before = fs.readFileSync(app.fx.servers, 'utf8');
  await openAdd(b);
  await paste(b, 'link-text', fixtureLink());
  const form = await byTestId(b, 'link-form', { timeout: 10_000 });
  await screenshot(b, 'install-link-pasted');
  assert.equal(await form.getAttribute('data-kind'), 'vscode');
  assert.equal(await text(b, 'link-origin'), 'VS Code install link');
  assert.equal(await text(b, 'link-command'), E2E.fixtureServer, 'the exact program');
  const args = await b.execute(() => [...document.querySelectorAll('[data-testid="link-args"] li')].map((li) => li.textContent.trim()));
  assert.deepEqual(args, ['--name', 'linked', '--require-env', 'FIXTURE_TOKEN'], 'each argument as it will be passed');
  assert.equal(await (await byTestId(b, 'link-target')).getValue(), 'switchboard', 'Switchboard’s own list by default');
  assert.equal(await text(b, 'link-target-path'), app.fx.servers);
  assert.equal(await (await byTestId(b, 'link-name')).getValue(), 'linked');
  assert.match(await text(b, 'link-env'), /FIXTURE_TOKEN\s+\$\{keychain:linked\.token\}/, 'the file will refer to the keychain');
  const field = await byTestId(b, 'link-input-token');
  assert.equal(await field.getAttribute('type'), 'password');
  assert.equal(await exists(b, 'add-save'), false, 'the manual form’s button gives way to Install');

  await field.setValue(SECRET);
  await screenshot(b, 'install-link-form');
  await screenshotDark(b, 'install-link-form-dark');
  assert.equal(fs.readFileSync(app.fx.servers, 'utf8'), before, 'nothing is written before Install');

  await (await byTestId(b, 'link-install')).click();
  let file;
  await eventually(b, async () => {
    file = readJson(app.fx.servers);
    return Boolean(file.mcpServers?.linked);
  }, `linked was written to ${app.fx.servers}`, 15_000);
  const linked = file.mcpServers.linked;
  assert.equal(linked.command, E2E.fixtureServer);
  assert.deepEqual(linked.args, ['--name', 'linked', '--require-env', 'FIXTURE_TOKEN']);
  assert.equal(linked.env.FIXTURE_TOKEN, '${keychain:linked.token}');
  assert.ok(!fs.readFileSync(app.fx.servers, 'utf8').includes(SECRET), 'the secret is not in the file');
  for (const kept of ['alpha', 'beta']) assert.ok(file.mcpServers[kept], `${kept} is still there`);

  await eventually(b, async () => !(await exists(b, 'link-text')), 'the dialog closed after installing');
  await gotoView(b, 'servers');
  await byTestId(b, 'server-row-linked', { timeout: 15_000 });
  // It starts only with the token from the keychain in its environment.
  await waitForStatus(b, 'linked', 'connected', { timeout: 30_000 });
  await gotoView(b, 'tools');
  await fill(await byTestId(b, 'tool-search'), 'mcp_linked_');
  await byTestId(b, 'tool-row-mcp_linked_echo', { timeout: 20_000 });
});

test('a malformed Cursor link shows the error naming it; a program in /tmp shows the warning', async () => {
  const b = app.browser;
  await openAdd(b);
  await paste(b, 'link-text', 'cursor://anysphere.cursor-deeplink/mcp/install?name=broken&config=%%%not-base64');
  const err = await byTestId(b, 'link-error', { timeout: 10_000 });
  const said = (await err.getText()).trim();
  assert.match(said, /^Cursor install link: /, said);
  assert.equal(await exists(b, 'link-form'), false, 'no form for a bad link');
  assert.equal(await (await byTestId(b, 'link-text')).getAttribute('aria-invalid'), 'true');

  await paste(b, 'link-text', vscodeLink({ name: 'tmpd', command: '/tmp/unpacked/server', args: ['--serve'] }));
  await byTestId(b, 'link-form', { timeout: 10_000 });
  assert.equal(await exists(b, 'link-error'), false, 'the error is gone');
  const warnings = await b.execute(() =>
    [...document.querySelectorAll('[data-testid="link-warning"]')].map((li) => ({
      kind: li.dataset.kind,
      text: li.textContent.trim(),
      shown: li.getBoundingClientRect().height > 0 && getComputedStyle(li).visibility === 'visible',
    })),
  );
  const temp = warnings.find((w) => w.kind === 'tempPath');
  assert.ok(temp, `a temp-folder warning: ${JSON.stringify(warnings)}`);
  assert.ok(temp.shown, 'the warning is visible');
  assert.match(temp.text, /\/tmp\/unpacked\/server.*temporary folder/);
  assert.equal(await text(b, 'link-command'), '/tmp/unpacked/server');
  await closeDialog(b);
  assert.equal(readJson(app.fx.servers).mcpServers.tmpd, undefined, 'nothing written');
});

test('a Switchboard link naming a registry server opens it in the Catalog instead', async () => {
  const b = app.browser;
  await openAdd(b);
  await paste(b, 'link-text', 'switchboard://install?registry=io.github.switchboard-fixtures/weather&version=1.2.0');
  await eventually(b, async () => !(await exists(b, 'link-text')), 'the dialog closed');
  await eventually(b, async () => (await b.execute(() => location.hash)).startsWith('#/catalog'), 'the Catalog is shown');
  const name = await byTestId(b, 'catalog-name', { timeout: 15_000 });
  await eventually(b, async () => (await name.getValue()) === 'weather', 'the weather server’s install form is open');
  assert.equal(readJson(app.fx.servers).mcpServers.weather, undefined, 'nothing written');
  await (await byTestId(b, 'catalog-back')).click();
});

test('the dialog with a link pasted has no serious or critical accessibility violation, light and dark', async () => {
  const b = app.browser;
  await openAdd(b);
  await paste(b, 'link-text', vscodeLink({ name: 'warned', command: '/tmp/x/server', env: { API_KEY: 'sk-live-0123456789abcdefghij' } }));
  await eventually(b, async () => (await exists(b, 'link-warnings')), 'the warnings show');
  await screenshot(b, 'install-link-warnings');
  await screenshotDark(b, 'install-link-warnings-dark');
  const found = (await seriousViolations(b)).map((v) => `light: ${v}`);
  found.push(...(await darkViolations(b)).map((v) => `dark: ${v}`));
  await closeDialog(b);
  assert.deepEqual(found, [], `\n${found.join('\n')}`);
});
