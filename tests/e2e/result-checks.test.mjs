// Checks on what tools return, in the app (issue 29 point 3): a server whose
// results carry injected instructions (fixture-tricky-results) is called
// from the Tools view. In warn (the default) the result comes with
// Switchboard's note, a notice names the server and the tool and opens the
// call in Activity, where it is marked and its findings listed; "With
// findings" and the kind filter narrow the list. Block, chosen on the
// server's page, refuses the next call (the Tools view shows the refusal,
// its rule and how to allow it) and that call is in Activity too. Settings →
// Activity saves the journal's limits in settings.json exactly (other keys
// untouched) and refuses what is not a whole number of at least 1. Axe-core
// finds nothing serious on any of it, light and dark; screenshots of each.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startApp, gotoView, byTestId, exists, fill, screenshot, eventually, E2E } from './lib/app.mjs';
import { seriousViolations } from './lib/axe.mjs';

let app;
before(async () => {
  app = await startApp('result-checks', {
    extraServers: { tricky: { type: 'stdio', command: path.join(E2E.binDir, 'fixture-tricky-results') } },
  });
});
after(async () => {
  if (app) await app.close();
});

const rows = (b) => b.$$('[data-testid="activity-row"]');
const rowInfo = (b) =>
  b.execute(() =>
    [...document.querySelectorAll('[data-testid="activity-row"]')].map((r) => ({
      text: r.textContent.replace(/\s+/g, ' ').trim(),
      findings: Number(r.getAttribute('data-findings')),
    })),
  );
const readSettings = () => JSON.parse(fs.readFileSync(app.fx.settings, 'utf8'));

/** Calls `tool` (no arguments) from the Tools view; returns its result element once shown. */
async function callTool(b, tool) {
  await gotoView(b, 'tools');
  await fill(await byTestId(b, 'tool-search'), tool);
  await (await byTestId(b, `tool-row-${tool}`, { timeout: 20_000 })).click();
  // A result of an earlier call may still be shown: wait for this call's.
  const before = await b.execute(() => document.querySelector('[data-testid="tool-result"]')?.textContent ?? null);
  await (await byTestId(b, 'tool-call-button', { displayed: true })).click();
  await eventually(
    b,
    async () => {
      const now = await b.execute(() => document.querySelector('[data-testid="tool-result"]')?.textContent ?? null);
      return now !== null && now !== before;
    },
    `${tool} answered`,
    15_000,
  );
  return byTestId(b, 'tool-result');
}

/** Axe in light and dark, each entry prefixed with where. */
async function axeBothThemes(b, where) {
  const found = (await seriousViolations(b)).map((v) => `${where} light: ${v}`);
  await b.execute(() => {
    document.documentElement.dataset.theme = 'dark';
  });
  try {
    found.push(...(await seriousViolations(b)).map((v) => `${where} dark: ${v}`));
  } finally {
    await b.execute(() => {
      delete document.documentElement.dataset.theme;
    });
  }
  return found;
}

/** Screenshots `name` light and `name-dark`. */
async function bothThemes(b, name) {
  await screenshot(b, name);
  await b.execute(() => {
    document.documentElement.dataset.theme = 'dark';
  });
  try {
    await screenshot(b, `${name}-dark`);
  } finally {
    await b.execute(() => {
      delete document.documentElement.dataset.theme;
    });
  }
}

