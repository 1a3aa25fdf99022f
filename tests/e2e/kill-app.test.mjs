// A crash of the app leaves no MCP server running: the real app with ten
// stdio servers up is killed with SIGKILL, and within 5 s every process it
// started for them is dead (a zombie waiting for PID 1 to reap it counts as
// dead) — including leaders that ignore stdin EOF and SIGTERM and `sleep`
// grandchildren in a server's process group, which no parent-death signal
// reaches (the engine's watchdog does: src-tauri/engine/src/manager/orphans.rs).
// The CLI has the same test: src-tauri/engine/tests/no_orphans_after_kill.rs.
//
// The servers are found by what they carry, not by name: every process the
// app starts for a server has SWITCHBOARD_OWNER=<app pid>-<app start time>
// in its environment, and so does everything those processes start.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startApp, gotoView, waitForStatus, timeBox, processesMatching, sleep, E2E } from './lib/app.mjs';

const fixture = () => path.join(E2E.binDir, 'fixture-server');

/** The same ten servers as the engine test (`servers()` there). */
function servers(fx) {
  const s = {};
  for (let i = 0; i < 5; i++) s[`plain${i}`] = { type: 'stdio', command: fx, args: ['--name', `plain${i}`] };
  // Outlives end of input on stdin and ignores SIGTERM (the leader itself;
  // stderr on /dev/null, or its "staying alive" line would die of EPIPE
  // once the app, the reader, is gone).
  const stubborn = 'exec "$0" "$@" 2>/dev/null';
  s.stubborn = { type: 'stdio', command: 'sh', args: ['-c', stubborn, fx, '--name', 'stubborn', '--ignore-sigterm', '--ignore-stdin-eof'] };
  // The same, with a `sleep` grandchild in its group.
  s['stubborn-forks'] = {
    type: 'stdio',
    command: 'sh',
    args: ['-c', stubborn, fx, '--name', 'stubborn-forks', '--ignore-sigterm', '--ignore-stdin-eof', '--spawn-grandchild'],
  };
  s.forks = { type: 'stdio', command: fx, args: ['--name', 'forks', '--spawn-grandchild'] };
  // A shell that starts a sleep beside the server, then becomes the server.
  s['sh-forks'] = { type: 'stdio', command: 'sh', args: ['-c', 'sleep 1000 >/dev/null 2>&1 & exec "$0" --name sh-forks', fx] };
  // The server itself a grandchild (npx style), its shell waiting on a sleep.
  s.wrapped = { type: 'stdio', command: 'sh', args: ['-c', 'exec 3<&0; "$0" --name wrapped <&3 3<&- & exec 3<&-; sleep 1000; wait', fx] };
  return s;
}
const NAMES = Object.keys(servers('x'));
/** One `sleep` each: stubborn-forks, forks, sh-forks, wrapped. */
const SLEEPS = 4;

/** `{state, ppid, start}` of a process from /proc/PID/stat, or null when there is none. */
function stat(pid) {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(') ') + 2).split(' ');
    return { state: f[0], ppid: Number(f[1]), start: f[19] };
  } catch {
    return null;
  }
}

const read = (file) => {
  try {
    return fs.readFileSync(file);
  } catch {
    return Buffer.alloc(0);
  }
};
const cmdOf = (pid) => read(`/proc/${pid}/cmdline`).toString().replaceAll('\0', ' ').trim();
const commOf = (pid) => read(`/proc/${pid}/comm`).toString().trim();
const pids = () => fs.readdirSync('/proc').filter((e) => /^\d+$/.test(e)).map(Number);

/** Every process carrying `SWITCHBOARD_OWNER=<owner>`, with its start time (a reused pid is not it). */
function owned(owner) {
  const marker = Buffer.from(`SWITCHBOARD_OWNER=${owner}`);
  const out = [];
  for (const pid of pids()) {
    const vars = read(`/proc/${pid}/environ`);
    let at = 0;
    let found = false;
    for (let i = 0; i <= vars.length; i++) {
      if (i === vars.length || vars[i] === 0) {
        if (vars.subarray(at, i).equals(marker)) found = true;
        at = i + 1;
      }
    }
    const s = found && stat(pid);
    if (s) out.push({ pid, start: s.start, comm: commOf(pid), cmd: cmdOf(pid) });
  }
  return out;
}

/** The app's watchdog (`sh -c … switchboard-watchdog`, its child; no owner marker). */
function watchdogOf(appPid) {
  return pids()
    .filter((p) => stat(p)?.ppid === appPid && cmdOf(p).endsWith(' switchboard-watchdog'))
    .map((pid) => ({ pid, start: stat(pid)?.start, comm: commOf(pid), cmd: cmdOf(pid) }))
    .filter((p) => p.start !== undefined);
}

/**
 * `present`: the process still has a /proc entry (a zombie has one until
 * whatever adopted it reaps it). `running`: present and not dead — what the
 * promise is about; the servers are dead within tens of ms of the kill.
 */
const present = (p) => stat(p.pid)?.start === p.start;
const running = (p) => {
  const s = stat(p.pid);
  return s?.start === p.start && !/[ZXx]/.test(s.state);
};

let app;
let tracked = []; // what must be gone; killed by after() if a failure left any
let killedApp = null; // {pid, start} once the test sent SIGKILL

before(async () => {
  app = await startApp('kill-app', {
    prepare: (fx) => {
      // Only these ten in Switchboard's own file (alpha, beta, browsermcp replaced).
      fs.writeFileSync(fx.servers, JSON.stringify({ mcpServers: servers(fixture()) }, null, 2) + '\n');
    },
  });
});

