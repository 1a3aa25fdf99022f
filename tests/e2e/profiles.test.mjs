// Profiles (issue 28): a profile made in the Profiles view (a server checked,
// another dragged in and checked off again), switched to from the header;
// the Tools view and the token totals follow; a tool switched off inside the
// profile lowers its total. "Use in…" applies it to Cursor's own file and
// says what it changed; a budget written into the settings file outside the
// app (as the CLI writes it) shows at once as the over-budget warning (the
// biggest server, what tool search costs); deleting a profile Cursor uses is
// refused with the engine's message. The Clients page shows what Cursor
// loads (the sum of its servers' figures in the Servers view), and a budget
// set there below it shows the warning. axe-core finds nothing serious on
// the view or the Clients page, light or dark.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  startApp, gotoView, byTestId, exists, fill, eventually, screenshot, screenshotDark, testIds, waitForStatus, readJson,
} from './lib/app.mjs';
import { seriousViolations } from './lib/axe.mjs';

let app;
before(async () => {
  app = await startApp('profiles');
});
after(async () => {
  if (app) await app.close();
});

const attr = async (b, id, name) => (await byTestId(b, id)).getAttribute(name);
const num = async (b, id, name = 'data-tokens') => Number(await attr(b, id, name));
const text = async (b, id) => (await (await byTestId(b, id)).getText()).trim();
const hash = (b) => b.execute(() => decodeURIComponent(window.location.hash));

/** Clears a Svelte-bound field with the keyboard (WebDriver's clear fires no input event). */
async function retype(b, el, value) {
  await el.click();
  await b.keys(['Control', 'a']);
  await b.keys(['Backspace']);
  await el.setValue(value);
}

/** Changes Switchboard's settings file as another program would (the CLI), in one rename. */
function editSettings(change) {
  const s = readJson(app.fx.settings);
  change(s);
  const tmp = `${app.fx.settings}.e2e-tmp`;
  fs.writeFileSync(tmp, JSON.stringify(s, null, 2) + '\n');
  fs.renameSync(tmp, app.fx.settings);
}

/** The Tools view's line about the active profile: name, tool count, tokens. */
async function toolsProfile(b) {
  const el = await byTestId(b, 'tools-profile');
  return {
    name: await el.getAttribute('data-profile'),
    count: Number(await el.getAttribute('data-count')),
    tokens: Number(await el.getAttribute('data-tokens')),
    text: (await el.getText()).trim(),
  };
}

let everything;

test('Everything is listed first, built in and active, with what its tools cost', async () => {
  const b = app.browser;
  await gotoView(b, 'servers');
  for (const s of ['alpha', 'beta', 'browsermcp']) await waitForStatus(b, s, 'connected', { timeout: 30_000 });
  // The Servers view names each server's cost too.
  await eventually(b, async () => Number(await attr(b, 'server-tokens-alpha', 'data-tokens')) > 0, 'alpha\'s tokens in the Servers view', 20_000);
  await screenshot(b, 'profiles-servers-tokens');
  await gotoView(b, 'profiles');
  assert.deepEqual(await testIds(b, 'profile-row-'), ['profile-row-Everything']);
  assert.equal(await attr(b, 'profile-row-Everything', 'data-active'), 'true');
  // Counted by the app's sidecar (`switchboard tokens`), not guessed.
  await eventually(b, async () => (await num(b, 'profile-tokens')) > 0, 'Everything costs tokens', 20_000);
  assert.match(await text(b, 'profile-tokens'), /^[\d,]+ tokens · o200k_base/);
  everything = await num(b, 'profile-tokens');
  assert.equal(await exists(b, 'profile-delete'), false, 'Everything cannot be deleted');
  assert.equal(await (await byTestId(b, 'profile-server-check-alpha')).isEnabled(), false, 'Everything is not edited');
});

