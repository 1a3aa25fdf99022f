// Edits that lose nothing: changing one argument of a server in the Edit form
// changes only that argument in the client's own file (Cline JSON, Codex TOML,
// Cursor JSON, Switchboard's servers.json); every other byte — keys the form does not show, keys
// Switchboard does not know, comments, other servers — stays as it was. And a
// file changed by someone else while the form is open is never overwritten:
// the conflict is shown with what changed, and "Save anyway" lays the user's
// edit on top of the other change.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  startApp, gotoView, byTestId, exists, eventually, screenshot, screenshotDark, timeBox, E2E,
} from './lib/app.mjs';

const CLINE = '.config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json';
const CODEX = '.codex/config.toml';
const CURSOR = '.cursor/mcp.json';

let app;
const file = (rel) => path.join(app.fx.home, rel);
const read = (rel) => fs.readFileSync(file(rel), 'utf8');

/** Adds hand-written entries to this session's fixture files, shaped like real ones. */
function addEntries(fx) {
  const fixture = path.join(E2E.binDir, 'fixture-server');
  const at = (rel) => path.join(fx.home, rel);
  const insertAfter = (rel, anchor, text) => {
    const before = fs.readFileSync(at(rel), 'utf8');
    assert.ok(before.includes(anchor), `${rel} has ${anchor}`);
    fs.writeFileSync(at(rel), before.replace(anchor, anchor + text));
  };
  const q = JSON.stringify;
  insertAfter(CLINE, '"mcpServers": {\n', `    "edit-cline": {
      "autoApprove": ["echo", "add"],
      "disabled": false,
      "timeout": 90,
      "type": "stdio",
      "command": ${q(fixture)},
      "args": ["--name", "edit-cline", "--tools=2"],
      "cwd": ${q(fx.home)},
      "x-team-note": "owned by the docs team",
      "env": {
        "NOTES_DIR": ${q(fx.home)}
      }
    },
    "edit-conflict": {
      "autoApprove": [],
      "disabled": false,
      "timeout": 60,
      "type": "stdio",
      "command": ${q(fixture)},
      "args": ["--name", "edit-conflict"]
    },
`);
  insertAfter(CODEX, 'SQLITE_READONLY = "1"\n', `
# Edited by the E2E suite: this comment, the inline ones and the key order stay.
[mcp_servers.edit-codex]
command = ${q(fixture)}
args = ["--name", "edit-codex", "--tools=2"]  # only this line may change
env_vars = ["EDIT_CODEX_TOKEN"]
enabled_tools = ["echo", "add"]
tool_timeout_sec = 45 # seconds
cwd = ${q(fx.home)}
`);
  // Switchboard's own file: fields only Switchboard has, and one it does not know.
  const own = JSON.parse(fs.readFileSync(fx.servers, 'utf8'));
  own.mcpServers['edit-own'] = {
    type: 'stdio',
    command: fixture,
    args: ['--name', 'edit-own', '--tools=2'],
    restartPolicy: { initialDelayMs: 500, maxDelayMs: 4000, backoffMultiplier: 2, maxRestartAttempts: 3 },
    autoApprove: ['echo'],
    comment: 'kept by hand',
  };
  fs.writeFileSync(fx.servers, JSON.stringify(own, null, 2) + '\n');
  insertAfter(CURSOR, '"mcpServers": {\n', `    "edit-cursor": {
      "type": "stdio",
      "command": ${q(fixture)},
      "args": ["--name", "edit-cursor", "--tools=2"],
      "envFile": "\${userHome}/.env.cursor",
      "cwd": ${q(fx.home)}
    },
`);
}

before(async () => {
  app = await startApp('edits', { prepare: addEntries });
});
after(async () => {
  if (app) await app.close();
});

/**
 * Light and dark screenshots once the page has painted its last change
 * (WebKitWebDriver can return the frame before it otherwise).
 */
async function shots(b, name) {
  await timeBox(b.executeAsync((done) => requestAnimationFrame(() => requestAnimationFrame(() => done()))), 5_000, 'two frames');
  await screenshot(b, name);
  await screenshotDark(b, `${name}-dark`);
}

/** Opens the Edit form of `name` from its detail; returns the arguments field. */
async function openEdit(b, name) {
  // A form left open by a failed test would cover the view.
  if (await exists(b, 'add-cancel')) {
    await (await byTestId(b, 'add-cancel')).click();
    await eventually(b, async () => !(await exists(b, 'add-cancel')), 'the form left open closes');
  }
  await gotoView(b, 'servers');
  await (await byTestId(b, `server-row-${name}`, { timeout: 15_000 })).click();
  await (await byTestId(b, 'edit-server', { displayed: true })).click();
  const args = await byTestId(b, 'add-args', { displayed: true });
  assert.equal(await (await byTestId(b, 'add-name')).getValue(), name, 'the form shows the server');
  return args;
}

