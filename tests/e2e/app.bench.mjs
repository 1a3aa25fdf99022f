// Benchmarks of the desktop app as a whole: the release build in its real
// webview under Xvfb, driven over WebDriver like the E2E tests. Not part of
// the test run; `.ci/bench` builds what it needs and runs it as
//   E2E_APP=<release app> E2E_FIXTURE=<release fixture-server> E2E_BARE_WINDOW=<bare_window example> \
//     tests/e2e/run.sh --no-build tests/e2e/app.bench.mjs
// and collects the figures it records ($BENCH_OUT) into the one bench table.
//
// 1. The floor: a bare Tauri window (src-tauri/examples/bare_window.rs, same
//    tauri/wry/WebKitGTK, empty page): its processes' memory and idle CPU;
//    and its memory with the app's webview settings (--app-webview).
// 2. Memory of the app's own processes (the MCP servers it runs are counted
//    apart) with 0, 20 and 200 servers, and above the floor.
// 3. Idle: the app's processes' CPU over BENCH_IDLE_S (60) seconds with 20
//    connected servers and nothing happening.
// 4. Cold start: process start → the Servers view lists every one of 20
//    servers with its status (the page's own User Timing mark).
// 5. Scale: 200 servers with 50 tools each (10,000 tools): frame times of a
//    scripted scroll of the Servers and Tools views, and the time from a
//    keystroke in their search boxes to the list updated and laid out.
import { test, after } from 'node:test';
import { startApp, gotoView, sleep } from './lib/app.mjs';
import { benchHome, cpuMeter, memoryTable, processTree, record, round, settle, splitServers, startedAtMs, stats } from './lib/bench.mjs';

const IDLE_S = Number(process.env.BENCH_IDLE_S ?? 60);
const COLD_RUNS = Number(process.env.BENCH_COLD_RUNS ?? 5);
const SCROLL_FRAMES = Number(process.env.BENCH_SCROLL_FRAMES ?? 300);
const FRAME_60 = 1000 / 60;

let open = null;
after(async () => {
  if (open) await open.close().catch(() => {});
});

async function launch(label, opts) {
  open = await startApp(label, { startTimeoutMs: 120_000, uiTimeoutMs: 60_000, ...opts });
  return open;
}
async function closeOpen() {
  const app = open;
  open = null;
  await app.close();
}

/** The app's own processes and its servers' right now. */
function parts(app) {
  return splitServers(processTree(app.pid));
}

const mib = (x) => `${round(x)} MiB`;

/**
 * CPU of `procs()` over IDLE_S seconds of nothing happening, as % of one
 * core, and what each process used (from the scheduler's exact per-thread
 * counters, see `cpuMeter`). The reading starts once they have stayed under
 * 1 % for three 2-second windows in a row, so the tail of what happened
 * before (the last render, a scrollbar fading out) is not counted as idle.
 */
async function idleCpu(procs) {
  await settle(procs, { pct: 1, quiet: 3 });
  const meter = cpuMeter(procs);
  await sleep(IDLE_S * 1000);
  const { total, perProcess, perThread } = meter.stop();
  const top = (m, n) =>
    [...m]
      .filter(([, ns]) => ns >= 5e5)
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([name, ns]) => `${name} ${round(ns / 1e6)} ms`)
      .join(', ');
  const used = `CPU time used: ${top(perProcess, 9) || 'none'}; busiest threads: ${top(perThread, 5) || 'none'}`;
  console.log(`idle: ${top(perThread, 30)}`);
  return { pct: percentOfCore(total / 1e9, IDLE_S), used };
}

/**
 * CPU seconds over a wall time, as % of one core, rounded to a millionth (so
 * floating point does not judge an exact 0.1 over a 0.1 goal).
 */
const percentOfCore = (cpu, seconds) => Math.round(((cpu * 100) / seconds) * 1e6) / 1e6;
function describe(table) {
  return table.rows.map((r) => `${r.name}${r.count > 1 ? ` ×${r.count}` : ''} ${mib(r.pss)}`).join(', ');
}

/**
 * Counts connected servers (the Servers view must be open): the view's own
 * count with its status filter on Connected. (A long list is windowed: most
 * rows are not in the page to be counted.)
 */
async function connectedCount(b) {
  return b.execute(async () => {
    const filter = document.querySelector('select[aria-label="Filter by status"]');
    const set = async (v) => {
      filter.value = v;
      filter.dispatchEvent(new Event('change', { bubbles: true }));
      await new Promise((r) => setTimeout(r, 0));
    };
    await set('connected');
    const n = Number(document.querySelector('.toolbar .count').textContent.split(' of ')[0]);
    await set('all');
    return n;
  });
}
async function waitConnected(b, count, timeout) {
  await gotoView(b, 'servers');
  await b.waitUntil(async () => (await connectedCount(b)) >= count, {
    timeout,
    interval: 250,
    timeoutMsg: `not all ${count} servers connected within ${timeout} ms`,
  });
}

let floor = null;
let floorTuned = null;