test('a profile is made by name (a bad name gets the engine\'s error inline), a server checked in, another dragged in', async () => {
  const b = app.browser;
  await gotoView(b, 'profiles');
  const name = await byTestId(b, 'profile-new-name');
  await fill(name, 'a/b');
  await (await byTestId(b, 'profile-create')).click();
  assert.match(await text(b, 'profile-create-error'), /"a\/b" is not a profile name/);

  await retype(b, name, 'Focus');
  await (await byTestId(b, 'profile-create')).click();
  await eventually(b, async () => (await hash(b)) === '#/profiles/Focus', 'the new profile is shown');
  await eventually(b, async () => (await text(b, 'profile-name')) === 'Focus', 'its name is the title');
  assert.equal(await num(b, 'profile-tokens'), 0, 'an empty profile costs nothing');

  // Checked in (the keyboard's way).
  await (await byTestId(b, 'profile-server-check-alpha')).click();
  await byTestId(b, 'profile-server-alpha');
  await eventually(b, async () => (await num(b, 'profile-tokens')) > 0, 'alpha\'s tools count in Focus');

  // Dragged in by its handle onto the profile's server list.
  const grip = await byTestId(b, 'server-drag-beta');
  const drop = await byTestId(b, 'profile-drop');
  const from = await grip.getLocation();
  const to = await drop.getLocation();
  const size = await drop.getSize();
  const dx = Math.round(to.x + size.width / 2 - from.x);
  const dy = Math.round(to.y + Math.min(size.height / 2, 60) - from.y);
  await b.action('pointer', { parameters: { pointerType: 'mouse' } })
    .move({ origin: grip, x: 0, y: 0 })
    .down({ button: 0 })
    .pause(100)
    .move({ origin: 'pointer', x: Math.round(dx / 2), y: Math.round(dy / 2), duration: 200 })
    .move({ origin: 'pointer', x: dx - Math.round(dx / 2), y: dy - Math.round(dy / 2), duration: 200 })
    .pause(100)
    .up({ button: 0 })
    .perform();
  await byTestId(b, 'profile-server-beta', { timeout: 5_000 });
  await eventually(b, async () => (await (await byTestId(b, 'profile-server-check-beta')).isSelected()), 'beta\'s checkbox follows the drop');
  const both = await num(b, 'profile-tokens');

  // And checked off again: Focus is alpha alone.
  await (await byTestId(b, 'profile-server-check-beta')).click();
  await eventually(b, async () => !(await exists(b, 'profile-server-beta')), 'beta leaves Focus');
  await eventually(b, async () => (await num(b, 'profile-tokens')) < both, 'the total drops without beta');
  assert.deepEqual(readJson(app.fx.settings).profiles.list, [{ name: 'Focus', servers: [{ name: 'alpha' }] }]);
  assert.deepEqual(await testIds(b, 'profile-row-'), ['profile-row-Everything', 'profile-row-Focus']);
});

test('switched to from the header: the Tools view and the token total follow', async () => {
  const b = app.browser;
  await gotoView(b, 'tools');
  const all = await toolsProfile(b);
  assert.equal(all.name, 'Everything');
  assert.equal(all.tokens, everything, 'the Tools view shows the same total as the Profiles view');
  assert.match(all.text, /o200k_base/, `the tokenizer is named: ${all.text}`);

  await (await byTestId(b, 'profile-switch-Focus')).click();
  await eventually(b, async () => (await toolsProfile(b)).name === 'Focus', 'the Tools view follows the switch');
  const focus = await toolsProfile(b);
  assert.ok(focus.count > 0 && focus.count < all.count, `Focus lists fewer tools (${focus.count}) than Everything (${all.count})`);
  assert.ok(focus.tokens > 0 && focus.tokens < all.tokens, `Focus costs less (${focus.tokens}) than Everything (${all.tokens})`);
  assert.equal(await attr(b, 'profile-switch', 'data-active'), 'Focus');
  assert.equal(await attr(b, 'profile-switch-Focus', 'aria-pressed'), 'true');
  assert.equal(readJson(app.fx.settings).profiles.active, 'Focus', 'the switch is saved: the gateway serves Focus');

  // Only Focus's tools are listed; the others are one click away, marked.
  await fill(await byTestId(b, 'tool-search'), 'echo');
  await byTestId(b, 'tool-row-mcp_alpha_echo');
  assert.equal(await exists(b, 'tool-row-mcp_beta_echo'), false, 'beta\'s echo is not in Focus');
  await (await byTestId(b, 'tools-profile-only')).click();
  const beta = await byTestId(b, 'tool-row-mcp_beta_echo');
  assert.equal(await beta.getAttribute('data-in-profile'), 'false');
  await (await byTestId(b, 'tools-profile-only')).click();
  await screenshot(b, 'profiles-tools-follow');
});

test('a tool switched off inside the profile lowers its total', async () => {
  const b = app.browser;
  await gotoView(b, 'profiles');
  await (await byTestId(b, 'profile-row-Focus')).click();
  await eventually(b, async () => (await text(b, 'profile-name')) === 'Focus', 'Focus is shown');
  const before = await num(b, 'profile-tokens');
  await (await byTestId(b, 'profile-tools-toggle-alpha')).click();
  const echo = await byTestId(b, 'profile-tool-mcp_alpha_echo');
  assert.equal(await echo.getAttribute('aria-checked'), 'true');
  await echo.click();
  await eventually(b, async () => (await num(b, 'profile-tokens')) < before, 'Focus costs less without echo');
  assert.equal(await (await byTestId(b, 'profile-tool-mcp_alpha_echo')).getAttribute('aria-checked'), 'false');
  const after = await num(b, 'profile-tokens');
  assert.deepEqual(readJson(app.fx.settings).profiles.list[0].servers, [{ name: 'alpha', tools: { deny: ['echo'] } }]);

  await gotoView(b, 'tools');
  await eventually(b, async () => (await toolsProfile(b)).tokens === after, 'the Tools view shows the new total');
});