test('in warn a result with a finding comes with a note, a notice opens it in Activity, marked, with its findings', async () => {
  const b = app.browser;
  const clean = await callTool(b, 'mcp_tricky_clean');
  assert.doesNotMatch(await clean.getText(), /Switchboard:/);

  const result = await callTool(b, 'mcp_tricky_injected');
  const text = await result.getText();
  assert.match(text, /Switchboard: this result from the server "tricky" may contain/, text);
  assert.match(text, /instruction-override/, text);

  // The notice names the tool and the server, and opens the call in Activity.
  const action = await byTestId(b, 'notice-action', { timeout: 15_000 });
  const toast = await b.$('.toast');
  const said = await toast.getText();
  assert.match(said, /"injected" from "tricky" was passed on with a note/, said);
  assert.equal(await action.getText(), 'Open in Activity');
  await action.click();
  const detail = await byTestId(b, 'activity-detail');
  await eventually(b, async () => /tricky · injected/.test(await detail.getText()), 'the call is opened in Activity', 20_000);
  const list = await byTestId(b, 'activity-findings-list');
  const shown = await list.getText();
  assert.match(shown, /instruction-override/, shown);
  assert.match(shown, /high/, shown);
  assert.match(shown, /in content\[0\]\.text/, shown);
  assert.match(shown, /concealment/, shown);
  // Only calls with findings are listed (the notice's filter): the clean one is not.
  const listed = await rowInfo(b);
  assert.ok(listed.length >= 1 && listed.every((r) => r.findings > 0), JSON.stringify(listed));
  await bothThemes(b, 'activity-finding');

  // Every call: the clean one too, unmarked; the one with findings marked.
  await (await byTestId(b, 'activity-findings')).click();
  await eventually(b, async () => (await rowInfo(b)).length === 2, 'both calls are listed');
  const all = await rowInfo(b);
  const marked = all.find((r) => r.text.includes('injected'));
  const plain = all.find((r) => r.text.includes('clean'));
  assert.ok(marked.findings > 0 && /\d+ findings?/.test(marked.text), JSON.stringify(all));
  assert.ok(plain.findings === 0 && !/finding/.test(plain.text), JSON.stringify(all));
  // "With findings" narrows to it.
  await (await byTestId(b, 'activity-findings')).click();
  await eventually(b, async () => {
    const r = await rowInfo(b);
    return r.length === 1 && r[0].text.includes('injected');
  }, '"With findings" lists the injected call only');
  // The kind filter: no resource was read.
  await (await byTestId(b, 'activity-kind')).selectByAttribute('value', 'resource');
  await eventually(b, async () => (await rows(b)).length === 0, 'no resource reads');
  await (await byTestId(b, 'activity-kind')).selectByAttribute('value', 'tool');
  await eventually(b, async () => (await rows(b)).length === 1, 'the tool call again');
  await (await rows(b))[0].click();
  await byTestId(b, 'activity-findings-list');
  const found = await axeBothThemes(b, 'activity');
  assert.deepEqual(found, [], `\n${found.join('\n')}`);
});

test('Block on the server\'s page refuses the next call, naming the rule and how to allow it; the call is in Activity', async () => {
  const b = app.browser;
  await b.execute(() => {
    window.location.hash = '#/servers/tricky';
  });
  const select = await byTestId(b, 'server-result-mode-tricky', { timeout: 15_000 });
  await eventually(b, async () => (await select.getValue()) === 'warn', 'warn is the default');
  await select.selectByAttribute('value', 'block');
  await eventually(b, async () => readSettings().resultChecks?.tricky === 'block', 'settings.json says block', 10_000);
  const box = await byTestId(b, 'server-result-checks-tricky');
  await eventually(b, async () => (await box.getAttribute('data-mode')) === 'block', 'the page shows block');
  await box.scrollIntoView({ block: 'center' });
  await bothThemes(b, 'server-result-checks');
  // Its text is inset like the card's title and tool list, not against the
  // card's edge.
  const insets = await b.execute(() => {
    const box = document.querySelector('[data-testid="server-result-checks-tricky"]');
    const card = box.closest('.card').getBoundingClientRect();
    const title = box.closest('.card').querySelector('h3').getBoundingClientRect();
    const approvals = document.querySelector('[data-testid="server-approvals-tricky"] p');
    return {
      title: title.left - card.left,
      checks: box.querySelector('.mode span').getBoundingClientRect().left - card.left,
      approvals: approvals ? approvals.getBoundingClientRect().left - card.left : null,
    };
  });
  assert.ok(insets.title >= 12, `the title is inset: ${JSON.stringify(insets)}`);
  assert.equal(insets.checks, insets.title, `the checks line up with the title: ${JSON.stringify(insets)}`);
  assert.equal(insets.approvals, insets.title, `the approvals line up with the title: ${JSON.stringify(insets)}`);
  const found = await axeBothThemes(b, 'server page');
  assert.deepEqual(found, [], `\n${found.join('\n')}`);

  const result = await callTool(b, 'mcp_tricky_injected');
  await eventually(b, async () => (await result.getAttribute('data-state')) === 'tool-error', 'the call is refused');
  const text = await result.getText();
  assert.match(text, /Switchboard blocked this result from the server "tricky"/, text);
  assert.match(text, /instruction-override/, text);
  assert.match(text, /switchboard checks set tricky warn/, text);
  assert.match(text, /When a result looks suspicious/, text);
  const toast = await b.$('.toast');
  await eventually(b, async () => /"injected" from "tricky" was refused/.test(await toast.getText()), 'the notice says it was refused');

  await gotoView(b, 'activity');
  await (await byTestId(b, 'activity-server')).selectByAttribute('value', 'tricky');
  await eventually(b, async () => (await rowInfo(b)).filter((r) => r.text.includes('injected')).length === 2, 'both injected calls are listed', 15_000);
  const newest = (await rowInfo(b))[0];
  assert.ok(newest.text.includes('injected') && newest.findings > 0, JSON.stringify(newest));
  // The refused answer is listed as what the explorer got: blocked.
  assert.ok(/\bblocked\b/.test(newest.text), JSON.stringify(newest));

  // Back to the default: the entry leaves the settings file.
  await b.execute(() => {
    window.location.hash = '#/servers/tricky';
  });
  await (await byTestId(b, 'server-result-mode-tricky', { timeout: 15_000 })).selectByAttribute('value', 'warn');
  await eventually(b, async () => readSettings().resultChecks === undefined, 'the default removes the entry', 10_000);
});

