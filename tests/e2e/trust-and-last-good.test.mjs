// Project trust and the last good config in the real app (issue 10 points 5
// and 6): a trusted folder's server that changes afterwards is held with the
// difference shown until the user approves it; a `.mcp.json` server Claude
// Code has not approved is not started; a config file caught mid-save keeps
// its servers running and says so, with file, line and column.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startApp, gotoView, byTestId, exists, waitForStatus, statusOf, screenshot, screenshotDark, eventually, processesMatching, E2E } from './lib/app.mjs';

let app;
let project;
const fixture = () => path.join(E2E.binDir, 'fixture-server');

before(async () => {
  app = await startApp('trust', {
    prepare: (fx) => {
      project = path.join(fx.home, 'projects/webapp');
      // Trusted before trust was tied to content: the app pins what its servers run at start.
      fs.writeFileSync(fx.settings, JSON.stringify({ projects: [{ path: project, trusted: true }] }, null, 2) + '\n');
      const file = path.join(project, '.cursor/mcp.json');
      const cfg = JSON.parse(fs.readFileSync(file, 'utf8'));
      cfg.mcpServers.gamma = { command: fixture(), args: ['--name', 'gamma'] };
      fs.writeFileSync(file, JSON.stringify(cfg, null, 2));
    },
  });
});
after(async () => {
  if (app) await app.close();
});

/** Another program saves a file the way editors do: a temp file renamed over it. */
function saveAtomic(file, text) {
  const tmp = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(tmp, text);
  fs.renameSync(tmp, file);
}

const pidsOf = (name) => processesMatching(`${E2E.binDir}/fixture-server --name ${name}`).filter((p) => p.cmd.endsWith(`--name ${name}`)).map((p) => p.pid);

test('a trusted folder\'s server that changed is held with the difference until approved', async () => {
  const b = app.browser;
  await gotoView(b, 'servers');
  await waitForStatus(b, 'gamma', 'connected', { timeout: 30_000 });
  // Claude Code rejected this .mcp.json server for the project: not started, and why.
  assert.equal(await statusOf(b, 'mcpjson-rejected'), 'held');

  const file = path.join(project, '.cursor/mcp.json');
  const cfg = JSON.parse(fs.readFileSync(file, 'utf8'));
  cfg.mcpServers.gamma.args = ['--name', 'gamma', '--tool', 'extra'];
  saveAtomic(file, JSON.stringify(cfg, null, 2));
  await waitForStatus(b, 'gamma', 'held', { timeout: 15_000 });
  await eventually(b, async () => pidsOf('gamma').length === 0, 'gamma to be stopped while held');
  await byTestId(b, 'approve-gamma');
  await screenshot(b, 'trust-held');

  await (await byTestId(b, 'server-row-gamma')).click();
  const held = await byTestId(b, 'held-gamma', { displayed: true });
  const text = await held.getText();
  assert.match(text, /Held: changed since you trusted this folder; approve the change to run it\./);
  assert.match(text, /args: --name gamma → --name gamma --tool extra/);
  await screenshot(b, 'trust-held-detail');
  await screenshotDark(b, 'trust-held-detail-dark');

  await (await byTestId(b, 'approve-detail-gamma')).click();
  await waitForStatus(b, 'gamma', 'connected', { timeout: 30_000 });
  assert.equal(await exists(b, 'held-gamma'), false, 'no longer held');
  const settings = JSON.parse(fs.readFileSync(app.fx.settings, 'utf8'));
  const pins = settings.trustedServers?.[project] ?? {};
  assert.ok(pins['cursor-project/gamma']?.args?.includes('extra'), `the approved content is pinned: ${JSON.stringify(pins)}`);
  await gotoView(b, 'servers');
});

test('a config file caught mid-save keeps its servers running and says since when', async () => {
  const b = app.browser;
  await gotoView(b, 'servers');
  for (const name of ['alpha', 'beta']) await waitForStatus(b, name, 'connected', { timeout: 30_000 });
  const before = { alpha: pidsOf('alpha'), beta: pidsOf('beta') };
  assert.equal(before.alpha.length, 1);

  // Half of the file written (an editor's save caught halfway, no rename).
  const good = fs.readFileSync(app.fx.servers, 'utf8');
  fs.writeFileSync(app.fx.servers, good.slice(0, Math.floor(good.length / 2)));
  const banner = await byTestId(b, 'parse-error-switchboard', { timeout: 15_000, displayed: true });
  const text = await banner.getText();
  assert.ok(text.includes(`${app.fx.servers}:`), text);
  assert.match(text, /\(line \d+, column \d+\)/);
  assert.match(text, /Using the last good version from \d\d:\d\d: its servers keep running\./);
  await byTestId(b, 'last-good-alpha');
  assert.equal(await statusOf(b, 'alpha'), 'connected');
  assert.deepEqual({ alpha: pidsOf('alpha'), beta: pidsOf('beta') }, before, 'nothing restarted');
  await screenshot(b, 'last-good');
  await screenshotDark(b, 'last-good-dark');

  await gotoView(b, 'sources');
  const src = await byTestId(b, 'source-parse-error-switchboard', { displayed: true });
  assert.match(await src.getText(), /Using the last good version from \d\d:\d\d/);
  await screenshot(b, 'last-good-sources');

  // The save completes with the same servers: nothing restarts.
  fs.writeFileSync(app.fx.servers, good);
  await gotoView(b, 'servers');
  await eventually(b, async () => !(await exists(b, 'parse-error-switchboard')), 'the banner to go once the file parses');
  assert.equal(await exists(b, 'last-good-alpha'), false);
  assert.deepEqual({ alpha: pidsOf('alpha'), beta: pidsOf('beta') }, before, 'nothing restarted');
});
