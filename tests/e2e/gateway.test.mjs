// The gateway in the real app: while the app runs, another MCP
// client on this machine reaches every server through one URL with the
// token the Gateway view shows; switching a tool off in the Tools view takes
// it out of that client's open session (with list_changed); "Use Switchboard
// in…" writes Cursor's entry and Disconnect leaves the file as it was.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startApp, gotoView, byTestId, exists, fill, screenshot, eventually, clickUntil } from './lib/app.mjs';
import { McpHttpClient } from './lib/mcp.mjs';

let app;
let client;
let token;
before(async () => {
  app = await startApp('gateway');
});
after(async () => {
  await client?.close();
  if (app) await app.close();
});

const text = async (b, id) => (await (await byTestId(b, id)).getText()).trim();

/** Waits until the Connect panel says it wrote the entry; fails with its error, or its HTML if it says nothing. */
async function connectResult(b, client, timeout) {
  try {
    await eventually(b, async () => (await exists(b, 'connect-done')) || (await exists(b, 'connect-error')), 'the connect panel reports the result', timeout);
  } catch (e) {
    await screenshot(b, `connect-${client}-stuck`);
    const panel = await b.execute(() => document.querySelector('[data-testid="connect-panel"]')?.outerHTML ?? 'no panel');
    throw new Error(`${e.message}\n--- the panel ---\n${panel}`);
  }
  if (await exists(b, 'connect-error')) assert.fail(`connect failed: ${await text(b, 'connect-error')}`);
}

/** Opens `client`'s Connect panel and waits for its preview. */
async function openConnect(b, client) {
  const button = await byTestId(b, `connect-${client}`, { displayed: true, timeout: 20_000 });
  await clickUntil(b, button, () => exists(b, 'connect-preview'), `the Connect panel of ${client} shows a preview`);
}

/** Writes the entry: the confirm button is busy or the panel has a result. */
async function confirmConnect(b) {
  const confirm = await byTestId(b, 'connect-confirm');
  const reacted = async () => (await exists(b, 'connect-done')) || (await exists(b, 'connect-error')) || !(await confirm.isEnabled().catch(() => false));
  await clickUntil(b, confirm, reacted, 'the Connect panel started writing the entry');
}

test('the Gateway view shows the URL and token; a client without the token is refused, with it lists every server', async () => {
  const b = app.browser;
  await gotoView(b, 'gateway');
  await eventually(b, async () => /listening/i.test(await text(b, 'gateway-state')), 'the gateway listens', 20_000);
  assert.equal(await text(b, 'gateway-url'), app.gatewayUrl);

  const anonymous = new McpHttpClient(app.gatewayUrl, null);
  await assert.rejects(anonymous.initialize(), (e) => e.status === 401, 'no token: 401');

  await (await byTestId(b, 'gateway-show-token')).click();
  await eventually(b, async () => (await text(b, 'gateway-token')).length >= 20, 'the token is shown');
  token = await text(b, 'gateway-token');

  client = new McpHttpClient(app.gatewayUrl, token);
  const init = await client.initialize('e2e-gateway-client', '1.2.3');
  assert.ok(init.capabilities.tools, JSON.stringify(init));
  await client.listen();
  let names = [];
  await eventually(b, async () => {
    names = await client.listTools();
    return names.includes('mcp_alpha_echo') && names.includes('mcp_beta_echo');
  }, `alpha's and beta's tools through the gateway (got ${names.join(', ')})`, 20_000);

  // The view names the connected client.
  await eventually(b, async () => (await text(b, 'gateway-sessions')).includes('e2e-gateway-client'), 'the session is listed');
  await screenshot(b, 'gateway-view');
  // The session stays listed while it is open (not only while a request runs).
  await client.listTools();
  await new Promise((r) => setTimeout(r, 1000));
  assert.ok((await text(b, 'gateway-sessions')).includes('e2e-gateway-client'), `still listed: ${await text(b, 'gateway-sessions')}`);
});

test('a tool switched off in the Tools view leaves the open session, and comes back when switched on', async () => {
  assert.ok(client, 'the previous test connected a client');
  const b = app.browser;
  await gotoView(b, 'tools');
  await fill(await byTestId(b, 'tool-search'), 'mcp_alpha_echo');
  const sw = await byTestId(b, 'tool-switch-mcp_alpha_echo', { displayed: true, timeout: 20_000 });
  assert.equal(await sw.getAttribute('aria-checked'), 'true', 'offered by the gateway at first');

  const changed = client.next('notifications/tools/list_changed');
  await sw.click();
  await changed;
  assert.ok(!(await client.listTools()).includes('mcp_alpha_echo'), 'switched off: gone from the session');
  await eventually(b, async () => (await sw.getAttribute('aria-checked')) === 'false', 'the switch shows off');
  const settings = JSON.parse(fs.readFileSync(app.fx.settings, 'utf8'));
  assert.deepEqual(settings.disabledTools, { alpha: ['echo'] }, 'kept by server and raw tool name');
  await screenshot(b, 'tools-switch-off');

  const back = client.next('notifications/tools/list_changed');
  await sw.click();
  await back;
  assert.ok((await client.listTools()).includes('mcp_alpha_echo'), 'switched on: back in the session');
});