test('the floor: a bare Tauri window', async () => {
  const bare = process.env.E2E_BARE_WINDOW;
  if (!bare) throw new Error('E2E_BARE_WINDOW is not set: run this through .ci/bench');
  const app = await launch('bare', {
    binary: bare,
    makeHome: (dir, fx) => benchHome(dir, fx, 0),
  });
  const procs = () => processTree(app.pid);
  await settle(procs);
  const mem = memoryTable(procs());
  const idle = await idleCpu(procs);
  floor = mem.total.pss;
  console.log(`floor: ${describe(mem)}; RSS ${mib(mem.total.rss)}`);
  record({ group: 'App', figure: 'Bare Tauri window (floor): memory, all processes (PSS)', median: mem.total.pss, unit: 'MiB', note: describe(mem) });
  record({ group: 'App', figure: 'Bare Tauri window (floor): CPU while idle', median: idle.pct, unit: '% of a core', note: `${IDLE_S} s; ${idle.used}` });
  await closeOpen();

  // The same window with the app's webview settings (src-tauri/src/webview.rs):
  // what those settings save by themselves, apart from the app's own cost.
  const tuned = await launch('bare-tuned', { binary: bare, appArgs: ['--app-webview'], makeHome: (dir, fx) => benchHome(dir, fx, 0) });
  const tunedProcs = () => processTree(tuned.pid);
  await settle(tunedProcs);
  const tunedMem = memoryTable(tunedProcs());
  floorTuned = tunedMem.total.pss;
  const tunedIdle = await idleCpu(tunedProcs);
  record({ group: 'App', figure: "Bare Tauri window with the app's webview settings: memory (PSS)", median: floorTuned, unit: 'MiB', note: describe(tunedMem) });
  record({ group: 'App', figure: "Bare Tauri window with the app's webview settings: CPU while idle", median: tunedIdle.pct, unit: '% of a core', note: `${IDLE_S} s; ${tunedIdle.used}` });
  await closeOpen();
});

/** Memory of the app's own processes after it settled, recorded against the floor. */
function recordMemory(app, servers, goalAbove) {
  const { own, servers: srv } = parts(app);
  const mem = memoryTable(own);
  const srvMem = memoryTable(srv);
  console.log(`app with ${servers} servers: ${describe(mem)}; RSS ${mib(mem.total.rss)}; the servers: ${mib(srvMem.total.pss)} PSS`);
  record({
    group: 'App',
    figure: `Memory with ${servers} servers, the app's processes (PSS)`,
    median: mem.total.pss,
    unit: 'MiB',
    note: `${describe(mem)}; the ${servers} servers themselves: ${mib(srvMem.total.pss)}`,
  });
  if (floor !== null) {
    record({
      group: 'App',
      figure: `Memory above the bare window with ${servers} servers`,
      median: mem.total.pss - floor,
      unit: 'MiB',
      goal: goalAbove === undefined ? null : { max: goalAbove },
    });
  }
  if (floorTuned !== null) {
    record({
      group: 'App',
      figure: `Memory above the bare window with the app's webview settings, ${servers} servers`,
      median: mem.total.pss - floorTuned,
      unit: 'MiB',
      note: "Switchboard's own cost, the webview settings' saving left out",
    });
  }
}

test('memory with no servers', async () => {
  const app = await launch('empty', { makeHome: (dir, fx) => benchHome(dir, fx, 0) });
  await app.browser.waitUntil(() => app.browser.execute(() => document.body.innerText.length > 0));
  await settle(() => parts(app).own);
  recordMemory(app, 0);
  await closeOpen();
});

test('cold start, memory and idle with 20 servers', async () => {
  // One home for every launch: the first one fills the tool cache that the
  // later ones list tools from before their servers connect.
  let home = null;
  const makeHome = (dir, fx) => (home ??= benchHome(dir, fx, 20));
  const shown = [];
  const inPage = []; // of which: from the page's navigation start
  for (let run = 0; run <= COLD_RUNS; run++) {
    const app = await launch(`cold-${run}`, { makeHome });
    const b = app.browser;
    const mark = await b.waitUntil(
      () =>
        b.execute(() => {
          const m = performance.getEntriesByName('switchboard:servers-shown')[0];
          return m ? { at: performance.timeOrigin + m.startTime, page: m.startTime, servers: m.detail?.servers } : false;
        }),
      { timeout: 30_000, interval: 50, timeoutMsg: 'the Servers view never listed the servers' },
    );
    if (mark.servers !== 20) throw new Error(`the first list had ${mark.servers} servers, not 20`);
    if (run > 0) {
      // run 0 warms the disk and the tool cache
      shown.push(mark.at - startedAtMs(app.pid));
      inPage.push(mark.page);
    }
    if (run < COLD_RUNS) await closeOpen();
  }
  const s = stats(shown);
  record({ group: 'App', figure: 'Cold start → Servers view lists all 20 servers with status', ...s, unit: 'ms', goal: { max: 1000 }, note: `${s.n} launches of the release app; of which the page's own part (navigation start → list shown): ${round(stats(inPage).median)} ms` });

  const app = open;
  await waitConnected(app.browser, 20, 60_000);
  await settle(() => parts(app).own);
  recordMemory(app, 20, 40);

  const srv = cpuMeter(() => parts(app).servers);
  const idle = await idleCpu(() => parts(app).own);
  const srvIdle = percentOfCore(srv.stop().total / 1e9, IDLE_S);
  record({
    group: 'App',
    figure: `CPU while idle with 20 servers, the app's processes (${IDLE_S} s)`,
    median: idle.pct,
    unit: '% of a core',
    goal: { max: 0.1 },
    note: `${idle.used}; the 20 servers: ${round(srvIdle)} %`,
  });
  await closeOpen();
});

