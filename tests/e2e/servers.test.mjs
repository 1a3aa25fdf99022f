// Servers view: every server from every source with the right
// winner, live status of the fixture servers, shadowed duplicates and
// "Use this one". Expected winners come from tests/fixtures/EXPECTED.md, with
// Switchboard's own file replaced by alpha, beta and browsermcp (lib/fixture-home.mjs).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  startApp, gotoView, byTestId, exists, testIds, waitForStatus, winnerOf, showShadowed, screenshot, eventually, readJson, screenshotDark, clearSearch,
} from './lib/app.mjs';

let app;
before(async () => {
  app = await startApp('servers');
});
after(async () => {
  if (app) await app.close();
});

test('navigation: nav-servers, nav-tools, nav-sources, nav-logs switch views', async () => {
  const b = app.browser;
  for (const view of ['tools', 'sources', 'logs', 'servers']) await gotoView(b, view);
});

test('lists the fixture servers and the fixture clients\' servers', async () => {
  const b = app.browser;
  await gotoView(b, 'servers');
  for (const name of ['alpha', 'beta', 'browsermcp', 'filesystem', 'broken-top', 'github', 'claude-desktop-only', 'remote-docs']) {
    await byTestId(b, `server-row-${name}`);
  }
  const rows = await testIds(b, 'server-row-');
  // Not in this home's servers.json (the repo fixture's is replaced) ...
  assert.ok(!rows.includes('server-row-switchboard-only'), 'switchboard-only must not be listed: the fixture servers.json was replaced');
  // ... and the malformed LM Studio file contributes nothing.
  assert.ok(!rows.includes('server-row-lmstudio-only'), 'lmstudio-only comes from a malformed file and must not be listed');
  const dupes = rows.filter((r, i) => rows.indexOf(r) !== i);
  assert.deepEqual(dupes, [], 'each name is listed once (shadowed definitions are not extra rows)');
});

test('winners follow source priority (EXPECTED.md)', async () => {
  const b = app.browser;
  const want = {
    alpha: 'switchboard',
    browsermcp: 'switchboard', // shadows cursor-user's
    filesystem: 'claude-code-user',
    'broken-top': 'cursor-user', // claude-desktop's entry is invalid
    github: 'claude-desktop', // not in this servers.json
    'remote-docs': 'gemini-user',
  };
  const got = {};
  for (const name of Object.keys(want)) got[name] = await winnerOf(b, name);
  assert.deepEqual(got, want);
});

test('the fixture servers connect (alpha, beta, browsermcp)', async () => {
  const b = app.browser;
  for (const name of ['alpha', 'beta', 'browsermcp']) {
    await waitForStatus(b, name, 'connected', { timeout: 30_000 });
  }
  await screenshot(b, 'servers');
  await screenshotDark(b, 'servers-dark');
});

test('searching shows only the matching servers; clearing the search shows every one again', async () => {
  const b = app.browser;
  await gotoView(b, 'servers');
  // The names of the rows on screen (filtered-out rows stay in the page, hidden).
  const visibleRows = () => b.execute(() => [...document.querySelectorAll('[data-testid^="server-row-"]')]
    .filter((e) => e.getClientRects().length > 0)
    .map((e) => e.dataset.testid.slice('server-row-'.length)));
  const all = await visibleRows();
  assert.ok(all.includes('alpha') && all.includes('claude-desktop-only'), `every server is listed: ${all.join(', ')}`);
  const search = await b.$('input[type="search"]');
  try {
    await search.setValue('desktop-onl');
    await eventually(b, async () => (await visibleRows()).join() === 'claude-desktop-only', 'only claude-desktop-only is shown for "desktop-onl"');
    assert.match(await b.execute(() => document.querySelector('.toolbar .count').textContent), new RegExp(`^1 of ${all.length}$`));
    await search.setValue('no-such-server-anywhere');
    await eventually(b, async () => (await visibleRows()).length === 0, 'no row is shown for a search nothing matches');
    assert.ok(await b.execute(() => document.querySelector('tr.none')?.textContent.includes('No server matches')), 'it says that no server matches');
    await search.setValue(' ');
    await eventually(b, async () => (await visibleRows()).join() === all.join(), 'clearing the search shows every server again, in the same order');
    assert.ok(!(await b.execute(() => !!document.querySelector('tr.none'))), 'the no-match line is gone');
  } finally {
    // The next tests use this view unfiltered.
    await clearSearch(b);
  }
});

test('shadowed duplicates are shown with their source', async () => {
  const b = app.browser;
  await showShadowed(b, 'browsermcp', 'cursor-user');
  await gotoView(b, 'servers');
  await showShadowed(b, 'filesystem', 'cursor-user');
  // claude-desktop's broken-top is invalid but still listed (with its error).
  await gotoView(b, 'servers');
  await showShadowed(b, 'broken-top', 'claude-desktop');
});

test('"Use this one" on a shadowed definition makes it the winner', async () => {
  const b = app.browser;
  await gotoView(b, 'servers');
  const shadowed = await showShadowed(b, 'filesystem', 'cursor-user');
  await screenshot(b, 'servers-shadowed');
  await (await byTestId(b, 'use-this-one', { within: shadowed })).click();
  // The old winner is now the shadowed one.
  await gotoView(b, 'servers');
  await showShadowed(b, 'filesystem', 'claude-code-user');
  await eventually(b, async () => (await winnerOf(b, 'filesystem')) === 'cursor-user', 'filesystem winner became cursor-user');
  // Saved: cursor-user now ranks above claude-code-user in settings.json.
  const priority = readJson(app.fx.settings).priority ?? [];
  assert.ok(
    priority.indexOf('cursor-user') >= 0 && priority.indexOf('cursor-user') < priority.indexOf('claude-code-user'),
    `settings.json priority puts cursor-user above claude-code-user: ${JSON.stringify(priority)}`,
  );
  assert.equal(await exists(b, 'shadowed-filesystem-cursor-user'), false, 'the new winner is no longer listed as shadowed');
});
