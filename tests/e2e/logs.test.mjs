// Logs view: a server that writes a flood of lines and then keeps writing.
// The view keeps the newest 2,000 and follows the tail while new lines
// arrive.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, gotoView, eventually, waitForStatus, screenshot, E2E } from './lib/app.mjs';

let app;
before(async () => {
  app = await startApp('logs', {
    extraServers: {
      // 2,500 lines at start, then two lines every 50 ms (`alive N` and one
      // with invalid UTF-8) for as long as it runs.
      chatty: { command: E2E.fixtureServer, args: ['--name', 'chatty', '--stderr-flood', '2500', '--stderr-garbage'] },
    },
  });
});
after(async () => {
  if (app) await app.close();
});

/** What the log list shows: the line count, the last line in the page, and whether it is scrolled to the end. */
const view = (b) =>
  b.execute(() => {
    const list = document.querySelector('[role="list"][aria-label="Log lines"]');
    const rows = [...document.querySelectorAll('[role="list"][aria-label="Log lines"] [role="listitem"]')];
    const last = rows.at(-1);
    return {
      count: document.querySelector('.count')?.textContent ?? '',
      size: Number(last?.getAttribute('aria-setsize') ?? 0),
      lastPos: Number(last?.getAttribute('aria-posinset') ?? 0),
      lastText: last?.textContent ?? '',
      atEnd: list ? list.scrollHeight - list.scrollTop - list.clientHeight < 25 : false,
      // Each `alive N` line once, in order (none shown twice when the log was
      // loaded while its newest lines were on their way as an event).
      repeats: rows
        .map((r) => Number(/alive (\d+)/.exec(r.textContent ?? '')?.[1] ?? -1))
        .filter((n) => n >= 0)
        .filter((n, i, all) => i > 0 && n <= all[i - 1]),
      // The newest line is on screen, not below the window's edge.
      onScreen: last ? last.getBoundingClientRect().bottom <= window.innerHeight : false,
    };
  });

/** Waits until `pred(state)` holds for the view's state; on timeout, says what it saw last. */
async function until(b, pred, what, timeout = 20_000) {
  let seen;
  try {
    await eventually(b, async () => pred((seen = await view(b))), what, timeout);
  } catch (e) {
    throw new Error(`${e.message}; last seen: ${JSON.stringify(seen)}`);
  }
  return seen;
}

const alive = (text) => Number(/alive (\d+)/.exec(text)?.[1] ?? -1);

test('the newest 2,000 lines, following the tail as new ones arrive', async () => {
  const b = app.browser;
  await gotoView(b, 'servers');
  await waitForStatus(b, 'chatty', 'connected', { timeout: 30_000 });
  await gotoView(b, 'logs');
  const pick = await b.$('select[aria-label="Server"]');
  await pick.selectByAttribute('value', 'chatty');

  const first = await until(
    b,
    (v) => v.size === 2000 && v.lastPos === 2000 && alive(v.lastText) >= 0 && v.atEnd && v.onScreen,
    "the Logs view never showed chatty's newest line, on screen, at the end of 2,000",
  );
  assert.match(first.count, /^2000 lines/, `the count says ${first.count}`);
  assert.deepEqual(first.repeats, [], 'lines shown twice or out of order');

  // New lines keep arriving: the view follows them, and the buffer stays bounded.
  const later = await until(
    b,
    (v) => alive(v.lastText) >= alive(first.lastText) + 10,
    `the last line in view stayed at "${first.lastText.slice(0, 80)}"`,
  );
  assert.equal(later.size, 2000, 'still 2,000 lines kept');
  assert.ok(later.atEnd, 'still scrolled to the newest line');
  assert.ok(later.onScreen, 'the newest line is inside the window');
  assert.deepEqual(later.repeats, [], 'lines shown twice or out of order');
  await screenshot(b, 'logs-following');
});