test('Connect Cursor writes its switchboard entry; Disconnect leaves the file byte for byte as before', async () => {
  const b = app.browser;
  const file = path.join(app.fx.home, '.cursor/mcp.json');
  const before = fs.readFileSync(file);
  await gotoView(b, 'gateway');
  await openConnect(b, 'cursor');
  // The preview names the file and shows the entry before anything is written.
  await eventually(b, async () => (await text(b, 'connect-preview')).includes('switchboard'), 'the preview shows the entry');
  assert.deepEqual(fs.readFileSync(file), before, 'a preview writes nothing');
  await screenshot(b, 'connect-cursor-preview');
  await confirmConnect(b);
  await connectResult(b, 'cursor', 20_000);
  assert.ok(JSON.parse(fs.readFileSync(file, 'utf8')).mcpServers?.switchboard, 'Cursor\'s file has the entry');
  const entry = JSON.parse(fs.readFileSync(file, 'utf8')).mcpServers.switchboard;
  assert.equal(entry.url, app.gatewayUrl, JSON.stringify(entry));
  assert.equal(entry.headers?.Authorization, `Bearer ${token}`, 'the token Cursor sends');
  // Cursor's other servers are untouched.
  const others = (buf) => Object.keys(JSON.parse(buf.toString()).mcpServers).filter((n) => n !== 'switchboard');
  assert.deepEqual(others(fs.readFileSync(file)), others(before));
  await eventually(b, async () => /connected/i.test(await text(b, 'connection-cursor')), 'Cursor shows as connected');
  await screenshot(b, 'connect-cursor-done');

  const restored = () => Buffer.compare(fs.readFileSync(file), before) === 0;
  await clickUntil(b, await byTestId(b, 'disconnect-cursor'), async () => restored() || !(await exists(b, 'disconnect-cursor')), 'Disconnect of Cursor started');
  await eventually(b, async () => restored(), 'Cursor\'s file is byte for byte as before', 20_000);
});


/**
 * Runs a stdio entry the way a client does (its command and args, the
 * user's HOME, nothing else of ours) and returns the tool names its
 * `tools/list` gives. Fails with the program's stderr when it does not answer.
 */
async function toolsOfStdioEntry(entry, home) {
  const { spawn } = await import('node:child_process');
  const child = spawn(entry.command, entry.args ?? [], {
    env: { HOME: home, PATH: process.env.PATH, ...(entry.env ?? {}) },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => { if (stderr.length < 4000) stderr += d; });
  const answers = new Map();
  let buf = '';
  const waiting = new Map();
  child.stdout.on('data', (d) => {
    buf += d;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      let msg;
      try { msg = JSON.parse(line); } catch { continue; }
      if (msg.id !== undefined && waiting.has(msg.id)) waiting.get(msg.id)(msg);
      else if (msg.id !== undefined) answers.set(msg.id, msg);
    }
  });
  const request = (id, method, params) => new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${entry.command} ${method}: no answer within 30 s\n--- its stderr ---\n${stderr}`)), 30_000);
    waiting.set(id, (msg) => { clearTimeout(timer); msg.error ? reject(new Error(`${method}: ${msg.error.message}`)) : resolve(msg.result); });
    child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
  });
  try {
    await request(1, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'claude-ai', version: '0.0.0' } });
    child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');
    return (await request(2, 'tools/list', {})).tools.map((t) => t.name);
  } finally {
    // End of input is how a client stops a stdio server; it must exit by itself.
    child.stdin.end();
    const exited = await new Promise((resolve) => {
      if (child.exitCode !== null) return resolve(true);
      const t = setTimeout(() => resolve(false), 10_000);
      child.once('exit', () => { clearTimeout(t); resolve(true); });
    });
    if (!exited) child.kill('SIGKILL');
    assert.ok(exited, `${entry.command} serve did not exit within 10 s of the end of its input`);
  }
}

test('Connect Claude Desktop (stdio only): the app checks switchboard serve, writes the entry, and the entry works as Claude Desktop runs it', async () => {
  const b = app.browser;
  const file = path.join(app.fx.home, '.config/Claude/claude_desktop_config.json');
  const before = fs.readFileSync(file);
  await gotoView(b, 'gateway');
  await openConnect(b, 'claude-desktop');
  await eventually(b, async () => (await text(b, 'connect-preview')).includes('"serve"'), 'the preview shows the stdio entry');
  assert.ok(!(await exists(b, 'connect-http')), 'Claude Desktop\'s file takes no http entry: no http choice offered');
  await confirmConnect(b);
  // The check starts the sidecar and waits for its handshake and tool list.
  await connectResult(b, 'claude-desktop', 60_000);
  assert.match(await text(b, 'connect-check'), /serve answered as .* with \d+ tools/);
  await screenshot(b, 'connect-claude-desktop-done');

  const entry = JSON.parse(fs.readFileSync(file, 'utf8')).mcpServers?.switchboard;
  assert.ok(entry, 'Claude Desktop\'s file has the entry');
  assert.ok(path.isAbsolute(entry.command) && fs.existsSync(entry.command), `an absolute path to the program: ${entry.command}`);
  assert.deepEqual(entry.args, ['serve']);
  const names = await toolsOfStdioEntry(entry, app.fx.home);
  assert.ok(names.includes('mcp_alpha_echo'), `the entry serves alpha's tools: ${names.join(', ')}`);

  const restored = () => Buffer.compare(fs.readFileSync(file), before) === 0;
  await clickUntil(b, await byTestId(b, 'disconnect-claude-desktop'), async () => restored() || !(await exists(b, 'disconnect-claude-desktop')), 'Disconnect of Claude Desktop started');
  await eventually(b, async () => restored(), 'Claude Desktop\'s file is byte for byte as before', 20_000);
});