/** Frame times (ms) of a scroll by `step` px per frame, back and forth, in the page. */
async function scrollFrames(b, scroller, frames) {
  return b.execute(
    async (sel, n) => {
      const start = document.querySelector(sel);
      if (!start) throw new Error(`nothing matches ${sel}`);
      let el = start;
      while (el && !(el.scrollHeight > el.clientHeight + 1 && /auto|scroll/.test(getComputedStyle(el).overflowY))) {
        el = el.parentElement;
      }
      if (!el) throw new Error(`no scrolling element holds ${sel}`);
      const deltas = [];
      let last = null;
      let dir = 1;
      await new Promise((resolve) => {
        let i = 0;
        const step = (t) => {
          if (last !== null) deltas.push(t - last);
          last = t;
          if (i++ >= n) return resolve();
          const max = el.scrollHeight - el.clientHeight;
          let next = el.scrollTop + dir * 80;
          if (next >= max || next <= 0) {
            dir = -dir;
            next = Math.max(0, Math.min(max, next));
          }
          el.scrollTop = next;
          requestAnimationFrame(step);
        };
        requestAnimationFrame(step);
      });
      return { deltas, height: el.scrollHeight };
    },
    scroller,
    frames,
  );
}

/** ms from each keystroke (typing `text`, then deleting it) to the list updated and laid out. */
async function keystrokes(b, input, text, rounds = 3) {
  return b.execute(
    async (sel, t, r) => {
      const el = document.querySelector(sel);
      if (!el) throw new Error(`nothing matches ${sel}`);
      const times = [];
      const type = async (value) => {
        const t0 = performance.now();
        el.value = value;
        el.dispatchEvent(new Event('input', { bubbles: true }));
        await new Promise((res) => setTimeout(res, 0)); // the view's update runs first
        document.body.getBoundingClientRect(); // style and layout of what changed
        times.push(performance.now() - t0);
      };
      for (let k = 0; k < r; k++) {
        for (let i = 1; i <= t.length; i++) await type(t.slice(0, i));
        for (let i = t.length - 1; i >= 0; i--) await type(t.slice(0, i));
      }
      return times;
    },
    input,
    text,
    rounds,
  );
}

test('scale: 200 servers and 10,000 tools', async () => {
  const app = await launch('scale', { makeHome: (dir, fx) => benchHome(dir, fx, 200, { tools: 50 }) });
  const b = app.browser;
  await waitConnected(b, 200, 300_000);
  await settle(() => parts(app).own, { maxMs: 120_000 });
  recordMemory(app, 200, 120);

  const frames = (what, r) => {
    const s = stats(r.deltas);
    record({ group: 'App', figure: `${what}: frame time while scrolling`, ...s, unit: 'ms', goal: { max: round(FRAME_60 + 0.5), on: 'p90' }, note: `${s.n} frames over ${r.height} px` });
  };
  const typing = (what, times) => {
    const s = stats(times);
    record({ group: 'App', figure: `${what}: keystroke → list filtered and laid out`, ...s, unit: 'ms', goal: { max: 16 }, note: `${s.n} keystrokes` });
  };

  await gotoView(b, 'servers');
  frames('Servers view, 200 servers', await scrollFrames(b, '[data-testid^="server-row-"]', SCROLL_FRAMES));
  typing('Servers view search, 200 servers', await keystrokes(b, 'input[type="search"]', 'b19'));

  await gotoView(b, 'tools');
  await b.waitUntil(
    () => b.execute(() => document.querySelector('[role="list"][aria-label="Tools"] [role="listitem"]') !== null),
    { timeout: 30_000, timeoutMsg: 'the Tools view listed no tools' },
  );
  const count = await b.execute(() => document.querySelector('[role="listitem"]')?.getAttribute('aria-setsize'));
  if (Number(count) < 10_000) throw new Error(`the Tools view lists ${count} tools, not 10,000`);
  frames('Tools view, 10,000 tools', await scrollFrames(b, '[role="list"][aria-label="Tools"] [role="listitem"]', SCROLL_FRAMES));
  typing('Tools view search, 10,000 tools', await keystrokes(b, '[data-testid="tool-search"]', 'tool_37'));
  await closeOpen();
});
