// Copy, move and rename a server from its detail (the same engine path as
// `switchboard copy --to` / `rename`): each file is written in its client's
// own format, the target client that reads its config only at start is
// named, and a client that cannot hold the server says why before anything
// is written.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startApp, gotoView, byTestId, exists, screenshot, eventually, clickUntil, readJson } from './lib/app.mjs';

let app;
before(async () => {
  app = await startApp('copy-move-rename');
});
after(async () => {
  if (app) await app.close();
});

const text = async (b, id) => (await (await byTestId(b, id)).getText()).trim();

async function openDetail(b, name) {
  await gotoView(b, 'servers');
  const row = await byTestId(b, `server-row-${name}`, { timeout: 20_000 });
  await clickUntil(b, row, () => exists(b, `copy-to-${name}`), `the detail of ${name} opens`);
}

async function chooseTarget(b, id) {
  const select = await byTestId(b, 'copy-target');
  await select.selectByAttribute('value', id);
}

/** Two animation frames: what the DOM holds is painted before a screenshot. */
const painted = (b) => b.executeAsync((done) => requestAnimationFrame(() => requestAnimationFrame(() => done())));

test('Copy to… Claude Desktop writes its entry in its file and says to restart Claude Desktop', async () => {
  const b = app.browser;
  const cursorFile = path.join(app.fx.home, '.cursor/mcp.json');
  const desktopFile = path.join(app.fx.home, '.config/Claude/claude_desktop_config.json');
  const cursorBefore = fs.readFileSync(cursorFile);
  await openDetail(b, 'cursor-user-only');
  await clickUntil(b, await byTestId(b, 'copy-to-cursor-user-only'), () => exists(b, 'copy-target'), 'the copy dialog opens');
  await chooseTarget(b, 'claude-desktop');
  await eventually(b, async () => (await exists(b, 'copy-preview')) && (await text(b, 'copy-preview')).includes('@upstash/context7-mcp'), 'the preview shows the entry');
  await painted(b);
  await screenshot(b, 'copy-preview');
  await clickUntil(b, await byTestId(b, 'copy-confirm'), () => exists(b, 'copy-done'), 'the copy is written');
  const done = await text(b, 'copy-done');
  assert.match(done, /Copied "cursor-user-only" to Claude Desktop/);
  assert.match(done, /Claude Desktop reads its config only when it starts/);
  await screenshot(b, 'copy-done');
  const entry = readJson(desktopFile).mcpServers['cursor-user-only'];
  assert.deepEqual(entry, { command: 'npx', args: ['-y', '@upstash/context7-mcp'] });
  assert.deepEqual(fs.readFileSync(cursorFile), cursorBefore, 'a copy leaves Cursor\'s file as it was');
  await (await byTestId(b, 'copy-close')).click();
});

