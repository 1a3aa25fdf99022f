// A long Servers list (90 more servers, switched off so none runs): the
// table shows a screenful of rows at a time, scrolls to its last server,
// finds a far one by search, and the arrow keys walk past the rows first
// shown.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
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
  await scrollTo(b, 'bottom');
  await eventually(b, async () => {
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