test('Settings → Activity saves the journal\'s limits exactly, refuses bad input, and shows the journal', async () => {
  const b = app.browser;
  const before = readSettings();
  await gotoView(b, 'settings');
  const section = await byTestId(b, 'settings-activity');
  await section.scrollIntoView({ block: 'start' });
  const figures = await byTestId(b, 'journal-figures');
  await eventually(b, async () => /\d+ calls?, [\d.]+ (B|KiB|MiB) on disk/.test(await figures.getText()), 'the journal\'s figures are shown');
  const days = await byTestId(b, 'journal-keepDays');
  const mb = await byTestId(b, 'journal-keepMb');
  assert.equal(await days.getValue(), '30');
  assert.equal(await mb.getValue(), '200');

  // Not a whole number of at least 1: a clear error, nothing written.
  await fill(days, '0');
  await (await byTestId(b, 'journal-save')).click();
  const error = await byTestId(b, 'journal-error');
  assert.match(await error.getText(), /Keep calls for: give a whole number of days, 1 or more \("0" is not\)/);
  assert.equal(await days.getAttribute('aria-invalid'), 'true');
  await fill(days, '7');
  await fill(mb, '2.5');
  await (await byTestId(b, 'journal-save')).click();
  assert.match(await (await byTestId(b, 'journal-error')).getText(), /Keep the journal under: give a whole number of MB/);
  assert.deepEqual(readSettings(), before, 'nothing was written');
  await bothThemes(b, 'settings-activity-error');

  await fill(mb, '50');
  await (await byTestId(b, 'journal-save')).click();
  await eventually(b, async () => JSON.stringify(readSettings().journal) === JSON.stringify({ keepDays: 7, keepMb: 50 }), 'settings.json holds the new limits', 10_000);
  const after = readSettings();
  const { journal, ...rest } = after;
  const { journal: _old, ...restBefore } = before;
  assert.deepEqual(rest, restBefore, 'every other key is untouched');
  assert.ok(!(await exists(b, 'journal-error')), 'the error is gone');
  await eventually(b, async () => (await (await byTestId(b, 'journal-keepDays')).getValue()) === '7', 'the form shows what is saved');
  await section.scrollIntoView({ block: 'start' });
  await bothThemes(b, 'settings-activity');
  const found = await axeBothThemes(b, 'settings');
  assert.deepEqual(found, [], `\n${found.join('\n')}`);
});
