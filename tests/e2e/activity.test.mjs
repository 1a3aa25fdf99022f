// The Activity view (issue 29 point 2): calls made from the Tools view are
// in the call journal and the view lists them; the server filter and the
// search narrow them; a call's detail shows its arguments, result and
// client; the plot's canvas is drawn (screenshots light and dark); a call
// through the gateway appears while the view is open, with the client's
// name and version; the filtered calls export as JSON Lines to a file the
// user names; axe-core finds nothing serious, light and dark.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startApp, gotoView, byTestId, exists, fill, screenshot, eventually, clearSearch } from './lib/app.mjs';
import { seriousViolations } from './lib/axe.mjs';
import { McpHttpClient } from './lib/mcp.mjs';

let app;
before(async () => {
  app = await startApp('activity');
});
after(async () => {
  if (app) await app.close();
});

const rows = (b) => b.$$('[data-testid="activity-row"]');
const rowTexts = (b) => b.execute(() => [...document.querySelectorAll('[data-testid="activity-row"]')].map((r) => r.textContent.replace(/\s+/g, ' ').trim()));

/** Calls `tool` from the Tools view with `text` and waits for its result. */
async function callEcho(b, tool, text) {
  await gotoView(b, 'tools');
  await fill(await byTestId(b, 'tool-search'), tool);
  await (await byTestId(b, `tool-row-${tool}`, { timeout: 20_000 })).click();
  const call = await byTestId(b, 'tool-call-button', { displayed: true });
  const input = (await exists(b, 'tool-arg-text')) ? await byTestId(b, 'tool-arg-text') : await b.$('[data-testid="tool-form"] [name="text"]');
  await fill(input, text);
  await call.click();
  const result = await byTestId(b, 'tool-result', { timeout: 15_000 });
  await eventually(b, async () => (await result.getText()).includes(text), `${tool} answered "${text}"`, 15_000);
}

/** Non-transparent pixels of the plot's canvas. */
const drawnPixels = (b) =>
  b.execute(() => {
    const c = document.querySelector('[data-testid="activity-chart"] canvas');
    if (!c || c.width === 0 || c.height === 0) return 0;
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 3; i < d.length; i += 4) if (d[i] !== 0) n++;
    return n;
  });

test('calls made in the Tools view are listed, filtered, opened and plotted', async () => {
  const b = app.browser;
  await callEcho(b, 'mcp_alpha_echo', 'first activity call');
  await callEcho(b, 'mcp_alpha_echo', 'second activity call');
  await callEcho(b, 'mcp_beta_echo', 'beta activity call');

  await gotoView(b, 'activity');
  await eventually(b, async () => (await rows(b)).length === 3, 'the three calls are listed', 20_000);
  const all = await rowTexts(b);
  assert.equal(all.filter((t) => t.includes('alpha')).length, 2, all.join(' | '));
  assert.equal(all.filter((t) => t.includes('beta')).length, 1, all.join(' | '));

  // The server filter narrows to alpha's two calls.
  await (await byTestId(b, 'activity-server')).selectByAttribute('value', 'alpha');
  await eventually(b, async () => {
    const t = await rowTexts(b);
    return t.length === 2 && t.every((x) => x.includes('alpha'));
  }, 'only alpha\'s calls are listed');

  // The search narrows to the one whose arguments hold "second".
  await fill(await byTestId(b, 'activity-search'), 'second');
  await eventually(b, async () => (await rows(b)).length === 1, 'one call matches "second"');

  // Its detail: arguments, result, the client.
  await (await rows(b))[0].click();
  const detail = await byTestId(b, 'activity-detail');
  await eventually(b, async () => (await detail.getText()).includes('second activity call'), 'the detail shows the arguments');
  const shown = await detail.getText();
  assert.match(shown, /tool explorer/, shown);
  assert.match(shown, /Result/, shown);

  // The plot is drawn on its canvas.
  await eventually(b, async () => (await drawnPixels(b)) > 200, 'the plot\'s canvas is drawn');
  await screenshot(b, 'activity');
  await b.execute(() => document.querySelector('[data-testid="activity-chart"]').scrollIntoView({ block: 'start' }));
  await screenshot(b, 'activity-plots');

  // A later call is listed when the view is opened again.
  await clearSearch(b);
  await (await byTestId(b, 'activity-server')).selectByAttribute('value', '');
  await eventually(b, async () => (await rows(b)).length === 3, 'the three calls again');
  await callEcho(b, 'mcp_beta_echo', 'a later call');
  await gotoView(b, 'activity');
  await eventually(b, async () => (await rows(b)).length === 4, 'the fourth call is listed', 20_000);
});

