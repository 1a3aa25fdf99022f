// Resources & prompts view and cancelling a tool call:
// beta (`fixture-server --resources`) lists fixture://greeting, fixture://counter
// and the template fixture://item/{id}; its `greet` prompt takes a required
// `name`; subscribing to the counter and bumping it shows the update arrive.
// alpha has no resources and says so; a server that is not connected cannot be
// browsed. Last, alpha's `sleep` tool is started and cancelled from the Tools view.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  startApp, gotoView, byTestId, exists, testIds, fill, waitForStatus, screenshot, eventually, screenshotDark,
} from './lib/app.mjs';

let app;
before(async () => {
  app = await startApp('resources');
  await gotoView(app.browser, 'servers');
  await waitForStatus(app.browser, 'beta', 'connected', { timeout: 30_000 });
  await waitForStatus(app.browser, 'alpha', 'connected', { timeout: 30_000 });
});
after(async () => {
  if (app) await app.close();
});

const text = async (b, id, opts) => (await (await byTestId(b, id, opts)).getText()).trim();

async function openServer(b, name) {
  await gotoView(b, 'resources');
  await (await byTestId(b, `resources-server-${name}`, { timeout: 15_000 })).click();
}

test('beta\'s resources and templates are listed, and a resource reads as text', async () => {
  const b = app.browser;
  await openServer(b, 'beta');
  await (await byTestId(b, 'resources-tab-resources')).click();
  await byTestId(b, 'resource-row-fixture://greeting', { timeout: 15_000 });
  await byTestId(b, 'resource-row-fixture://counter');
  await byTestId(b, 'resource-template-fixture://item/{id}');
  await (await byTestId(b, 'resource-row-fixture://greeting')).click();
  await eventually(b, async () => (await exists(b, 'resource-text')) && (await text(b, 'resource-text')) === 'Hello from beta', 'resource-text shows "Hello from beta"');
});

test('a resource template is filled in and read', async () => {
  const b = app.browser;
  await (await byTestId(b, 'resource-template-fixture://item/{id}')).click();
  await fill(await byTestId(b, 'template-var-id', { displayed: true }), '42');
  await (await byTestId(b, 'template-read')).click();
  await eventually(b, async () => (await exists(b, 'resource-text')) && (await text(b, 'resource-text')) === 'item 42', 'resource-text shows "item 42"');
});

test('subscribing to fixture://counter shows each update as it arrives', async () => {
  const b = app.browser;
  await (await byTestId(b, 'resource-row-fixture://counter')).click();
  await eventually(b, async () => (await exists(b, 'resource-text')) && (await text(b, 'resource-text')) === '0', 'the counter reads 0');
  const sub = await byTestId(b, 'resource-subscribe');
  assert.equal(await sub.getText(), 'Subscribe');
  await sub.click();
  await eventually(b, async () => (await sub.getAttribute('data-subscribed')) === 'true', 'the button shows the subscription');
  assert.equal(await exists(b, 'resource-updated'), false, 'no update yet');

  // Something else changes the resource (as another client would): beta's
  // bump_counter tool, called through the app's own command.
  await b.execute(() => window.__TAURI_INTERNALS__.invoke('call_tool', { name: 'mcp_beta_bump_counter', args: {} }));
  const marker = await byTestId(b, 'resource-updated', { timeout: 10_000 });
  assert.match(await marker.getText(), /^updated at /);
  await eventually(b, async () => (await text(b, 'resource-text')) === '1', 'the counter is read again and shows 1');
  const first = Number(await marker.getAttribute('data-updated-at'));

  // From the Tools view too: the subscription and the update survive the trip.
  await gotoView(b, 'tools');
  await fill(await byTestId(b, 'tool-search'), 'mcp_beta_bump_counter');
  await (await byTestId(b, 'tool-row-mcp_beta_bump_counter', { timeout: 15_000 })).click();
  await (await byTestId(b, 'tool-call-button', { displayed: true })).click();
  await eventually(b, async () => (await exists(b, 'tool-result')) && (await text(b, 'tool-result')).includes('2'), 'bump_counter returns 2');
  await gotoView(b, 'resources');
  await eventually(b, async () => (await exists(b, 'resource-text')) && (await text(b, 'resource-text')) === '2', 'back on Resources, the counter shows 2');
  const second = Number(await (await byTestId(b, 'resource-updated')).getAttribute('data-updated-at'));
  assert.ok(second > first, `a newer update time (${first} → ${second})`);
  await screenshot(b, 'resources');
  await screenshotDark(b, 'resources-dark');

  await (await byTestId(b, 'resource-subscribe')).click();
  await eventually(b, async () => (await (await byTestId(b, 'resource-subscribe')).getAttribute('data-subscribed')) === 'false', 'unsubscribed');
});

