// Sources view: the ordered list of sources; moving one up
// (keyboard/button alternative to dragging) and dragging change the priority,
// the list and the winners at once, and the order is saved in settings.json.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  startApp, gotoView, byTestId, exists, testIds, winnerOf, screenshot, eventually, readJson, clickUntil,
} from './lib/app.mjs';

let app;
before(async () => {
  app = await startApp('sources');
});
after(async () => {
  if (app) await app.close();
});

const order = async (b) => (await testIds(b, 'source-row-')).map((t) => t.slice('source-row-'.length));

test('lists the sources in the default priority order', async () => {
  const b = app.browser;
  await gotoView(b, 'sources');
  for (const id of ['switchboard', 'claude-code-user', 'claude-desktop', 'cursor-user', 'windsurf', 'lmstudio']) {
    await byTestId(b, `source-row-${id}`);
  }
  const ids = await order(b);
  assert.equal(ids[0], 'switchboard', `Switchboard's own file comes first: ${ids.join(', ')}`);
  const pos = (id) => ids.indexOf(id);
  assert.ok(pos('claude-code-user') < pos('claude-desktop') && pos('claude-desktop') < pos('cursor-user') && pos('cursor-user') < pos('windsurf'),
    `EXPECTED.md order (claude-code-user, claude-desktop, ..., cursor-user, windsurf): ${ids.join(', ')}`);
  // Rows are numbered as shown, whatever the list leaves out (managed files it hides).
  const ranks = await b.execute(() => [...document.querySelectorAll('.sources .rank')].map((e) => e.textContent.trim()));
  assert.deepEqual(ranks, ranks.map((_, i) => String(i + 1)), `numbered 1, 2, 3…: ${ranks.join(', ')}`);
  await screenshot(b, 'sources');
});

test('moving a source up changes the priority, the list and the winner', async () => {
  const b = app.browser;
  await gotoView(b, 'servers');
  assert.equal(await winnerOf(b, 'github'), 'claude-desktop', 'github starts out won by claude-desktop');
  await gotoView(b, 'sources');
  let ids = await order(b);
  for (let clicks = 0; ids.indexOf('cursor-user') > ids.indexOf('claude-desktop'); clicks++) {
    assert.ok(clicks < 30, 'cursor-user never got above claude-desktop');
    const before = ids.indexOf('cursor-user');
    // A click can land beside the arrow while the page above it is still
    // settling (a banner or a row's warnings arriving); clickUntil clicks
    // again only if the first click had no effect at all.
    await clickUntil(b, await byTestId(b, 'source-move-up-cursor-user'),
      async () => (ids = await order(b)).indexOf('cursor-user') <= before - 1,
      `after source-move-up-cursor-user, cursor-user moved from #${before} to #${before - 1} in the list`);
    assert.equal(ids.indexOf('cursor-user'), before - 1, `one click moves one place: ${ids.join(', ')}`);
  }
  await eventually(b, async () => {
    const p = readJson(app.fx.settings).priority ?? [];
    return p.indexOf('cursor-user') >= 0 && p.indexOf('cursor-user') < p.indexOf('claude-desktop');
  }, 'settings.json priority has cursor-user above claude-desktop');
  await gotoView(b, 'servers');
  await eventually(b, async () => (await winnerOf(b, 'github')) === 'cursor-user', 'github is now won by cursor-user');
  await gotoView(b, 'sources');
  await screenshot(b, 'sources-reordered');
});

test('dragging a source row onto the one above moves it up', async () => {
  const b = app.browser;
  await gotoView(b, 'sources');
  const ids = await order(b);
  const at = ids.indexOf('windsurf');
  assert.ok(at > 1, `windsurf is listed below the top: ${ids.join(', ')}`);
  const target = ids[at - 1];
  // Drag by the handle when the row has one (source-drag-<id>), else the row.
  const from = (await exists(b, 'source-drag-windsurf')) ? await byTestId(b, 'source-drag-windsurf') : await byTestId(b, 'source-row-windsurf');
  const to = await byTestId(b, `source-row-${target}`);
  // Pointer drag (WebDriver actions); pointer-event based sorting sees this,
  // WebKitWebDriver does not synthesize HTML5 dragstart/drop from it.
  const fromBox = await from.getLocation();
  const toBox = await to.getLocation();
  const size = await to.getSize();
  const dy = Math.round(toBox.y + size.height / 4 - fromBox.y);
  await b.action('pointer', { parameters: { pointerType: 'mouse' } })
    .move({ origin: from, x: 0, y: 0 })
    .down({ button: 0 })
    .pause(150)
    .move({ origin: 'pointer', x: 0, y: Math.round(dy / 2), duration: 200 })
    .move({ origin: 'pointer', x: 0, y: dy - Math.round(dy / 2), duration: 200 })
    .pause(150)
    .up({ button: 0 })
    .perform();
  try {
    await eventually(b, async () => (await order(b)).indexOf('windsurf') < at, 'windsurf moved', 5_000);
  } catch {
    assert.fail(`dragging source-row-windsurf onto source-row-${target} did not move windsurf up; order: ${(await order(b)).join(', ')}`);
  }
  const p = readJson(app.fx.settings).priority ?? [];
  assert.ok(p.indexOf('windsurf') < p.indexOf(target), `settings.json priority has windsurf above ${target}: ${p.join(', ')}`);
});
