// Helpers for the benchmarks (`*.bench.mjs`, run by `.ci/bench`): figures
// recorded as JSON lines for the one bench table, process trees and their
// memory and CPU from /proc, and homes with N fixture servers.
import fs from 'node:fs';
import path from 'node:path';

/** The median and 90th percentile of a list of numbers. */
export function stats(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const at = (p) => s[Math.min(s.length - 1, Math.round((s.length - 1) * p))];
  return { median: at(0.5), p90: at(0.9), n: s.length };
}

/**
 * One row of the bench table. `goal` is `{ max }` or `{ min }` in the
 * figure's unit, checked against the median (or the p90 with `on: 'p90'`),
 * or absent for figures that are reported, not judged. Appended to $BENCH_OUT (JSON lines) when set,
 * and printed either way.
 */
export function record({ group, figure, median, p90 = null, unit, goal = null, note = '' }) {
  const judged = goal?.on === 'p90' ? p90 : median;
  const pass = goal ? (goal.max !== undefined ? judged <= goal.max : judged >= goal.min) : null;
  const row = { group, figure, median, p90, unit, goal, pass, note };
  const shown = (v) => (v === null || v === undefined ? '' : round(v));
  const goalText = goal ? `${goal.on === 'p90' ? 'p90 ' : ''}${goal.max !== undefined ? `≤ ${goal.max}` : `≥ ${goal.min}`}` : '';
  console.log(
    `bench | ${group} | ${figure} | ${shown(median)} | ${shown(p90)} | ${unit} | ${goalText} | ${pass === null ? '' : pass ? 'ok' : 'MISSED'}`,
  );
  if (process.env.BENCH_OUT) fs.appendFileSync(process.env.BENCH_OUT, JSON.stringify(row) + '\n');
  return row;
}

export function round(v) {
  const a = Math.abs(v);
  return a >= 100 ? Math.round(v) : a >= 10 ? Math.round(v * 10) / 10 : Math.round(v * 100) / 100;
}

// ---- processes -------------------------------------------------------------

function readStat(pid) {
  try {
    const raw = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command may hold spaces and parentheses: split after the last ')'.
    const close = raw.lastIndexOf(')');
    const name = raw.slice(raw.indexOf('(') + 1, close);
    const f = raw.slice(close + 2).split(' ');
    // f[0] is field 3 (state): field N is f[N - 3].
    return { pid, name, state: f[0], ppid: Number(f[1]), utime: Number(f[11]), stime: Number(f[12]), start: Number(f[19]) };
  } catch {
    return null;
  }
}

/** `pid` and every live descendant, as /proc/<pid>/stat records. */
export function processTree(pid) {
  const all = [];
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    const s = readStat(Number(e));
    if (s && s.state !== 'Z') all.push(s);
  }
  const want = withDescendants(all, new Set([pid]));
  return all.filter((s) => want.has(s.pid));
}

/** `pids` grown by every process in `procs` whose parent is in it, transitively. */
function withDescendants(procs, pids) {
  let grew = true;
  while (grew) {
    grew = false;
    for (const p of procs) {
      if (!pids.has(p.pid) && pids.has(p.ppid)) {
        pids.add(p.pid);
        grew = true;
      }
    }
  }
  return pids;
}

/** A name for a process in the tables: its executable's file name. */
export function processName(p) {
  try {
    return path.basename(fs.readlinkSync(`/proc/${p.pid}/exe`));
  } catch {
    return p.name;
  }
}

/** Splits a tree into the app's own processes and the MCP servers it runs (and theirs). */
export function splitServers(tree, serverBinary = 'fixture-server') {
  const roots = new Set(tree.filter((p) => processName(p) === serverBinary).map((p) => p.pid));
  const isServer = withDescendants(tree, roots);
  return { own: tree.filter((p) => !isServer.has(p.pid)), servers: tree.filter((p) => isServer.has(p.pid)) };
}

/** RSS and PSS of one process in MiB (smaps_rollup), or null once it is gone. */
export function memoryOf(pid) {
  try {
    const text = fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const kb = (key) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0);
    return { rss: kb('Rss') / 1024, pss: kb('Pss') / 1024 };
  } catch {
    return null;
  }
}

/** Per executable name: processes, RSS and PSS (MiB), and the totals. */
export function memoryTable(procs) {
  const by = new Map();
  const total = { count: 0, rss: 0, pss: 0 };
  for (const p of procs) {
    const m = memoryOf(p.pid);
    if (!m) continue;
    const name = processName(p);
    const row = by.get(name) ?? { name, count: 0, rss: 0, pss: 0 };
    row.count += 1;
    row.rss += m.rss;
    row.pss += m.pss;
    by.set(name, row);
    total.count += 1;
    total.rss += m.rss;
    total.pss += m.pss;
  }
  return { rows: [...by.values()].sort((a, b) => b.pss - a.pss), total };
}

