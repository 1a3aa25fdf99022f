// A server that cannot start says why in plain words and what to do, in its
// row and in its detail, without burning restarts on what retrying cannot
// heal; its diagnostic report holds no secret.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, gotoView, byTestId, exists, screenshot, eventually, waitForStatus, clickUntil } from './lib/app.mjs';

let app;
before(async () => {
  app = await startApp('doctor', {
    extraServers: {
      // A runtime this machine does not have (dnx comes with the .NET SDK).
      'needs-dotnet': { type: 'stdio', command: 'dnx', args: ['Some.Mcp.Server@1.0.0', '--yes'], env: { API_KEY: 'sk-e2e-doctor-secret' } },
      // A server that says why it quits.
      'quits': { type: 'stdio', command: '/bin/sh', args: ['-c', 'echo "Error: GITHUB_TOKEN is required" >&2; exit 1'], restartPolicy: { initialDelayMs: 100, maxDelayMs: 100, backoffMultiplier: 1, maxRestartAttempts: 1 } },
    },
  });
});
after(async () => {
  if (app) await app.close();
});

const rowText = async (b, name) => b.execute((n) => document.querySelector(`[data-testid="server-row-${n}"]`)?.closest('tr')?.innerText ?? '', name);

test('a missing runtime and an early exit are explained in the row and the detail; the report copies without the secret', async () => {
  const b = app.browser;
  await gotoView(b, 'servers');
  await waitForStatus(b, 'needs-dotnet', 'failed', { timeout: 30_000 });
  await eventually(b, async () => (await rowText(b, 'needs-dotnet')).includes('dnx not found — install the .NET SDK'), 'the row says what to install', 15_000);
  assert.match(await rowText(b, 'needs-dotnet'), /\t–\tdnx not found/, 'not found is not restarted (no restarts before the explanation)');
  await waitForStatus(b, 'quits', 'failed', { timeout: 30_000 });
  await eventually(b, async () => (await rowText(b, 'quits')).includes('exited at once: Error: GITHUB_TOKEN is required'), 'the row quotes why it quit', 15_000);
  await screenshot(b, 'doctor-servers');

  const row = await byTestId(b, 'server-row-needs-dotnet');
  await clickUntil(b, row, () => exists(b, 'diagnosis-needs-dotnet'), 'the detail of needs-dotnet opens');
  const box = await (await byTestId(b, 'diagnosis-needs-dotnet')).getText();
  assert.ok(box.includes('"dnx" was not found: it comes with the .NET SDK') && box.includes('Searched:'), box);
  await (await byTestId(b, 'copy-report-needs-dotnet')).click();
  await eventually(b, async () => exists(b, 'report-needs-dotnet'), 'the report is shown');
  const report = await b.execute(() => document.querySelector('[data-testid="report-needs-dotnet"]').value);
  assert.ok(report.includes('Server: needs-dotnet') && report.includes('API_KEY') && report.includes('[command not found]'), report);
  assert.ok(!report.includes('sk-e2e-doctor-secret'), `the report holds the secret:\n${report}`);
  await screenshot(b, 'doctor-detail');
});
