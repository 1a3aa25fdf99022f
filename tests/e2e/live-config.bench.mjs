// Benchmark (issue 6): latency from an external atomic save of a
// client's config file to the change being visible in the app's server list
// (debounce, re-discovery, reconcile, event, UI reload and render included).
// Not part of the test run; start it with
//   tests/e2e/run.sh tests/e2e/live-config.bench.mjs
// It prints a table; compare with `cargo bench -p switchboard-engine --bench watch`
// (save → Reconciled inside the engine).
//
// Clocks: the page's Date.now() and Node's are the same wall clock on one
// machine; a MutationObserver in the page stamps the moment the row exists.
import { test, before, after } from 'node:test';
import fs from 'node:fs';
import path from 'node:path';
import { startApp, gotoView, waitForStatus, E2E, sleep } from './lib/app.mjs';

const REPS = Number(process.env.BENCH_REPS ?? 15);
let app;
before(async () => {
  app = await startApp('live-config-bench');
});
after(async () => {
  if (app) await app.close();
});

function saveAtomic(file, obj) {
  const tmp = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(tmp, JSON.stringify(obj, null, 2));
  fs.renameSync(tmp, file);
}

const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];

test(`external save → row visible in the server list (${REPS} saves)`, async () => {
  const b = app.browser;
  await gotoView(b, 'servers');
  await waitForStatus(b, 'alpha', 'connected', { timeout: 30_000 });
  const file = path.join(app.fx.home, '.cursor', 'mcp.json');
  const base = JSON.parse(fs.readFileSync(file, 'utf8'));
  const appear = [];
  const steps = {};
  const vanish = [];
  for (let i = 0; i < REPS; i++) {
    const name = `bench${i}`;
    // Arm an observer that stamps when the row appears (then when it goes).
    await b.execute((n) => {
      window.__sbTrace = [];
      window.__bench = { n, shown: 0, gone: 0 };
      const sel = `[data-testid="server-row-${n}"]`;
      const obs = new MutationObserver(() => {
        const here = document.querySelector(sel) !== null;
        if (here && !window.__bench.shown) window.__bench.shown = Date.now();
        if (!here && window.__bench.shown && !window.__bench.gone) {
          window.__bench.gone = Date.now();
          obs.disconnect();
        }
      });
      obs.observe(document.body, { childList: true, subtree: true });
    }, name);
    const cfg = structuredClone(base);
    cfg.mcpServers[name] = { url: `http://127.0.0.1:9/${name}` };
    let t0 = Date.now();
    saveAtomic(file, cfg);
    await b.waitUntil(() => b.execute(() => window.__bench.shown), { timeout: 15_000, interval: 20 });
    appear.push((await b.execute(() => window.__bench.shown)) - t0);
    const marks = await b.execute(() => window.__sbTrace);
    for (const what of ['source-changed', 'discovery-changed', 'servers-applied']) {
      const m = marks.find((x) => x.what === what);
      if (m) (steps[what] ??= []).push(m.at - t0);
    }
    await sleep(200);
    t0 = Date.now();
    saveAtomic(file, base);
    await b.waitUntil(() => b.execute(() => window.__bench.gone), { timeout: 15_000, interval: 20 });
    vanish.push((await b.execute(() => window.__bench.gone)) - t0);
    await sleep(200);
  }
  const row = (what, xs) => `| ${what} | ${pct(xs, 50)} | ${pct(xs, 90)} | ${Math.min(...xs)} | ${Math.max(...xs)} |`;
  console.log(
    [
      '',
      `External atomic save of ~/.cursor/mcp.json → server list updated in the app (ms, ${REPS} saves, debounce included; goal < 150)`,
      '',
      '| change | median | p90 | min | max |',
      '|---|---|---|---|---|',
      ...Object.entries(steps).map(([what, xs]) => row(`server added → UI got \`${what}\``, xs)),
      row('server added → its row appears', appear),
      row('server removed → its row disappears', vanish),
      '',
    ].join('\n'),
  );
});