/** Each live thread of `pid`: its name and the CPU time (ns) it has had (/proc/<pid>/task/<tid>/schedstat). */
function threadNanos(pid) {
  const out = new Map();
  let tids = [];
  try {
    tids = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const ns = Number(fs.readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
      const name = fs.readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      out.set(`${pid}/${tid}`, { ns, name });
    } catch {
      // the thread just ended
    }
  }
  return out;
}

/**
 * Measures the CPU time of `procs()` (a function: the list may change) from
 * now until `stop()`, in nanoseconds: in all, per process and per thread
 * name ("process/thread"). Clock ticks (`/proc/<pid>/stat`) come in 10 ms steps,
 * which over an idle minute is the whole budget; the scheduler's per-thread
 * counters are exact. Threads are read every `everyMs`, so a thread that ends
 * in the window loses at most its last `everyMs` of CPU; a thread that starts
 * in it counts from zero.
 */
export function cpuMeter(procs, { everyMs = 500 } = {}) {
  const first = new Map(); // thread → ns when first seen (0 if it started in the window)
  const last = new Map();
  const names = new Map(); // thread → [process name, thread name]
  let initial = true;
  const look = () => {
    for (const p of procs()) {
      const threads = threadNanos(p.pid);
      if (!threads.size) continue;
      const proc = processName(p);
      for (const [t, { ns, name }] of threads) {
        if (!first.has(t)) first.set(t, initial ? ns : 0);
        last.set(t, ns);
        names.set(t, [proc, name]);
      }
    }
    initial = false;
  };
  look();
  const timer = setInterval(look, everyMs);
  return {
    stop() {
      clearInterval(timer);
      look();
      const perProcess = new Map();
      const perThread = new Map();
      let total = 0;
      const add = (m, k, v) => m.set(k, (m.get(k) ?? 0) + v);
      for (const [t, ns] of last) {
        const used = ns - first.get(t);
        const [proc, thread] = names.get(t);
        total += used;
        add(perProcess, proc, used);
        add(perThread, `${proc}/${thread}`, used);
      }
      return { total, perProcess, perThread };
    },
  };
}

/** Wall-clock ms at which process `pid` started (10 ms resolution). */
export function startedAtMs(pid) {
  const btime = Number(/^btime (\d+)/m.exec(fs.readFileSync('/proc/stat', 'utf8'))[1]);
  return btime * 1000 + readStat(pid).start * 10;
}

/**
 * Waits until `procs()` use less than `pct` % of one core in each of `quiet`
 * windows of `windowMs` in a row (what "settled" means before an idle or
 * memory reading), at most `maxMs`; the exact per-thread counters are read
 * (`cpuMeter`). One quiet window is not enough before an idle reading: work
 * that starts a moment after the last change (WebKitGTK's overlay scrollbar
 * waits about a second after the page's height changed, then fades out at 60
 * frames a second for ~3 s, ~250 ms of CPU painted in software) can straddle
 * a single window and land in the reading. Returns the last window's use.
 */
export async function settle(procs, { pct = 2, windowMs = 2_000, quiet = 1, maxMs = 60_000 } = {}) {
  const end = Date.now() + maxMs;
  let inARow = 0;
  for (;;) {
    const meter = cpuMeter(procs, { everyMs: windowMs });
    await new Promise((r) => setTimeout(r, windowMs));
    const used = (meter.stop().total / 1e7) / (windowMs / 1000); // ns → % of a core
    inARow = used < pct ? inARow + 1 : 0;
    if (inARow >= quiet || Date.now() > end) return used;
  }
}

// ---- homes -----------------------------------------------------------------

/**
 * A home with nothing but Switchboard's own file holding `count` fixture
 * servers (`b0`, `b1`, … each with `tools` tools in all), shaped like
 * makeFixtureHome's result so startApp can use it.
 */
export function benchHome(dir, fixtureServer, count, { tools = 12 } = {}) {
  const FIXED = 12; // the fixture server's own tools (echo, add, …)
  const home = path.join(dir, 'home');
  const system = path.join(dir, 'system');
  const sbDir = path.join(home, '.config/switchboard');
  fs.mkdirSync(sbDir, { recursive: true });
  fs.mkdirSync(system, { recursive: true });
  const mcpServers = {};
  for (let i = 0; i < count; i++) {
    const args = ['--name', `b${i}`];
    if (tools > FIXED) args.push('--tools', String(tools - FIXED));
    mcpServers[`b${i}`] = { command: fixtureServer, args };
  }
  const servers = path.join(sbDir, 'servers.json');
  fs.writeFileSync(servers, JSON.stringify({ mcpServers }, null, 2) + '\n');
  return { dir, home, system, servers, settings: path.join(sbDir, 'settings.json') };
}
