// Settings worth having: the theme (system, light, dark), keeping the app in
// the tray when its window closes, the master switch for project config
// files, where Switchboard keeps its files, and starting at login (the
// desktop's autostart entry).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startApp, gotoView, byTestId, eventually, readJson, screenshot, clickUntil } from './lib/app.mjs';

let app;
before(async () => {
  app = await startApp('settings');
});
after(async () => {
  if (app) await app.close();
});

const rootTheme = (b) => b.execute(() => ({ theme: document.documentElement.dataset.theme ?? 'system', bg: getComputedStyle(document.documentElement).getPropertyValue('--bg').trim() }));

test('the theme follows the choice at once and after a reload', async () => {
  const b = app.browser;
  await gotoView(b, 'settings');
  const select = await byTestId(b, 'settings-theme', { timeout: 15_000 });
  await select.selectByAttribute('value', 'dark');
  await eventually(b, async () => (await rootTheme(b)).bg === '#0f1117', 'the dark colours apply');
  await screenshot(b, 'settings-dark');
  await b.refresh();
  await eventually(b, async () => (await rootTheme(b)).theme === 'dark', 'the choice is kept after a reload', 15_000);
  await gotoView(b, 'settings');
  await (await byTestId(b, 'settings-theme', { timeout: 15_000 })).selectByAttribute('value', 'light');
  await eventually(b, async () => (await rootTheme(b)).bg === '#f6f7f9', 'light colours');
  await (await byTestId(b, 'settings-theme')).selectByAttribute('value', 'system');
  await eventually(b, async () => (await rootTheme(b)).theme === 'system', 'back to the system');
});

test('keep in tray and project config files are saved in Switchboard\'s settings; the data folder is named', async () => {
  const b = app.browser;
  await gotoView(b, 'settings');
  const keep = await byTestId(b, 'settings-keep-in-tray', { timeout: 15_000 });
  assert.equal(await keep.getAttribute('aria-checked'), 'true', 'on by default');
  await clickUntil(b, keep, async () => readJson(app.fx.settings).keepInTray === false, 'keepInTray is saved as false');
  await eventually(b, async () => (await (await byTestId(b, 'settings-keep-in-tray')).getAttribute('aria-checked')) === 'false', 'the switch shows it');
  const projects = await byTestId(b, 'settings-project-config');
  await clickUntil(b, projects, async () => readJson(app.fx.settings).enableProjectConfig === false, 'enableProjectConfig is saved as false');
  const folder = await (await byTestId(b, 'settings-data-folder')).getText();
  assert.ok(folder.startsWith(app.fx.home), `the folder is in this home: ${folder}`);
  await screenshot(b, 'settings');
});

test('start at login writes the desktop\'s autostart entry, which starts this app in the tray; switching it off removes the entry', async () => {
  const b = app.browser;
  await gotoView(b, 'settings');
  const entry = path.join(app.fx.home, '.config', 'autostart', 'Switchboard.desktop');
  const sw = await byTestId(b, 'settings-start-at-login', { timeout: 15_000 });
  assert.equal(await sw.getAttribute('aria-checked'), 'false', 'off by default');
  assert.equal(fs.existsSync(entry), false, 'no entry before');
  await clickUntil(b, sw, async () => fs.existsSync(entry), `${entry} is written`);
  const text = fs.readFileSync(entry, 'utf8');
  assert.match(text, /^\[Desktop Entry\]$/m, text);
  const exec = /^Exec=(.*)$/m.exec(text)?.[1];
  assert.ok(exec, `an Exec line: ${text}`);
  const [program, ...args] = exec.trim().split(/\s+/);
  assert.equal(program, fs.realpathSync(`/proc/${app.pid}/exe`), 'it starts this app');
  assert.deepEqual(args, ['--hidden'], 'in the tray, window closed');
  await eventually(b, async () => (await (await byTestId(b, 'settings-start-at-login')).getAttribute('aria-checked')) === 'true', 'the switch shows it');
  await clickUntil(b, await byTestId(b, 'settings-start-at-login'), async () => !fs.existsSync(entry), 'the entry is removed');
  await eventually(b, async () => (await (await byTestId(b, 'settings-start-at-login')).getAttribute('aria-checked')) === 'false', 'the switch shows it off');
});

test('server defaults: timeout and restarts are saved in Switchboard\'s settings; a value out of range names its field and saves nothing', async () => {
  const b = app.browser;
  await gotoView(b, 'settings');
  const timeout = await byTestId(b, 'defaults-timeout', { timeout: 15_000 });
  assert.equal(await timeout.getValue(), '30', 'the default timeout is shown in seconds');
  assert.equal(await (await byTestId(b, 'defaults-restarts')).getValue(), '5');
  await timeout.setValue('45');
  await (await byTestId(b, 'defaults-restarts')).setValue('2');
  await clickUntil(b, await byTestId(b, 'defaults-save'), async () => readJson(app.fx.settings).serverDefaults?.timeoutMs === 45_000, 'serverDefaults is saved');
  const saved = readJson(app.fx.settings).serverDefaults;
  assert.equal(saved.restartPolicy.maxRestartAttempts, 2, JSON.stringify(saved));
  assert.equal(saved.healthIntervalMs, 15_000, 'untouched values keep their defaults');

  // Out of range: the engine refuses it, naming the field; the file stays.
  const before = fs.readFileSync(app.fx.settings, 'utf8');
  await (await byTestId(b, 'defaults-timeout')).setValue('0');
  await (await byTestId(b, 'defaults-save')).click();
  const error = await byTestId(b, 'defaults-error', { timeout: 10_000 });
  assert.match(await error.getText(), /Timeout: 0 s is outside 1–600 seconds/);
  assert.equal(fs.readFileSync(app.fx.settings, 'utf8'), before, 'nothing was saved');
  await (await byTestId(b, 'defaults-cancel')).click();
  await eventually(b, async () => (await (await byTestId(b, 'defaults-timeout')).getValue()) === '45', 'Cancel shows the saved value again');
  await screenshot(b, 'settings-server-defaults');
});
