// Elicitation: a server asking the user for input during a tool
// call gets a form built from the requested schema, defaults filled in. alpha's
// `elicit` tool asks "What is your name?" (one required string `name`, default
// "Grace") and returns the answer it received as JSON text; the tests answer
// accept (with a changed name), decline and cancel, and read what the server
// got in the Tools view's result.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  startApp, gotoView, byTestId, exists, sel, fill, waitForStatus, screenshot, eventually,
} from './lib/app.mjs';

let app;
before(async () => {
  app = await startApp('elicitation');
  await gotoView(app.browser, 'servers');
  await waitForStatus(app.browser, 'alpha', 'connected', { timeout: 30_000 });
});
after(async () => {
  if (app) await app.close();
});

/** Opens mcp_alpha_elicit in the Tools view (the list is virtualized: search first). */
async function openElicitTool(b) {
  await gotoView(b, 'tools');
  await fill(await byTestId(b, 'tool-search'), 'mcp_alpha_elicit');
  await (await byTestId(b, 'tool-row-mcp_alpha_elicit', { timeout: 20_000 })).click();
  return byTestId(b, 'tool-call-button', { displayed: true });
}

/** Calls the tool and waits for the elicitation form to open. */
async function callAndWaitForForm(b) {
  const call = await openElicitTool(b);
  await call.click();
  const form = await byTestId(b, 'elicitation-form', { displayed: true, timeout: 20_000 });
  assert.equal(await form.getAttribute('data-server'), 'alpha');
  assert.equal((await (await byTestId(b, 'elicitation-message')).getText()).trim(), 'What is your name?');
  const title = await b.$('[role="dialog"] h2');
  assert.equal((await title.getText()).trim(), '“alpha” asks for input');
  assert.ok(!(await exists(b, 'tool-result')), 'the call waits for the answer (no result yet)');
  return form;
}

/**
 * Empties an input with the keyboard, as a user would: WebDriver's clear
 * fires no input event, so the form's bound value would not change.
 */
async function clearByKeys(b, el) {
  await el.click();
  await b.keys(['Control', 'a']);
  await b.keys(['Backspace']);
  assert.equal(await el.getValue(), '', 'the field is empty');
}

async function waitFormClosed(b) {
  await eventually(b, async () => !(await exists(b, 'elicitation-form')), 'the elicitation form closes after the answer');
}

/**
 * The ElicitResult alpha returned, parsed from the text of tool-result
 * (`Result` heading, then the JSON the server received).
 */
async function resultSeen(b, action) {
  let text = '(no tool-result)';
  try {
    await eventually(b, async () => {
      if (!(await exists(b, 'tool-result'))) return false;
      text = await (await b.$(sel('tool-result'))).getText();
      return text.includes(`"action":"${action}"`);
    }, 'tool-result', 20_000);
  } catch {
    await screenshot(b, `elicitation-no-result-${action}`).catch(() => {});
    const page = await b.execute(() => document.body.innerText).catch(() => '?');
    assert.fail(`tool-result never showed that the server received action "${action}"; it shows: ${text}\n--- page text ---\n${page}`);
  }
  const el = await b.$(sel('tool-result'));
  assert.equal(await el.getAttribute('data-state'), 'ok', `the call succeeded: ${text}`);
  return JSON.parse(text.slice(text.indexOf('{'), text.lastIndexOf('}') + 1));
}

test('the form shows the server\'s question with the default filled in; a changed name is accepted', async () => {
  const b = app.browser;
  await callAndWaitForForm(b);
  const name = await byTestId(b, 'elicitation-field-name', { displayed: true });
  assert.equal(await name.getValue(), 'Grace', 'the schema default is filled in');
  const dialog = await b.$('[role="dialog"]');
  assert.match(await dialog.getText(), /name\s*\*/i, 'the field is labelled and marked required');
  await screenshot(b, 'elicitation');

  // Required: an empty name is refused in the form, nothing is sent.
  await clearByKeys(b, name);
  await (await byTestId(b, 'elicitation-accept')).click();
  await eventually(b, async () => /required/i.test(await dialog.getText()), 'an empty required name shows an error');
  assert.ok(await exists(b, 'elicitation-form'), 'the form stays open');
  assert.ok(!(await exists(b, 'tool-result')), 'the call is still waiting for the answer');

  await fill(name, 'Ada Lovelace');
  await (await byTestId(b, 'elicitation-accept')).click();
  await waitFormClosed(b);
  const got = await resultSeen(b, 'accept');
  assert.deepEqual(got, { action: 'accept', content: { name: 'Ada Lovelace' } });
});

test('Decline: the server is told the user declined', async () => {
  const b = app.browser;
  await callAndWaitForForm(b);
  assert.equal(await (await byTestId(b, 'elicitation-field-name')).getValue(), 'Grace', 'a new request starts from the default again');
  await (await byTestId(b, 'elicitation-decline')).click();
  await waitFormClosed(b);
  const got = await resultSeen(b, 'decline');
  assert.equal(got.action, 'decline');
  assert.equal(got.content, undefined, 'nothing is sent with a decline');
});

test('Cancel: the server is told the user cancelled', async () => {
  const b = app.browser;
  await callAndWaitForForm(b);
  await fill(await byTestId(b, 'elicitation-field-name'), 'not sent');
  await (await byTestId(b, 'elicitation-cancel')).click();
  await waitFormClosed(b);
  const got = await resultSeen(b, 'cancel');
  assert.equal(got.action, 'cancel');
  assert.equal(got.content, undefined, 'nothing is sent with a cancel');
});

test('Escape closes the form as a cancel', async () => {
  const b = app.browser;
  await callAndWaitForForm(b);
  await (await byTestId(b, 'elicitation-field-name')).click();
  await b.keys('Escape');
  await waitFormClosed(b);
  assert.equal((await resultSeen(b, 'cancel')).action, 'cancel');
});