test('beta\'s greet prompt needs its argument and returns its message', async () => {
  const b = app.browser;
  await (await byTestId(b, 'resources-tab-prompts')).click();
  await (await byTestId(b, 'prompt-row-greet', { timeout: 15_000 })).click();
  await (await byTestId(b, 'prompt-get', { displayed: true })).click();
  const form = await byTestId(b, 'prompt-form');
  assert.match(await form.getText(), /Required/, 'the empty required argument is flagged');
  assert.equal(await exists(b, 'prompt-messages'), false, 'nothing was sent');
  await fill(await byTestId(b, 'prompt-arg-name'), 'Ada');
  await (await byTestId(b, 'prompt-get')).click();
  await eventually(b, async () => (await exists(b, 'prompt-messages')) && (await text(b, 'prompt-messages')).includes('Hello, Ada!'), 'prompt-messages shows "Hello, Ada!"');
  await screenshot(b, 'resources-prompt');
  await screenshotDark(b, 'resources-prompt-dark');
});

test('alpha offers no resources and a server that is not connected cannot be browsed', async () => {
  const b = app.browser;
  await openServer(b, 'alpha');
  await (await byTestId(b, 'resources-tab-resources')).click();
  await eventually(b, async () => (await exists(b, 'resources-error')) && (await text(b, 'resources-error')) === 'alpha does not offer resources.', 'alpha says it offers no resources');

  const ids = await testIds(b, 'resources-server-');
  let down = null;
  for (const id of ids) {
    const status = await (await byTestId(b, id)).getAttribute('data-status');
    if (status !== 'connected') {
      down = id;
      break;
    }
  }
  assert.ok(down, `some fixture server is not connected (${ids.join(', ')})`);
  await (await byTestId(b, down)).click();
  const note = await text(b, 'resources-unavailable', { displayed: true });
  assert.match(note, /cannot be browsed right now/);
});

test('a long tool call (alpha\'s sleep) can be cancelled and shows Cancelled', async () => {
  const b = app.browser;
  await gotoView(b, 'tools');
  await fill(await byTestId(b, 'tool-search'), 'mcp_alpha_sleep');
  await (await byTestId(b, 'tool-row-mcp_alpha_sleep', { timeout: 15_000 })).click();
  await fill(await byTestId(b, 'tool-arg-ms', { displayed: true }), '60000');
  await (await byTestId(b, 'tool-call-button')).click();
  const cancel = await byTestId(b, 'tool-cancel-button', { displayed: true }).catch(async (e) => {
    await screenshot(b, 'resources-cancel-missing');
    const pane = await b.execute(() => document.querySelector('.pane')?.innerText ?? document.body.innerText);
    throw new Error(`${e.message}\n--- the tool pane ---\n${pane}`);
  });
  const started = Date.now();
  await cancel.click();
  const result = await byTestId(b, 'tool-result', { timeout: 10_000 });
  assert.equal(await result.getAttribute('data-state'), 'cancelled');
  assert.match(await result.getText(), /cancelled/i);
  assert.ok(Date.now() - started < 10_000, 'the call ended when cancelled, not after 60 s');
  assert.equal(await exists(b, 'tool-cancel-button'), false, 'Cancel goes away with the call');

  // The server heard about it: its stats count one cancelled request.
  await fill(await byTestId(b, 'tool-search'), 'mcp_alpha_stats');
  await (await byTestId(b, 'tool-row-mcp_alpha_stats', { timeout: 15_000 })).click();
  await eventually(
    b,
    async () => {
      await (await byTestId(b, 'tool-call-button', { displayed: true })).click();
      await b.pause(300);
      return (await exists(b, 'tool-result')) && /"cancelled": 1/.test(await text(b, 'tool-result'));
    },
    'alpha\'s stats report one cancelled request',
  );
});
