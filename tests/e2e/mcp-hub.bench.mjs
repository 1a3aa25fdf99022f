// The peer comparison: 20 stdio fixture servers, process start → every
// server connected with its tools, Switchboard's CLI (`switchboard tools
// --json --wait`, which exits once they are) against mcp-hub 4.2.1 (polled
// on its /api/health until it reports every server connected with tools).
// Both in the same run, alternating, so the ratio holds on a noisy machine.
// Peak memory from /usr/bin/time (Switchboard) and VmHWM (mcp-hub).
//
// Run by `.ci/bench` with BENCH_SWITCHBOARD (release `switchboard`) and
// E2E_FIXTURE (release fixture-server); installs mcp-hub@4.2.1 from npm
// into ~/.cache/switchboard/mcp-hub once.
import { test } from 'node:test';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { record, stats } from './lib/bench.mjs';
import { freePort } from './lib/app.mjs';

const SERVERS = 20;
const RUNS = Number(process.env.BENCH_HUB_RUNS ?? 7);
const HUB_VERSION = '4.2.1';

function need(name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run this through .ci/bench`);
  return v;
}

function installHub() {
  const dir = path.join(os.homedir(), '.cache/switchboard/mcp-hub');
  const cli = path.join(dir, 'node_modules/mcp-hub/dist/cli.js');
  const pkg = path.join(dir, 'node_modules/mcp-hub/package.json');
  const have = fs.existsSync(pkg) && JSON.parse(fs.readFileSync(pkg, 'utf8')).version === HUB_VERSION;
  if (!have) {
    fs.mkdirSync(dir, { recursive: true });
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--prefix', dir, `mcp-hub@${HUB_VERSION}`], {
      stdio: 'inherit',
      timeout: 300_000,
    });
  }
  return cli;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

test(`${SERVERS} servers to tools: Switchboard vs mcp-hub ${HUB_VERSION}`, async () => {
  const sb = need('BENCH_SWITCHBOARD');
  const fixture = need('E2E_FIXTURE');
  const hub = installHub();
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'switchboard-hub-bench-'));
  const home = path.join(scratch, 'home');
  const mcpServers = {};
  for (let i = 0; i < SERVERS; i++) mcpServers[`s${i}`] = { command: fixture, args: ['--name', `s${i}`] };
  fs.mkdirSync(path.join(home, '.config/switchboard'), { recursive: true });
  fs.writeFileSync(path.join(home, '.config/switchboard/servers.json'), JSON.stringify({ mcpServers }, null, 2));
  const hubConfig = path.join(scratch, 'mcp-hub.json');
  fs.writeFileSync(hubConfig, JSON.stringify({ mcpServers }, null, 2));
  // Both see the same empty machine: no other client's config, no login shell.
  const env = { PATH: process.env.PATH, HOME: home, SWITCHBOARD_SYSTEM_ROOT: path.join(scratch, 'system') };

  const sbTimes = [];
  const sbPeak = [];
  const hubTimes = [];
  const hubPeak = [];
  const runSwitchboard = () => {
    const t0 = performance.now();
    const out = execFileSync(sb, ['tools', '--json', '--wait'], {
      env,
      timeout: 60_000,
      stdio: ['ignore', 'pipe', 'pipe'],
      encoding: 'utf8',
    });
    sbTimes.push(performance.now() - t0);
    const tools = JSON.parse(out);
    const count = Array.isArray(tools) ? tools.length : (tools.tools?.length ?? 0);
    if (count < SERVERS * 12) throw new Error(`switchboard listed ${count} tools`);
  };
  const runHub = async () => {
    const port = await freePort();
    const t0 = performance.now();
    const child = spawn(process.execPath, [hub, '--port', String(port), '--config', hubConfig], {
      env: { ...env, XDG_STATE_HOME: path.join(scratch, 'state'), XDG_CONFIG_HOME: path.join(scratch, 'config') },
      stdio: 'ignore',
    });
    try {
      for (;;) {
        if (performance.now() - t0 > 60_000) throw new Error('mcp-hub did not connect every server within 60 s');
        let body = null;
        try {
          const r = await fetch(`http://127.0.0.1:${port}/api/health`);
          body = await r.json();
        } catch {
          // not listening yet
        }
        const servers = body?.servers ?? [];
        const ready =
          servers.length === SERVERS &&
          servers.every((s) => s.status === 'connected' && (s.capabilities?.tools?.length ?? 0) > 0);
        if (ready) break;
        await sleep(5);
      }
      hubTimes.push(performance.now() - t0);
      const status = fs.readFileSync(`/proc/${child.pid}/status`, 'utf8');
      hubPeak.push(Number(/^VmHWM:\s+(\d+)/m.exec(status)[1]) / 1024);
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  };
  for (let i = 0; i < RUNS; i++) {
    runSwitchboard();
    await runHub();
    sbPeak.push(peakMiB(sb, env));
  }
  const s = stats(sbTimes);
  const h = stats(hubTimes);
  record({ group: 'Peer', figure: `${SERVERS} servers to tools: \`switchboard tools --json --wait\``, ...s, unit: 'ms' });
  record({ group: 'Peer', figure: `${SERVERS} servers to tools: mcp-hub ${HUB_VERSION}`, ...h, unit: 'ms' });
  record({ group: 'Peer', figure: `${SERVERS} servers to tools: Switchboard / mcp-hub`, median: s.median / h.median, p90: s.p90 / h.p90, unit: '×', goal: { max: 1 } });
  record({ group: 'Peer', figure: 'Peak memory: Switchboard / mcp-hub', median: stats(sbPeak).median / stats(hubPeak).median, unit: '×', goal: { max: 1 }, note: `${Math.round(stats(sbPeak).median)} MiB vs ${Math.round(stats(hubPeak).median)} MiB` });
  fs.rmSync(scratch, { recursive: true, force: true });
});

/** Peak RSS (MiB) of one `switchboard tools --json --wait`, from /usr/bin/time. */
function peakMiB(sb, env) {
  const r = spawnSync('/usr/bin/time', ['-f', 'peak-kb %M', sb, 'tools', '--json', '--wait'], {
    env,
    timeout: 60_000,
    stdio: ['ignore', 'ignore', 'pipe'],
    encoding: 'utf8',
  });
  const kb = /peak-kb (\d+)/.exec(r.stderr ?? '');
  if (r.status !== 0 || !kb) throw new Error(`switchboard tools under /usr/bin/time failed: ${r.stderr ?? r.error}`);
  return Number(kb[1]) / 1024;
}
