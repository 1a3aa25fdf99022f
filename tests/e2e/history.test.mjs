// History and undo: an edit made in the Edit form is listed in the History
// view with its diff; Undo gives the client's file back byte for byte; an
// undo over a change someone else made is refused with the conflict shown,
// and the file keeps that change.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  startApp, gotoView, byTestId, exists, eventually, screenshot, screenshotDark,
} from './lib/app.mjs';

const CURSOR = '.cursor/mcp.json';

let app;
const file = (rel) => path.join(app.fx.home, rel);
const bytes = (rel) => fs.readFileSync(file(rel));

before(async () => {
  app = await startApp('history');
});
after(async () => {
  if (app) await app.close();
});

/** An element's text as rendered into the page (WebKit's getText is empty inside buttons). */
const textOf = async (el) => (await el.getProperty('textContent')).trim();

/** The ids of the History view's entries, in order (newest first). */
async function entryIds(b) {
  return b.execute(() =>
    [...document.querySelectorAll('[data-testid^="history-entry-"]')].map((e) => Number(e.getAttribute('data-testid').slice('history-entry-'.length))),
  );
}

test('an edit made in the form is listed in History, and Undo restores the file byte for byte', async () => {
  const b = app.browser;
  const original = bytes(CURSOR);

  // Edit one argument of a Cursor server in the form.
  await gotoView(b, 'servers');
  await (await byTestId(b, 'server-row-cursor-user-only', { timeout: 15_000 })).click();
  await (await byTestId(b, 'edit-server', { displayed: true })).click();
  const args = await byTestId(b, 'add-args', { displayed: true });
  await args.click();
  await b.keys(['Control', 'End']);
  await args.addValue('@latest');
  await (await byTestId(b, 'add-save')).click();
  await eventually(b, async () => !bytes(CURSOR).equals(original), `the edit was written to ${CURSOR}`, 15_000);
  const edited = bytes(CURSOR);
  assert.match(edited.toString(), /"@upstash\/context7-mcp@latest"/, 'the argument changed');
  await eventually(b, async () => !(await exists(b, 'add-name')), 'the form closes after saving');

  await gotoView(b, 'history');
  const entry = await byTestId(b, 'history-entry-1', { timeout: 10_000 });
  await screenshot(b, 'history');
  assert.equal(await entry.getAttribute('data-state'), 'ready');
  assert.equal(await textOf(await byTestId(b, 'history-summary-1')), 'update "cursor-user-only" in Cursor (args)');
  const diff = await textOf(await byTestId(b, 'history-diff-1', { displayed: true }));
  assert.match(diff, /@upstash\/context7-mcp@latest/, `the newest entry shows its diff:\n${diff}`);
  assert.match(await textOf(entry), /\.cursor\/mcp\.json/, 'the entry names the file');
  await screenshotDark(b, 'history-dark');

  await (await byTestId(b, 'history-undo-1')).click();
  await eventually(b, async () => bytes(CURSOR).equals(original), `${CURSOR} is byte for byte what it was before the edit`, 10_000);
  await eventually(b, async () => (await entryIds(b))[0] === 2, 'the undo is listed as entry #2', 10_000);
  assert.equal(await textOf(await byTestId(b, 'history-summary-2')), 'undo #1: update "cursor-user-only" in Cursor (args)');
  await eventually(b, async () => (await (await byTestId(b, 'history-entry-1')).getAttribute('data-state')) === 'undone', 'the edit shows as undone');
  assert.equal(await (await byTestId(b, 'history-undo-1')).isEnabled(), false, 'an undone change cannot be undone again');
  assert.ok(!(await exists(b, 'history-error-1')), 'no error was shown');
});

test('an undo over a change made elsewhere is refused with the conflict, and that change stays', async () => {
  const b = app.browser;
  // Someone edits Cursor's file after Switchboard's undo (#2) wrote it.
  const theirs = bytes(CURSOR).toString().replace('"@upstash/context7-mcp"', '"@upstash/context7-mcp@1.0.0"');
  fs.writeFileSync(file(CURSOR), theirs);
  await eventually(
    b,
    async () => (await (await byTestId(b, 'history-entry-2')).getAttribute('data-state')) === 'changed',
    'the History view sees the file changed since',
    10_000,
  );

  await (await byTestId(b, 'history-undo-2')).click();
  const refused = await byTestId(b, 'history-error-2', { displayed: true, timeout: 10_000 });
  assert.equal(await textOf(refused), `${file(CURSOR)} changed since Switchboard wrote it; undo would overwrite those changes`);
  assert.equal(bytes(CURSOR).toString(), theirs, 'the other change was not overwritten');
  assert.deepEqual((await entryIds(b))[0], 2, 'a refused undo records nothing');
  await screenshot(b, 'history-conflict');
});