after(async () => {
  if (!app) return;
  if (!killedApp) {
    await app.close();
    return;
  }
  for (const p of tracked) {
    if (present(p)) {
      try {
        process.kill(p.pid, 'SIGKILL');
      } catch {}
    }
  }
  // The session has no browser behind it any more. WebKitWebDriver ends it
  // at once; a driver that dropped it when the browser died says "invalid session id".
  try {
    await timeBox(app.browser.deleteSession(), 20_000, 'deleteSession after the app was killed');
  } catch (e) {
    if (!/invalid session id/i.test(e.message)) throw e;
  }
  // Free for the next file's session, and the app reaped by the driver.
  const status = await timeBox(fetch(`http://127.0.0.1:${E2E.port}/status`).then((r) => r.json()), 10_000, 'driver /status');
  assert.equal(status.value?.ready, true, `WebKitWebDriver is ready for a new session: ${JSON.stringify(status)}`);
  const end = Date.now() + 10_000;
  while (present(killedApp) && Date.now() < end) await sleep(50);
  assert.ok(!present(killedApp), `the killed app (pid ${killedApp.pid}) was reaped: state ${stat(killedApp.pid)?.state}`);
  assert.deepEqual(processesMatching(E2E.binDir + '/'), [], 'nothing started from the run dir is left');
});

test('kill -9 of the app leaves none of its server processes running after 5 s', async (t) => {
  const b = app.browser;
  await gotoView(b, 'servers');
  const until = Date.now() + 60_000;
  for (const name of NAMES) await waitForStatus(b, name, 'connected', { timeout: Math.max(until - Date.now(), 1) });

  const appPid = app.pid;
  const appStat = stat(appPid);
  assert.ok(appStat, `the app (pid ${appPid}) runs`);
  assert.ok(fs.readlinkSync(`/proc/${appPid}/exe`).endsWith('/switchboard-app'), 'the pid file names switchboard-app');
  const owner = `${appPid}-${appStat.start}`;

  // Every server's processes, the sleeps included (started with the servers, maybe a moment later).
  const nameOf = (cmd) => {
    const words = cmd.split(' ');
    return words[words.indexOf('--name') + 1];
  };
  const servedBy = (procs, name) => procs.some((p) => p.comm === 'fixture-server' && nameOf(p.cmd) === name);
  let procs = [];
  while (Date.now() < until) {
    procs = owned(owner);
    if (NAMES.every((n) => servedBy(procs, n)) && procs.filter((p) => p.comm === 'sleep').length >= SLEEPS) break;
    await sleep(50);
  }
  const short = (p) => `${p.pid} ${p.comm}${p.comm === 'fixture-server' ? ` ${nameOf(p.cmd)}` : ''}`;
  const listing = (list) => list.map((p) => `  ${p.pid} ${p.comm}: ${p.cmd}`).join('\n');
  for (const n of NAMES) assert.ok(servedBy(procs, n), `a fixture-server for ${n} carries SWITCHBOARD_OWNER=${owner}:\n${listing(procs)}`);
  assert.ok(procs.filter((p) => p.comm === 'sleep').length >= SLEEPS, `the ${SLEEPS} sleeps beside the servers run:\n${listing(procs)}`);
  // The switches the app sets for its own window (src-tauri/src/webview.rs)
  // are not handed to the servers it starts.
  const APP_ONLY = ['WEBKIT_DISABLE_COMPOSITING_MODE', 'WEBKIT_DISABLE_MEMORY_PRESSURE_MONITOR', 'GDK_GL'];
  for (const p of procs.filter((x) => x.comm === 'fixture-server')) {
    const names = read(`/proc/${p.pid}/environ`).toString().split('\0').map((kv) => kv.split('=')[0]);
    assert.deepEqual(APP_ONLY.filter((v) => names.includes(v)), [], `${short(p)} inherited none of the app's own webview switches`);
  }
  // The watchdog must not outlive the app either (not required to exist: the promise is about the servers).
  const watchdog = watchdogOf(appPid);
  tracked = [...procs, ...watchdog];
  t.diagnostic(`SWITCHBOARD_OWNER=${owner}: ${procs.map(short).join(', ')}; watchdog ${watchdog.map((p) => p.pid).join(', ') || 'none'}`);

  process.kill(appPid, 'SIGKILL');
  killedApp = { pid: appPid, start: appStat.start };
  const t0 = performance.now();
  const deadline = t0 + 5_000;
  let stoppedAt = null; // all dead (zombies allowed), for the record
  for (;;) {
    const now = performance.now();
    if (stoppedAt === null && !tracked.some(running)) stoppedAt = now;
    // The promise is that nothing keeps running; reaping a dead orphan is
    // the system's job (PID 1 here reaps only every ~1.6 s), so a zombie
    // counts as gone — as in the engine's own kill -9 test.
    const left = tracked.filter(running);
    if (left.length === 0) break;
    if (now > deadline) {
      const why = left.map((p) => {
        const s = stat(p.pid);
        return `  ${p.pid} ${p.comm} state ${s?.state} parent ${s?.ppid}: ${p.cmd}`;
      });
      assert.fail(`5 s after kill -9 of the app (pid ${appPid}) these are still running:\n${why.join('\n')}`);
    }
    await sleep(10);
  }
  t.diagnostic(
    `after kill -9 of the app: all ${tracked.length} processes (${procs.length} marked + ${watchdog.length} watchdog) ` +
      `dead after ${Math.round(stoppedAt - t0)} ms`,
  );
});