/** Edits the last argument the way a user would: `--tools=2` becomes `--tools=3`. */
async function bumpLastArgument(b, args) {
  await args.click();
  await b.keys(['Control', 'End']);
  await b.keys(['Backspace']);
  await args.addValue('3');
}

/** Replaces a text field's value with the keyboard (WebDriver's clear fires no input event). */
async function retype(b, el, value) {
  await el.click();
  await b.keys(['Control', 'a']);
  await b.keys(['Backspace']);
  await el.addValue(value);
}

async function saveAndWaitForWrite(b, rel, before) {
  await (await byTestId(b, 'add-save')).click();
  await eventually(b, async () => read(rel) !== before, `the edit was written to ${rel}`, 15_000);
  await eventually(b, async () => !(await exists(b, 'add-name')), 'the form closes after saving');
}

/**
 * Asserts that `after` is `before` with only the value of `args` in the entry
 * starting at `entryMarker` replaced, and that the new value reads as `want`.
 */
function assertOnlyArgsChanged(before, after, entryMarker, argsKey, want) {
  const entry = before.indexOf(entryMarker);
  assert.ok(entry >= 0, `fixture has ${entryMarker}`);
  const key = before.indexOf(argsKey, entry);
  const start = key + argsKey.length;
  const end = before.indexOf(']', start) + 1;
  const prefix = before.slice(0, start);
  const suffix = before.slice(end);
  assert.ok(after.startsWith(prefix), `every byte before the arguments is unchanged\n--- after ---\n${after}`);
  assert.ok(after.endsWith(suffix), `every byte after the arguments is unchanged\n--- after ---\n${after}`);
  const value = after.slice(prefix.length, after.length - suffix.length);
  assert.deepEqual(JSON.parse(value), want, `the arguments now read ${value}`);
}

test('Cline: one argument changes; cwd, autoApprove, timeout and an unknown key stay byte for byte', async () => {
  const b = app.browser;
  const before = read(CLINE);
  const args = await openEdit(b, 'edit-cline');
  assert.equal(await (await byTestId(b, 'add-cwd')).getValue(), app.fx.home, 'the working folder is shown');
  assert.equal(await (await byTestId(b, 'add-auto-approve')).getValue(), 'echo\nadd', 'the auto-approve list is shown as it is');
  assert.equal(await (await byTestId(b, 'add-timeout')).getValue(), '90000', 'Cline\'s 90 s timeout, in ms');
  await bumpLastArgument(b, args);
  await shots(b, 'edit-form');
  await saveAndWaitForWrite(b, CLINE, before);
  assertOnlyArgsChanged(before, read(CLINE), '"edit-cline": {', '"args": ', ['--name', 'edit-cline', '--tools=3']);
});