test('a call through the gateway appears while the view is open, with its client', async () => {
  const b = app.browser;
  await gotoView(b, 'gateway');
  await (await byTestId(b, 'gateway-show-token')).click();
  let token = '';
  await eventually(b, async () => (token = (await (await byTestId(b, 'gateway-token')).getText()).trim()).length >= 20, 'the token is shown', 20_000);
  const client = new McpHttpClient(app.gatewayUrl, token);
  try {
    await client.initialize('e2e-activity-client', '4.5.6');
    await gotoView(b, 'activity');
    await eventually(b, async () => (await rows(b)).length === 4, 'the four calls so far');
    await client.request('tools/call', { name: 'mcp_alpha_echo', arguments: { text: 'through the gateway' } });
    // No navigation: the view asks for newer calls on its own.
    await eventually(b, async () => (await rowTexts(b))[0]?.includes('e2e-activity-client'), 'the gateway call is listed first', 15_000);
    await (await rows(b))[0].click();
    const detail = await byTestId(b, 'activity-detail');
    await eventually(b, async () => /e2e-activity-client 4\.5\.6/.test(await detail.getText()), 'the detail names the client and its version');
    assert.match(await detail.getText(), /gateway \(http\)/);
  } finally {
    await client.close().catch(() => {});
  }
});

test('the filtered calls export as JSON Lines to a file in the home folder', async () => {
  const b = app.browser;
  await gotoView(b, 'activity');
  await (await byTestId(b, 'activity-server')).selectByAttribute('value', 'alpha');
  await eventually(b, async () => (await rowTexts(b)).every((x) => x.includes('alpha')), 'only alpha\'s calls');
  await fill(await byTestId(b, 'activity-export-path'), '~/alpha-calls.jsonl');
  await (await byTestId(b, 'activity-export')).click();
  const done = await byTestId(b, 'activity-export-done', { timeout: 15_000 });
  assert.match(await done.getText(), /3 calls written/);
  const lines = fs.readFileSync(path.join(app.fx.home, 'alpha-calls.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(lines.length, 3);
  assert.ok(lines.every((e) => e.server === 'alpha' && e.name === 'echo'), JSON.stringify(lines));
  // Again: the file exists, and is replaced only when asked.
  await (await byTestId(b, 'activity-export')).click();
  await byTestId(b, 'activity-export-error', { timeout: 15_000 });
  await (await byTestId(b, 'activity-server')).selectByAttribute('value', '');
});

test('the Activity view has no serious or critical accessibility violation, light and dark', async () => {
  const b = app.browser;
  await gotoView(b, 'activity');
  await eventually(b, async () => (await rows(b)).length >= 5, 'the calls are listed');
  await (await rows(b))[0].click();
  const found = (await seriousViolations(b)).map((v) => `light: ${v}`);
  await b.execute(() => {
    document.documentElement.dataset.theme = 'dark';
  });
  try {
    // The plot is drawn again in the dark theme's colours.
    await eventually(b, async () => (await drawnPixels(b)) > 200, 'the plot is drawn in the dark theme');
    await screenshot(b, 'activity-dark');
    await b.execute(() => document.querySelector('[data-testid="activity-chart"]').scrollIntoView({ block: 'start' }));
    await screenshot(b, 'activity-plots-dark');
    found.push(...(await seriousViolations(b)).map((v) => `dark: ${v}`));
  } finally {
    await b.execute(() => {
      delete document.documentElement.dataset.theme;
    });
  }
  assert.deepEqual(found, [], `\n${found.join('\n')}`);
});