test('Move to… VS Code writes its "servers" entry and takes it out of Cursor\'s file', async () => {
  const b = app.browser;
  const cursorFile = path.join(app.fx.home, '.cursor/mcp.json');
  const vscodeFile = path.join(app.fx.home, '.config/Code/User/mcp.json');
  await openDetail(b, 'broken-top');
  await clickUntil(b, await byTestId(b, 'move-to-broken-top'), () => exists(b, 'copy-target'), 'the move dialog opens');
  await chooseTarget(b, 'vscode-user');
  await eventually(b, async () => (await exists(b, 'copy-preview')) && (await text(b, 'copy-preview')).includes('server-sequential-thinking'), 'the preview shows the entry');
  await clickUntil(b, await byTestId(b, 'copy-confirm'), () => exists(b, 'copy-done'), 'the move is written');
  assert.match(await text(b, 'copy-done'), /Moved "broken-top" to VS Code.*picks it up by itself/);
  // VS Code's file is JSON with comments: read it as text and check the entry's place.
  const vs = fs.readFileSync(vscodeFile, 'utf8');
  assert.match(vs, /"servers"\s*:\s*\{[\s\S]*"broken-top"/, vs);
  assert.ok(!('broken-top' in readJson(cursorFile).mcpServers), 'moved out of Cursor\'s file');
  await (await byTestId(b, 'copy-close')).click();
});

test('a client that cannot hold the server says why and nothing is written', async () => {
  const b = app.browser;
  const codexFile = path.join(app.fx.home, '.codex/config.toml');
  const before = fs.readFileSync(codexFile);
  await openDetail(b, 'sentry-cc');
  await clickUntil(b, await byTestId(b, 'copy-to-sentry-cc'), () => exists(b, 'copy-target'), 'the copy dialog opens');
  await chooseTarget(b, 'codex-user');
  await eventually(b, async () => (await exists(b, 'copy-refusal')) && /Codex CLI cannot hold "sentry-cc"/.test(await text(b, 'copy-refusal')), 'the refusal is shown');
  assert.equal(await (await byTestId(b, 'copy-confirm')).isEnabled(), false, 'nothing to confirm');
  await painted(b);
  await screenshot(b, 'copy-refused');
  assert.deepEqual(fs.readFileSync(codexFile), before);
  await b.keys('Escape');
  await eventually(b, async () => !(await exists(b, 'copy-target')), 'Escape closes the dialog');
});

test('Rename renames the key in its file and shows the server under its new name', async () => {
  const b = app.browser;
  const cursorFile = path.join(app.fx.home, '.cursor/mcp.json');
  await openDetail(b, 'vars-demo');
  await clickUntil(b, await byTestId(b, 'rename-vars-demo'), () => exists(b, 'rename-input'), 'the rename dialog opens');
  const input = await byTestId(b, 'rename-input');
  await input.setValue('notes demo');
  await eventually(b, async () => !(await (await byTestId(b, 'rename-confirm')).isEnabled()), 'a name with a space is refused');
  await input.setValue('notes-demo');
  await clickUntil(b, await byTestId(b, 'rename-confirm'), () => exists(b, 'copy-done'), 'the rename is written');
  const servers = readJson(cursorFile).mcpServers;
  assert.ok(servers['notes-demo'] && !servers['vars-demo'], JSON.stringify(Object.keys(servers)));
  assert.deepEqual(servers['notes-demo'].args, ['--root', '${userHome}/notes'], 'the entry is kept as written');
  await (await byTestId(b, 'copy-close')).click();
  await eventually(b, async () => exists(b, 'rename-notes-demo'), 'the detail shows the server under its new name', 15_000);
});

test('switching off a Claude Desktop server leaves a note to restart Claude Desktop', async () => {
  const b = app.browser;
  await gotoView(b, 'servers');
  await byTestId(b, 'server-row-claude-desktop-only', { timeout: 20_000 });
  const toggle = await b.$('[role="switch"][aria-label="Disable claude-desktop-only (writes its config file)"]');
  assert.ok(await toggle.isExisting(), 'the row has its switch');
  await toggle.scrollIntoView({ block: 'center' });
  await toggle.click();
  try {
    await eventually(b, async () => (await b.execute(() => document.querySelector('.toast.note')?.textContent ?? '')).includes('Claude Desktop'), 'the note appears', 15_000);
  } catch (e) {
    const toast = await b.execute(() => document.querySelector('.toast')?.outerHTML ?? 'no toast');
    const src = await b.execute(() => document.querySelector('[data-testid="server-source-claude-desktop-only"]')?.dataset.source);
    const entry = JSON.stringify(readJson(path.join(app.fx.home, '.config/Claude/claude_desktop_config.json')).mcpServers['claude-desktop-only'] ?? 'gone');
    const checked = await toggle.getAttribute('aria-checked').catch(() => '?');
    throw new Error(`${e.message}\ntoast: ${toast}\nsource: ${src}\nentry: ${entry}\nswitch checked: ${checked}`);
  }
  const note = await b.execute(() => document.querySelector('.toast.note').textContent);
  assert.match(note, /Disabled "claude-desktop-only"\. Claude Desktop reads its config only when it starts: quit it completely and open it again to use the change\./);
  const file = path.join(app.fx.home, '.config/Claude/claude_desktop_config.json');
  // Claude Desktop has no off switch: Switchboard keeps the entry aside ("parks" it) until it is switched on again.
  await eventually(b, async () => !('claude-desktop-only' in readJson(file).mcpServers), 'the entry is out of Claude Desktop\'s file');
});
