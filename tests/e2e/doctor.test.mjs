// A server that cannot start says why in plain words and what to do, in its
// row and in its detail, without burning restarts on what retrying cannot
// heal; its diagnostic report holds no secret.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startApp, gotoView, byTestId, exists, screenshot, screenshotDark, eventually, waitForStatus, clickUntil, E2E } from './lib/app.mjs';

let app;
before(async () => {
  app = await startApp('doctor', {
    extraServers: {
      // A runtime this machine does not have (dnx comes with the .NET SDK).
      'needs-dotnet': { type: 'stdio', command: 'dnx', args: ['Some.Mcp.Server@1.0.0', '--yes'], env: { API_KEY: 'sk-e2e-doctor-secret' } },
      // Two more that need it: one banner says so instead of three red rows.
      'needs-dotnet-2': { type: 'stdio', command: 'dnx', args: ['Other.Mcp.Server@2.0.0', '--yes'] },
      'needs-dotnet-3': { type: 'stdio', command: 'dnx', args: ['Third.Mcp.Server@1.0.0', '--yes'] },
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
  const restarts = await b.execute(() => document.querySelector('[data-testid="server-row-needs-dotnet"]')?.closest('tr')?.querySelector('td.c-restarts')?.textContent?.trim());
  assert.equal(restarts, '–', 'not found is not restarted');
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

test('servers failing alike are explained once above the table, with the fix', async () => {
  const b = app.browser;
  await gotoView(b, 'servers');
  // The E2E stubs make every npx server fail alike too: the largest group is named.
  await eventually(b, async () => exists(b, 'shared-failure'), 'the shared-failure banner', 30_000);
  const banner = await (await byTestId(b, 'shared-failure')).getText();
  assert.match(banner, /^\d+ servers cannot start: /, banner);
  assert.ok(await exists(b, 'shared-failure-restart'), 'Restart them is offered');
});

// Kept in the repository (tests/e2e/screenshots): the Servers view at the
// widths people use, light and dark, looked at when the view changes.
const KEPT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'screenshots');

test('the Servers view at 900, 1200 and 1600 pixels, light and dark', async () => {
  const b = app.browser;
  await gotoView(b, 'servers');
  await byTestId(b, 'server-row-quits', { timeout: 20_000 });
  const original = await b.getWindowSize();
  try {
    for (const width of [900, 1200, 1600]) {
      await b.setWindowSize(width, 780);
      await eventually(b, async () => Math.abs((await b.execute(() => window.innerWidth)) - width) < 40, `the window is ${width} px wide`);
      // Painted at the new size before it is photographed.
      await b.executeAsync((done) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(done, 0))));
      // Nothing overflows sideways: the table fits the window.
      const overflow = await b.execute(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 1, `at ${width} px the page scrolls sideways by ${overflow} px`);
      for (const [theme, shoot] of [['light', screenshot], ['dark', screenshotDark]]) {
        const name = `servers-${width}-${theme}`;
        await shoot(b, name);
        fs.mkdirSync(KEPT, { recursive: true });
        fs.copyFileSync(path.join(E2E.artifacts, `${name}.png`), path.join(KEPT, `${name}.png`));
      }
    }
  } finally {
    await b.setWindowSize(original.width, original.height);
  }
});
