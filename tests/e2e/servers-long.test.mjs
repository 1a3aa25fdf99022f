// A long Servers list (90 more servers, switched off so none runs): the
// table shows a screenful of rows at a time, scrolls to its last server,
// finds a far one by search, the arrow keys walk past the rows first
// shown, and banners coming and going above the scrolled table leave no
// blank rows in view.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startApp, gotoView, byTestId, eventually, screenshot, clearSearch } from './lib/app.mjs';

const EXTRA = 90;
const name = (i) => `long-${String(i).padStart(3, '0')}`;

let app;
before(async () => {
  const extraServers = {};
  for (let i = 0; i < EXTRA; i++) extraServers[name(i)] = { command: 'true', args: [String(i)], enabled: false };
  app = await startApp('servers-long', { extraServers });
});
after(async () => {
  if (app) await app.close();
});

/** The table's rows in the page: [aria-rowindex, server name]. */
const rendered = (b) => b.execute(() => [...document.querySelectorAll('tbody tr[aria-rowindex]')]
  .map((r) => [Number(r.getAttribute('aria-rowindex')), r.querySelector('[data-testid^="server-row-"]').dataset.testid.slice('server-row-'.length)]));
const total = (b) => b.execute(() => Number(document.querySelector('table').getAttribute('aria-rowcount')) - 1);
const scrollTo = (b, where) => b.execute((w) => {
  let el = document.querySelector('tbody');
  while (el && !/auto|scroll/.test(getComputedStyle(el).overflowY)) el = el.parentElement;
  el.scrollTop = w === 'bottom' ? el.scrollHeight : 0;
}, where);

test('a long list shows a screenful of rows and scrolls to its last server', async () => {
  const b = app.browser;
  await gotoView(b, 'servers');
  await byTestId(b, `server-row-${name(0)}`, { timeout: 20_000 });
  const n = await total(b);
  assert.ok(n >= EXTRA, `every server is counted: ${n}`);
  assert.match(await b.execute(() => document.querySelector('.toolbar .count').textContent), new RegExp(`^${n} of ${n}$`));
  const top = await rendered(b);
  assert.ok(top.length < n, `only some of the ${n} rows are in the page: ${top.length}`);
  assert.equal(top[0][0], 2, 'the first row is the first server');
  // Scrolled again while waiting: a banner that comes above the table
  // meanwhile (servers failing the same way) moves the bottom further down.
  await eventually(b, async () => {
    await scrollTo(b, 'bottom');
    const rows = await rendered(b);
    return rows.length > 0 && rows[rows.length - 1][0] === n + 1;
  }, 'scrolled to the bottom, the last server is in the page');
  const lastRow = (await rendered(b)).at(-1)[1];
  assert.ok(await b.execute((id) => {
    const r = document.querySelector(`[data-testid="${id}"]`).getBoundingClientRect();
    return r.height > 0 && r.top >= 0 && r.bottom <= window.innerHeight;
  }, `server-row-${lastRow}`), `${lastRow} is on screen`);
  await screenshot(b, 'servers-long-bottom');
  await scrollTo(b, 'top');
  await eventually(b, async () => (await rendered(b))[0]?.[0] === 2, 'back at the top, the first server is in the page');
});

test('searching a long list finds a server that was out of view', async () => {
  const b = app.browser;
  const search = await b.$('input[type="search"]');
  try {
    await search.setValue(name(EXTRA - 1));
    await eventually(b, async () => (await rendered(b)).map((r) => r[1]).join() === name(EXTRA - 1), `only ${name(EXTRA - 1)} is listed`);
  } finally {
    await clearSearch(b);
  }
});

test('the arrow keys walk down past the rows first shown', async () => {
  const b = app.browser;
  await scrollTo(b, 'top');
  const first = await rendered(b);
  await eventually(b, async () => (await rendered(b))[0]?.[0] === 2, 'at the top');
  await b.execute(() => document.querySelector('tbody tr[aria-rowindex="2"]').focus());
  const steps = first.length + 5;
  for (let i = 0; i < steps; i++) await b.keys(['ArrowDown']);
  const focused = await b.execute(() => Number(document.activeElement?.getAttribute('aria-rowindex')));
  assert.equal(focused, 2 + steps, `${steps} presses of ArrowDown move the focus ${steps} rows down`);
  assert.ok(await b.execute(() => {
    const r = document.activeElement.getBoundingClientRect();
    return r.top >= 0 && r.bottom <= window.innerHeight;
  }), 'the focused row is on screen');
});

/**
 * Where the rows in the page are against the part of the table in view:
 * every pixel of the table body in view must be drawn by a rendered row.
 */
const coverage = (b) => b.execute(() => {
  const body = document.querySelector('tbody');
  let view = body;
  while (view && !/auto|scroll/.test(getComputedStyle(view).overflowY)) view = view.parentElement;
  const v = view.getBoundingClientRect();
  const t = body.getBoundingClientRect();
  const head = document.querySelector('thead').getBoundingClientRect().height;
  const rows = [...body.querySelectorAll('tr[aria-rowindex]')].map((r) => r.getBoundingClientRect());
  return {
    top: Math.max(v.top + head, t.top),
    bottom: Math.min(v.bottom, t.bottom),
    first: rows[0]?.top ?? Infinity,
    last: rows.at(-1)?.bottom ?? -Infinity,
    banners: document.querySelectorAll('[data-testid^="parse-error-"]').length,
  };
});
const covered = (c) => c.first <= c.top + 1 && c.last >= c.bottom - 1;

test('banners appearing and going above a scrolled table leave no rows missing in view', async () => {
  const b = app.browser;
  await clearSearch(b);
  // Scrolled to the middle of the list.
  await b.execute(() => {
    let el = document.querySelector('tbody');
    while (el && !/auto|scroll/.test(getComputedStyle(el).overflowY)) el = el.parentElement;
    el.scrollTop = el.scrollHeight / 2;
  });
  await eventually(b, async () => covered(await coverage(b)), 'the middle of the list is drawn');
  // (The fixture home has files that do not parse from the start.)
  const before = (await coverage(b)).banners;
  // Six other clients' files stop parsing: six banners push the table down
  // (~400 px, more than the rows kept beyond the view) without a scroll.
  const files = [
    '.cursor/mcp.json',
    '.codeium/windsurf/mcp_config.json',
    '.config/Claude/claude_desktop_config.json',
    '.config/Code/User/mcp.json',
    '.config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json',
    '.gemini/settings.json',
  ].map((f) => path.join(app.fx.home, f));
  const good = files.map((f) => fs.readFileSync(f, 'utf8'));
  try {
    files.forEach((f, i) => fs.writeFileSync(f, good[i].slice(0, Math.floor(good[i].length / 2))));
    await eventually(b, async () => (await coverage(b)).banners === before + files.length, 'a banner for each broken file', 20_000);
    await eventually(b, async () => covered(await coverage(b)), 'with the banners above it, every row in view is drawn');
    await screenshot(b, 'servers-long-banners');
  } finally {
    files.forEach((f, i) => fs.writeFileSync(f, good[i]));
  }
  await eventually(b, async () => (await coverage(b)).banners === before, 'the banners go once the files parse', 20_000);
  await eventually(b, async () => covered(await coverage(b)), 'with the banners gone, every row in view is drawn');
});
