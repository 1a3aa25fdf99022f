// "Test connection" in the Add server form: the app connects the
// definition in the form once, in a throwaway manager, and reports the tool
// count or `Failed to connect to "<name>": …` with what to try next. Nothing is
// saved and nothing is left running.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  startApp, gotoView, byTestId, exists, fill, screenshot, eventually, processesMatching, sleep, E2E,
} from './lib/app.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

let app;
let serversBefore;
before(async () => {
  app = await startApp('test-connection');
  serversBefore = fs.readFileSync(app.fx.servers, 'utf8');
});
after(async () => {
  if (app) await app.close();
});

/** The fixture server's fixed tools (switchboard_tests::FIXED_TOOLS), counted from its source. */
function fixedToolCount() {
  const src = fs.readFileSync(path.join(ROOT, 'tests/src/lib.rs'), 'utf8');
  const body = src.match(/FIXED_TOOLS: &\[&str\] = &\[([^\]]*)\]/);
  assert.ok(body, 'FIXED_TOOLS found in tests/src/lib.rs');
  return body[1].match(/"[^"]+"/g).length;
}

/**
 * A port nothing listens on: 1 (tcpmux), below the range ports are handed out
 * from. A port freed after listening on port 0 can be handed out again at once,
 * and was: to a listener that answered 401 (as manager_connect.rs, port 1).
 */
const DEAD_PORT = 1;

async function openForm(b) {
  // A test that failed may have left the form open over the view.
  if (await exists(b, 'add-cancel')) await (await byTestId(b, 'add-cancel')).click();
  await gotoView(b, 'servers');
  await (await byTestId(b, 'add-server-button')).click();
  return byTestId(b, 'add-name', { displayed: true });
}

/** Clicks Test connection and returns {state, text} of the report once it is there. */
async function testConnection(b, timeout = 60_000) {
  await (await byTestId(b, 'add-test')).click();
  let el;
  await eventually(b, async () => {
    if (!(await exists(b, 'add-test-result'))) return false;
    el = await byTestId(b, 'add-test-result');
    return true;
  }, 'Test connection reports a result (add-test-result)', timeout);
  // The report is at the end of the form: it must be scrolled into view, not
  // left below the dialog's fold.
  await eventually(b, () => b.execute((id) => {
    const e = document.querySelector(`[data-testid="${id}"]`);
    const box = e?.closest('[role="dialog"] .body') ?? e?.closest('[role="dialog"]');
    if (!e || !box) return false;
    const r = e.getBoundingClientRect();
    const v = box.getBoundingClientRect();
    return r.top >= v.top - 1 && r.bottom <= v.bottom + 1;
  }, 'add-test-result'), 'the test report is scrolled into view in the dialog');
  return { state: await el.getAttribute('data-state'), text: (await el.getText()).trim() };
}

/** A screenshot once WebKit painted the report (a shot right away can show an older frame). */
async function shot(b, name) {
  await sleep(300);
  await screenshot(b, name);
}

async function closeForm(b) {
  await (await byTestId(b, 'add-cancel')).click();
  await eventually(b, async () => !(await exists(b, 'add-name')), 'the Add server form closes');
  assert.equal(fs.readFileSync(app.fx.servers, 'utf8'), serversBefore, 'testing a connection saves nothing');
}

test('a working stdio server: connected, with its tool count; nothing saved, nothing left running', async () => {
  const b = app.browser;
  await fill(await openForm(b), 'probe-ok');
  await fill(await byTestId(b, 'add-command'), E2E.fixtureServer);
  // One argument per line: two generated tools on top of the fixed ones.
  // (WebDriver drops "\n" from typed text; Enter makes the new line.)
  const args = await byTestId(b, 'add-args');
  await fill(args, '--name=probe');
  await b.keys(['Enter']);
  await args.addValue('--tools=2');
  assert.equal(await args.getValue(), '--name=probe\n--tools=2');
  const r = await testConnection(b);
  await shot(b, 'test-connection-ok');
  assert.equal(r.state, 'ok', r.text);
  assert.equal(r.text, `Connected to "probe-ok": ${fixedToolCount() + 2} tools`);
  await eventually(b, async () => processesMatching(`${E2E.binDir}/fixture-server --name=probe`).length === 0,
    'the probed server is stopped after the test');
  await closeForm(b);
});

test('a command that does not exist: Failed to connect, naming the command and where it was looked for', async () => {
  const b = app.browser;
  await fill(await openForm(b), 'ghost');
  await fill(await byTestId(b, 'add-command'), 'switchboard-no-such-command');
  const r = await testConnection(b);
  await shot(b, 'test-connection-failed');
  assert.equal(r.state, 'failed', r.text);
  assert.ok(r.text.startsWith('Failed to connect to "ghost": '), r.text);
  assert.match(r.text, /command "switchboard-no-such-command" was not found on PATH \(searched: [^)]+\)/);
  await closeForm(b);
});

test('an http URL nobody listens on: Failed to connect, with the reason', async () => {
  const b = app.browser;
  const port = DEAD_PORT;
  await fill(await openForm(b), 'nowhere');
  await (await byTestId(b, 'add-transport-http')).click();
  await fill(await byTestId(b, 'add-url', { displayed: true }), `http://127.0.0.1:${port}/mcp`);
  const r = await testConnection(b);
  assert.equal(r.state, 'failed', r.text);
  assert.ok(r.text.startsWith('Failed to connect to "nowhere": '), r.text);
  assert.ok(r.text.includes(`http://127.0.0.1:${port}/mcp`), `the report names the URL: ${r.text}`);
  await closeForm(b);
});

test('a server that never answers within the timeout: Failed to connect, with the hint to raise the timeout', async () => {
  const b = app.browser;
  await fill(await openForm(b), 'mute');
  // `sleep` starts fine but never speaks MCP.
  await fill(await byTestId(b, 'add-command'), 'sleep');
  await fill(await byTestId(b, 'add-args'), '61.5');
  await fill(await byTestId(b, 'add-timeout'), '1500');
  const r = await testConnection(b);
  assert.equal(r.state, 'failed', r.text);
  assert.ok(r.text.startsWith('Failed to connect to "mute": '), r.text);
  assert.match(r.text, /\(hint: raise the timeout\)$/, r.text);
  const sleeping = () => processesMatching('sleep 61.5').filter((p) => p.cmd === 'sleep 61.5' || p.cmd.endsWith('/sleep 61.5'));
  await eventually(b, async () => sleeping().length === 0, 'the probed process is stopped after the test');
  await closeForm(b);
});