test('used in Cursor from the Profiles view (in its own file): the report says what changed, Cursor uses it; a budget written from outside makes it over budget; delete is refused while Cursor uses it', async () => {
  const b = app.browser;
  await gotoView(b, 'profiles');
  await (await byTestId(b, 'profile-row-Focus')).click();
  await eventually(b, async () => (await text(b, 'profile-name')) === 'Focus', 'Focus is shown');
  const cursorFile = path.join(app.fx.home, '.cursor/mcp.json');
  const before = fs.readFileSync(cursorFile, 'utf8');
  await (await byTestId(b, 'profile-use-client')).selectByAttribute('value', 'cursor');
  await (await byTestId(b, 'profile-use-via-file')).click();
  await (await byTestId(b, 'profile-use-apply')).click();
  try {
    await eventually(b, async () => (await exists(b, 'profile-use-report')) || exists(b, 'profile-use-error'), 'a report or an error', 20_000);
  } catch (e) {
    await screenshot(b, 'profiles-use-stuck');
    throw new Error(`${e.message}; Apply says "${await text(b, 'profile-use-apply')}", client "${await (await byTestId(b, 'profile-use-client')).getValue()}", settings' clients ${JSON.stringify(readJson(app.fx.settings).profiles.clients)}, Cursor's file changed: ${fs.readFileSync(cursorFile, 'utf8') !== before}`);
  }
  if (await exists(b, 'profile-use-error')) assert.fail(`applying failed: ${await text(b, 'profile-use-error')}`);
  const said = await text(b, 'profile-use-report');
  assert.match(said, /Focus in Cursor, in its own file/);
  assert.match(said, /Added: alpha/, said);
  assert.match(said, /Switched off: .*cursor-user-only/, said);
  assert.notEqual(fs.readFileSync(cursorFile, 'utf8'), before, 'Cursor\'s file was written');
  assert.ok(JSON.parse(fs.readFileSync(cursorFile, 'utf8')).mcpServers.alpha, 'alpha is in Cursor\'s file');
  await eventually(b, async () => /cursor/.test(await text(b, 'profile-used-by')), 'Used by cursor');
  await (await byTestId(b, 'profile-use-report')).scrollIntoView({ block: 'center' });
  await screenshot(b, 'profiles-use-in-cursor');

  // A budget set outside the app (as `switchboard profile budget` does).
  const focus = await num(b, 'profile-tokens');
  editSettings((s) => {
    s.profiles.budgets = { default: Math.max(1, Math.floor(focus / 2)) };
  });
  const warning = await byTestId(b, 'profile-over-budget', { timeout: 10_000 });
  assert.match(await warning.getText(), /Over budget/);
  assert.match(await text(b, 'profile-over-budget-biggest'), /^alpha [\d,]+$/);
  assert.ok((await num(b, 'profile-tool-search-tokens')) > 0, 'tool search has its own cost');
  await (await byTestId(b, 'profile-tools-toggle-alpha')).click();
  await b.execute(() => document.querySelector('.content')?.scrollTo(0, 0));
  await screenshot(b, 'profiles');
  await screenshotDark(b, 'profiles-dark');

  // Deleting it is refused while Cursor uses it: the engine's message, inline.
  await (await byTestId(b, 'profile-delete')).click();
  await (await byTestId(b, 'profile-delete-confirm')).click();
  assert.match(await text(b, 'profile-error'), /profile "Focus" is in use by cursor/);
  assert.ok(await exists(b, 'profile-row-Focus'), 'Focus is still there');
});

