// Keyboard only: from the search box to a server row, its detail, its edit
// form (focus stays inside the dialog, Escape closes it and focus comes
// back), and a source moved down in the Sources view.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, gotoView, byTestId, exists, eventually, testIds } from './lib/app.mjs';

let app;
before(async () => {
  app = await startApp('keyboard');
});
after(async () => {
  if (app) await app.close();
});

/** Presses Tab until `matches(active element)` holds; fails after `max` presses. */
async function tabTo(b, what, matches, max = 40) {
  for (let i = 0; i < max; i++) {
    await b.keys(['Tab']);
    if (await b.execute(matches)) return i + 1;
  }
  const at = await b.execute(() => document.activeElement?.outerHTML.slice(0, 160));
  assert.fail(`${max} presses of Tab did not reach ${what}; focus is on ${at}`);
}

test('Servers → detail → edit → Sources reorder, by keyboard alone', async () => {
  const b = app.browser;
  await gotoView(b, 'servers');
  await byTestId(b, 'server-row-alpha', { timeout: 20_000 });
  await b.execute(() => document.querySelector('input[type="search"]').focus());

  await tabTo(b, 'the row of alpha', () => document.activeElement?.getAttribute('aria-label')?.startsWith('Server alpha,'));
  await b.keys(['Enter']);
  await eventually(b, async () => exists(b, 'copy-to-alpha'), 'Enter opens the detail');

  await tabTo(b, 'the Edit button', () => document.activeElement?.dataset.testid === 'edit-server');
  await b.keys(['Enter']);
  await eventually(b, () => b.execute(() => !!document.activeElement?.closest('[role="dialog"]')), 'the edit form opens with focus inside it');
  for (let i = 0; i < 30; i++) {
    await b.keys(['Tab']);
    assert.ok(await b.execute(() => !!document.activeElement?.closest('[role="dialog"]')), `Tab ${i + 1} left the dialog`);
  }
  await b.keys(['Escape']);
  await eventually(b, () => b.execute(() => !document.querySelector('[role="dialog"]')), 'Escape closes the form');
  assert.equal(await b.execute(() => document.activeElement?.dataset.testid), 'edit-server', 'focus is back on Edit');

  await gotoView(b, 'sources');
  await byTestId(b, 'source-row-claude-code-user', { timeout: 15_000 });
  const before = (await testIds(b, 'source-row-')).map((t) => t.slice('source-row-'.length));
  await b.execute(() => document.querySelector('input, button, [tabindex="0"]')?.focus());
  await tabTo(b, 'Move Claude Code user down', () => document.activeElement?.dataset.testid === 'source-move-down-claude-code-user', 80);
  await b.keys(['Enter']);
  await eventually(b, async () => {
    const now = (await testIds(b, 'source-row-')).map((t) => t.slice('source-row-'.length));
    return now.indexOf('claude-code-user') === before.indexOf('claude-code-user') + 1;
  }, 'Enter on "move down" moves Claude Code one place down', 15_000);
});