test('Codex: one argument changes; comments, env_vars, enabled_tools and tool_timeout_sec stay, also through "Edit as TOML"', async () => {
  const b = app.browser;
  const before = read(CODEX);
  const args = await openEdit(b, 'edit-codex');
  await bumpLastArgument(b, args);
  // The entry as Codex writes it, and back: the values survive both switches.
  await (await byTestId(b, 'edit-mode-text')).click();
  const text = await byTestId(b, 'edit-text', { displayed: true });
  await eventually(b, async () => (await text.getValue()).includes('--tools=3'), 'the TOML view shows the edited argument');
  assert.match(await text.getValue(), /^args = \[/m, 'the entry is in Codex\'s own TOML');
  await shots(b, 'edit-text');
  await (await byTestId(b, 'edit-mode-form')).click();
  const back = await byTestId(b, 'add-args', { displayed: true });
  assert.equal(await back.getValue(), '--name\nedit-codex\n--tools=3', 'switching back to the form keeps the edit');
  await saveAndWaitForWrite(b, CODEX, before);
  assertOnlyArgsChanged(before, read(CODEX), '[mcp_servers.edit-codex]', 'args = ', ['--name', 'edit-codex', '--tools=3']);
});

test('Cursor: one argument changes; type, envFile and cwd stay; the timeout Cursor cannot store is not offered', async () => {
  const b = app.browser;
  const before = read(CURSOR);
  const args = await openEdit(b, 'edit-cursor');
  const timeout = await byTestId(b, 'add-timeout');
  assert.equal(await timeout.isEnabled(), false, 'Cursor has no per-server timeout: the field is disabled');
  assert.equal(await (await byTestId(b, 'unsupported-timeout')).getText(), 'Not supported by Cursor.');
  await timeout.scrollIntoView({ block: 'center' });
  await shots(b, 'edit-unsupported');
  await bumpLastArgument(b, args);
  await saveAndWaitForWrite(b, CURSOR, before);
  assertOnlyArgsChanged(before, read(CURSOR), '"edit-cursor": {', '"args": ', ['--name', 'edit-cursor', '--tools=3']);
});

test("Switchboard's own file: one argument changes; restartPolicy, autoApprove and an unknown key stay", async () => {
  const b = app.browser;
  const rel = path.relative(app.fx.home, app.fx.servers);
  const before = read(rel);
  const args = await openEdit(b, 'edit-own');
  await bumpLastArgument(b, args);
  await saveAndWaitForWrite(b, rel, before);
  assertOnlyArgsChanged(before, read(rel), '"edit-own": {', '"args": ', ['--name', 'edit-own', '--tools=3']);
});

test('a file changed while the form is open: the conflict is shown, then "Save anyway" keeps both changes', async () => {
  const b = app.browser;
  await openEdit(b, 'edit-conflict');
  const timeout = await byTestId(b, 'add-timeout');
  await retype(b, timeout, '120000');

  // Another program edits the same server's arguments meanwhile.
  const seen = read(CLINE);
  const oldArgs = '"args": ["--name", "edit-conflict"]';
  assert.ok(seen.includes(oldArgs));
  const theirs = seen.replace(oldArgs, '"args": ["--name", "edit-conflict", "--tools=1"]');
  fs.writeFileSync(file(CLINE), theirs);
  // The app takes the change in (the detail behind the form shows it): the
  // save must still be refused, because the user edited what they saw before.
  await eventually(
    b,
    () => b.execute(() => document.body.textContent.includes('edit-conflict --tools=1')),
    'the server detail behind the form shows the new arguments',
    15_000,
  );

  await (await byTestId(b, 'add-save')).click();
  const panel = await byTestId(b, 'edit-conflict', { displayed: true, timeout: 10_000 });
  assert.match(await panel.getText(), /cline_mcp_settings\.json changed since you opened it; your edit was not saved/);
  await eventually(b, async () => (await panel.getAttribute('data-state')) === 'reread', 'the file is read again', 15_000);
  assert.equal(
    await (await byTestId(b, 'edit-conflict-change-args')).getText(),
    'args changed in the file: ["--name", "edit-conflict"] → ["--name", "edit-conflict", "--tools=1"]',
  );
  assert.equal(await timeout.getValue(), '120000', 'the user\'s unsaved value is still in the form');
  assert.equal(read(CLINE), theirs, 'nothing was written over the other program\'s change');
  await shots(b, 'edit-conflict');

  await (await byTestId(b, 'edit-conflict-save-anyway')).click();
  await eventually(b, async () => read(CLINE) !== theirs, 'Save anyway writes the file', 15_000);
  await eventually(b, async () => !(await exists(b, 'add-name')), 'the form closes after saving');
  // Their new argument and the user's timeout (120 s: Cline counts seconds), nothing else.
  const timeoutLine = /("edit-conflict": \{[^}]*?"timeout": )60,/;
  assert.match(theirs, timeoutLine);
  assert.equal(read(CLINE), theirs.replace(timeoutLine, '$1120,'));
});

test('"Edit as JSON" refuses text that does not read, says where, and saves nothing', async () => {
  const b = app.browser;
  const before = read(CLINE);
  await openEdit(b, 'edit-cline');
  await (await byTestId(b, 'edit-mode-text')).click();
  const text = await byTestId(b, 'edit-text', { displayed: true });
  await eventually(b, async () => (await text.getValue()).includes('"command"'), 'the JSON view shows the entry');
  await retype(b, text, '{ "command": "npx", "args": [ }');
  await (await byTestId(b, 'add-save')).click();
  const error = await byTestId(b, 'edit-text-error', { displayed: true });
  assert.match(await error.getText(), /line 1/i, 'the error names the line');
  assert.ok(await exists(b, 'edit-text'), 'the text stays open for fixing');
  assert.equal(read(CLINE), before, 'nothing was written');
  await (await byTestId(b, 'add-cancel')).click();
  await eventually(b, async () => !(await exists(b, 'add-name')), 'Cancel closes the form');
  assert.equal(read(CLINE), before, 'Cancel writes nothing');
});
