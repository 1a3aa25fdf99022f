// Live config (issue 6): a change saved in another app's config
// file shows up in the server list, and only the affected server starts;
// the others keep their processes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startApp, gotoView, byTestId, waitForStatus, screenshot, processesMatching, E2E } from './lib/app.mjs';

let app;
before(async () => {
  app = await startApp('live-config');
});
after(async () => {
  if (app) await app.close();
});

const fixturePids = (name) =>
  processesMatching(`${E2E.binDir}/fixture-server --name ${name}`)
    .filter((p) => p.cmd.endsWith(`--name ${name}`) || p.cmd.includes(`--name ${name} `))
    .map((p) => p.pid);

test('a server added to Cursor\'s file by another app appears and connects; others keep running', async () => {
  const b = app.browser;
  await gotoView(b, 'servers');
  for (const name of ['alpha', 'beta']) await waitForStatus(b, name, 'connected', { timeout: 30_000 });
  const before = { alpha: fixturePids('alpha'), beta: fixturePids('beta') };
  assert.equal(before.alpha.length, 1, 'alpha runs once');

  // Cursor (the other app) saves its config the way editors do: write a temp file, rename it over.
  const file = path.join(app.fx.home, '.cursor', 'mcp.json');
  const cfg = JSON.parse(fs.readFileSync(file, 'utf8'));
  cfg.mcpServers.delta = { command: path.join(E2E.binDir, 'fixture-server'), args: ['--name', 'delta'] };
  const tmp = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(tmp, JSON.stringify(cfg, null, 2));
  fs.renameSync(tmp, file);

  await byTestId(b, 'server-row-delta', { timeout: 15_000 });
  await waitForStatus(b, 'delta', 'connected', { timeout: 30_000 });
  await screenshot(b, 'live-config');
  assert.deepEqual(fixturePids('alpha'), before.alpha, 'alpha kept its process');
  assert.deepEqual(fixturePids('beta'), before.beta, 'beta kept its process');
});