test('the Clients page: Cursor loads what its servers cost in the Servers view; a budget set below that shows the warning', async () => {
  const b = app.browser;
  // The truth from outside the page: the servers Cursor's own file switches
  // on (Focus's, applied above), and what the Servers view says each costs.
  const cursorFile = path.join(app.fx.home, '.cursor/mcp.json');
  const names = Object.entries(readJson(cursorFile).mcpServers)
    .filter(([, d]) => d.disabled !== true && d.enabled !== false)
    .map(([n]) => n)
    .sort();
  assert.ok(names.length > 0, 'Cursor switches servers on');
  await gotoView(b, 'servers');
  let expected = 0;
  for (const n of names) expected += await num(b, `server-tokens-${n}`);
  assert.ok(expected > 0, `Cursor's servers (${names}) cost tokens`);

  await gotoView(b, 'profiles');
  await (await byTestId(b, 'profile-clients-row')).click();
  await eventually(b, async () => (await hash(b)) === '#/profiles/:clients', 'the Clients page is shown');
  await eventually(b, async () => (await exists(b, 'client-cursor')) && (await num(b, 'client-tokens-cursor')) === expected, `Cursor loads ${expected} tokens`, 20_000);
  assert.match(await text(b, 'client-tokens-cursor'), /^[\d,]+ tokens · o200k_base$/);
  assert.equal(await text(b, 'client-profile-cursor'), 'Follows Focus, in its own file');
  await (await byTestId(b, 'client-servers-toggle-cursor')).click();
  const listed = (await testIds(b, 'client-server-cursor-')).map((id) => id.slice('client-server-cursor-'.length));
  assert.deepEqual(listed.sort(), names, 'the servers it loads are the ones its file switches on');

  // A budget above what it loads: no warning, saved for Cursor alone.
  const setBudget = async (value) => {
    await retype(b, await byTestId(b, 'client-budget-cursor'), value);
    await (await byTestId(b, 'client-budget-save-cursor')).click();
  };
  await setBudget(String(expected + 1000));
  await eventually(b, async () => Number(await attr(b, 'client-cursor', 'data-budget')) === expected + 1000, 'the new budget is shown');
  assert.equal(await attr(b, 'client-cursor', 'data-over'), 'false');
  assert.equal(await exists(b, 'client-cursor-over-budget'), false, 'within budget: no warning');
  assert.equal(readJson(app.fx.settings).profiles.budgets.cursor, expected + 1000);

  // Below it: the warning, naming the biggest contributor.
  await setBudget(String(expected - 1));
  const warning = await byTestId(b, 'client-cursor-over-budget', { timeout: 10_000 });
  assert.match(await warning.getText(), /Over budget:[^]*more than the [\d,]+-token budget of Cursor/);
  assert.equal(Number(await warning.getAttribute('data-budget')), expected - 1);
  assert.match(await text(b, 'client-cursor-over-budget-biggest'), /^alpha [\d,]+$/);
  assert.ok((await num(b, 'client-cursor-tool-search-tokens')) > 0, 'tool search has its own cost');
  assert.equal(await attr(b, 'profile-clients-row', 'data-over'), '1', 'the side says one client is over budget');

  // Not a number: said inline, nothing saved.
  await setBudget('lots');
  assert.match(await text(b, 'client-budget-error-cursor'), /whole number of tokens/);
  assert.equal(readJson(app.fx.settings).profiles.budgets.cursor, expected - 1);
  await retype(b, await byTestId(b, 'client-budget-cursor'), String(expected - 1));
  await (await byTestId(b, 'client-cursor')).scrollIntoView({ block: 'center' });
  await screenshot(b, 'profiles-clients');
  await screenshotDark(b, 'profiles-clients-dark');
});

test('the Profiles view has no serious or critical accessibility violation, light and dark', async () => {
  const b = app.browser;
  await gotoView(b, 'profiles');
  await (await byTestId(b, 'profile-row-Everything')).click();
  await eventually(b, async () => (await text(b, 'profile-name')) === 'Everything', 'Everything is shown');
  const found = (await seriousViolations(b)).map((v) => `Everything: ${v}`);
  await (await byTestId(b, 'profile-row-Focus')).click();
  await eventually(b, async () => (await text(b, 'profile-name')) === 'Focus', 'Focus is shown');
  found.push(...(await seriousViolations(b)).map((v) => `light: ${v}`));
  await (await byTestId(b, 'profile-clients-row')).click();
  await byTestId(b, 'client-cursor');
  found.push(...(await seriousViolations(b)).map((v) => `Clients, light: ${v}`));
  await b.execute(() => {
    const css = [];
    for (const sheet of document.styleSheets) {
      for (const r of sheet.cssRules) {
        if (r instanceof CSSMediaRule && /prefers-color-scheme:\s*dark/.test(r.media.mediaText)) for (const inner of r.cssRules) css.push(inner.cssText);
      }
    }
    const style = document.createElement('style');
    style.id = 'e2e-dark';
    style.textContent = css.join('\n');
    document.head.append(style);
  });
  found.push(...(await seriousViolations(b)).map((v) => `Clients, dark: ${v}`));
  await (await byTestId(b, 'profile-row-Focus')).click();
  await eventually(b, async () => (await text(b, 'profile-name')) === 'Focus', 'Focus is shown');
  found.push(...(await seriousViolations(b)).map((v) => `dark: ${v}`));
  await b.execute(() => document.getElementById('e2e-dark')?.remove());
  assert.deepEqual(found, [], `\n${found.join('\n')}`);
});
