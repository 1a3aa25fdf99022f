// Add server form: the form writes the server into the chosen
// source's file (Switchboard's own servers.json here), keeps what was there,
// and the new server starts and connects.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  startApp, gotoView, byTestId, fill, waitForStatus, screenshot, eventually, readJson, E2E,
} from './lib/app.mjs';

let app;
before(async () => {
  app = await startApp('add-server');
});
after(async () => {
  if (app) await app.close();
});

/** Picks `value` in a <select>, or types it into an input. */
async function choose(el, value) {
  if ((await el.getTagName()).toLowerCase() === 'select') await el.selectByAttribute('value', value);
  else await fill(el, value);
}

test('adding a stdio server writes servers.json and the server connects', async () => {
  const b = app.browser;
  await gotoView(b, 'servers');
  await (await byTestId(b, 'add-server-button')).click();
  await fill(await byTestId(b, 'add-name', { displayed: true }), 'gamma');
  await fill(await byTestId(b, 'add-command'), E2E.fixtureServer);
  // One argument with no spaces: the same whether args are split on
  // whitespace or entered one per line.
  await fill(await byTestId(b, 'add-args'), '--name=gamma');
  await choose(await byTestId(b, 'add-source'), 'switchboard');
  await screenshot(b, 'add-server');
  await (await byTestId(b, 'add-save')).click();

  let file;
  await eventually(b, async () => {
    file = readJson(app.fx.servers);
    return Boolean(file.mcpServers?.gamma);
  }, `gamma was written to ${app.fx.servers}`);
  const gamma = file.mcpServers.gamma;
  assert.equal(gamma.command, E2E.fixtureServer);
  assert.deepEqual(gamma.args, ['--name=gamma']);
  assert.ok(!gamma.url, 'a stdio server has no url');
  for (const kept of ['alpha', 'beta', 'browsermcp']) {
    assert.ok(file.mcpServers[kept], `${kept} is still in servers.json`);
  }
  assert.deepEqual(file.mcpServers.alpha.restartPolicy?.initialDelayMs, 3000, 'fields the form did not touch are kept');

  await gotoView(b, 'servers');
  await byTestId(b, 'server-row-gamma', { timeout: 15_000 });
  await waitForStatus(b, 'gamma', 'connected', { timeout: 30_000 });
});
