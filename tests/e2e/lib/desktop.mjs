// The stand-in desktop (lib/desktop.py) from a test: a tray host on D-Bus and
// a window manager's close button. One request at a time, one JSON line each.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const python = path.resolve(here, '../../python/.venv/bin/python');

/** Whether the Python it needs is there (tests/python/setup.sh makes it). */
export const desktopAvailable = () => fs.existsSync(python);

export class Desktop {
  static async start() {
    const d = new Desktop();
    await d.waitFor((m) => m.event === 'ready', 'the stand-in desktop to own the tray watcher', 15_000);
    return d;
  }

  constructor() {
    this.child = spawn(python, [path.join(here, 'desktop.py')], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.messages = [];
    this.waiters = [];
    this.stderr = '';
    this.nextId = 1;
    let buf = '';
    this.child.stdout.on('data', (d) => {
      buf += d;
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const msg = JSON.parse(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
        this.messages.push(msg);
        for (const w of [...this.waiters]) w(msg);
      }
    });
    this.child.stderr.on('data', (d) => { if (this.stderr.length < 8000) this.stderr += d; });
  }

  /** The first message (already seen or still to come) that `match` accepts. */
  waitFor(match, what, timeout = 20_000) {
    const seen = this.messages.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(new Error(`waited ${timeout} ms for ${what}; the desktop said:\n${this.messages.map((m) => JSON.stringify(m)).join('\n')}\n${this.stderr}`));
      }, timeout);
      const waiter = (msg) => {
        if (!match(msg)) return;
        clearTimeout(timer);
        this.waiters = this.waiters.filter((w) => w !== waiter);
        resolve(msg);
      };
      this.waiters.push(waiter);
    });
  }

  async request(cmd, args = {}) {
    const id = this.nextId++;
    const answer = this.waitFor((m) => m.id === id, `the answer to ${cmd}`, 15_000);
    this.child.stdin.write(JSON.stringify({ id, cmd, ...args }) + '\n');
    const m = await answer;
    if (m.error) throw new Error(`desktop ${cmd}: ${m.error}`);
    return m;
  }

  async stop() {
    this.child.stdin.end();
    this.child.kill();
  }
}
