// Tools view and supervision: the fixture servers' tools are
// listed under their sanitized names, the form generated from a tool's input
// schema calls it and shows the result, and a crashed server is restarted.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import process from 'node:process';
import {
  startApp, gotoView, byTestId, exists, sel, fill, waitForStatus, screenshot, eventually, processesMatching, E2E,
} from './lib/app.mjs';

let app;
before(async () => {
  app = await startApp('tools');
  await gotoView(app.browser, 'servers').catch(() => {});
});
after(async () => {
  if (app) await app.close();
});

/** pids of this session's `fixture-server --name <name>` processes. */
const fixturePids = (name) =>
  processesMatching(`${E2E.binDir}/fixture-server --name ${name}`).filter((p) => p.cmd.endsWith(`--name ${name}`) || p.cmd.includes(`--name ${name} `)).map((p) => p.pid);

/** The input for argument `prop` of the open tool form. */
async function argInput(b, prop) {
  if (await exists(b, `tool-arg-${prop}`)) return byTestId(b, `tool-arg-${prop}`);
  const byName = await b.$(`form [name="${prop}"], [data-testid="tool-form"] [name="${prop}"]`);
  if (await byName.isExisting()) return byName;
  return byTestId(b, `tool-arg-${prop}`); // fails naming the testid
}

/**
 * tool-row-<name>: the Tools list is virtualized (only the rows in view are in
 * the DOM), so the row is brought into the DOM by typing its name into the
 * search box (tool-search), as a user would.
 */
async function toolRow(b, toolName) {
  await fill(await byTestId(b, 'tool-search'), toolName);
  return byTestId(b, `tool-row-${toolName}`, { timeout: 20_000 });
}

async function openTool(b, toolName) {
  await gotoView(b, 'tools');
  const row = await toolRow(b, toolName);
  await row.click();
  return byTestId(b, 'tool-call-button', { displayed: true });
}

test('lists the fixture servers\' tools under their sanitized names', async () => {
  const b = app.browser;
  await gotoView(b, 'tools');
  for (const t of ['mcp_alpha_echo', 'mcp_alpha_crash', 'mcp_beta_echo', 'mcp_browsermcp_add']) {
    await toolRow(b, t);
  }
});

test('calling alpha\'s echo from the generated form shows its result', async () => {
  const b = app.browser;
  const call = await openTool(b, 'mcp_alpha_echo');
  await fill(await argInput(b, 'text'), 'hello from e2e');
  await call.click();
  const result = await byTestId(b, 'tool-result', { timeout: 15_000 });
  await eventually(b, async () => (await result.getText()).includes('hello from e2e'), 'tool-result shows "hello from e2e"');
  await screenshot(b, 'tools');
});

test('a server that crashes (alpha\'s crash tool) shows restarting, then connected again', async () => {
  const b = app.browser;
  const [oldPid] = fixturePids('alpha');
  assert.ok(oldPid, 'alpha is running');
  const call = await openTool(b, 'mcp_alpha_crash');
  await call.click();
  await gotoView(b, 'servers');
  // alpha's restartPolicy waits 3 s before the first restart.
  const seen = await waitForStatus(b, 'alpha', 'restarting', { timeout: 10_000 });
  seen.push(...(await waitForStatus(b, 'alpha', 'connected', { timeout: 30_000 })).slice(1));
  const [newPid] = fixturePids('alpha');
  assert.ok(newPid && newPid !== oldPid, `alpha runs again as a new process (old ${oldPid}, new ${newPid}); statuses: ${seen.join(' → ')}`);
});

test('a killed server (kill -9 of alpha\'s pid) shows restarting, then connected again', async () => {
  const b = app.browser;
  await gotoView(b, 'servers');
  await waitForStatus(b, 'alpha', 'connected', { timeout: 30_000 });
  const [oldPid] = fixturePids('alpha');
  assert.ok(oldPid, 'alpha is running');
  process.kill(oldPid, 'SIGKILL');
  const seen = await waitForStatus(b, 'alpha', 'restarting', { timeout: 10_000 });
  seen.push(...(await waitForStatus(b, 'alpha', 'connected', { timeout: 30_000 })).slice(1));
  const [newPid] = fixturePids('alpha');
  assert.ok(newPid && newPid !== oldPid, `alpha runs again as a new process; statuses: ${seen.join(' → ')}`);
  assert.equal((await b.$$(sel('server-status-alpha'))).length, 1, 'alpha is listed once');
});
