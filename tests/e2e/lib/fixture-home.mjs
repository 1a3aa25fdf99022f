// Builds a throw-away fixture machine for one app session:
//   <dir>/home    copy of tests/fixtures/home, `__HOME__` in .claude.json
//                 replaced by the copy's path, and Switchboard's own
//                 servers.json replaced by live fixture MCP servers
//   <dir>/system  copy of tests/fixtures/system (SWITCHBOARD_SYSTEM_ROOT)
//
// Usable as a module (makeFixtureHome) and from the shell:
//   node tests/e2e/lib/fixture-home.mjs <dir> <fixture-server path>
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const REPO = path.resolve(HERE, '../../..');
const FIXTURES = path.join(REPO, 'tests/fixtures');

/** Servers the E2E tests rely on (Switchboard's own file, highest priority). */
export function e2eServers(fixtureServer) {
  return {
    mcpServers: {
      // Live, with tools (echo, crash, ...). A slow first restart so the
      // "restarting" state stays on screen long enough to be seen.
      alpha: {
        type: 'stdio',
        command: fixtureServer,
        args: ['--name', 'alpha'],
        restartPolicy: { initialDelayMs: 3000, maxDelayMs: 5000, backoffMultiplier: 1, maxRestartAttempts: 5 },
      },
      // Live, with resources and prompts.
      beta: { type: 'stdio', command: fixtureServer, args: ['--name', 'beta', '--resources'] },
      // Shadows cursor-user's `browsermcp` (an npx server that cannot start here).
      browsermcp: { type: 'stdio', command: fixtureServer, args: ['--name', 'browsermcp'] },
    },
  };
}

/**
 * Creates `<dir>/home` and `<dir>/system`; returns their paths and the path of
 * Switchboard's servers and settings files inside the home.
 */
export function makeFixtureHome(dir, fixtureServer, { trustProject = false } = {}) {
  if (!fixtureServer) throw new Error('makeFixtureHome: fixture-server path missing');
  const home = path.join(dir, 'home');
  const system = path.join(dir, 'system');
  fs.mkdirSync(dir, { recursive: true });
  fs.cpSync(path.join(FIXTURES, 'home'), home, { recursive: true });
  fs.cpSync(path.join(FIXTURES, 'system'), system, { recursive: true });

  const claude = path.join(home, '.claude.json');
  fs.writeFileSync(claude, fs.readFileSync(claude, 'utf8').replaceAll('__HOME__', home));

  const sbDir = path.join(home, '.config/switchboard');
  const servers = path.join(sbDir, 'servers.json');
  fs.writeFileSync(servers, JSON.stringify(e2eServers(fixtureServer), null, 2) + '\n');

  const settings = path.join(sbDir, 'settings.json');
  if (trustProject) {
    const project = { path: path.join(home, 'projects/webapp'), trusted: true };
    fs.writeFileSync(settings, JSON.stringify({ projects: [project] }, null, 2) + '\n');
  }
  return { dir, home, system, servers, settings };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [dir, fixtureServer] = process.argv.slice(2);
  if (!dir || !fixtureServer) {
    console.error('usage: fixture-home.mjs <dir> <fixture-server path>');
    process.exit(2);
  }
  const made = makeFixtureHome(path.resolve(dir), fixtureServer);
  console.log(made.home);
}
