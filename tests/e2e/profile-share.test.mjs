// Sharing profiles from the app (issue 28). A profile whose servers' winning
// definitions hold a literal token (github, from Claude Desktop's file), a
// variable reference (vars-demo, from Cursor's) and a program this machine
// does not have (notes, off, in Switchboard's own file) is exported from the
// Profiles view to a file in the home folder: the file holds a keychain
// reference where the token was, and neither the token nor the variable's
// value. Imported back from that file under another name, the preview says
// what it reuses, which runtime is missing here and which secret to enter
// (a password field; the value goes to the keychain); Import makes the new
// profile, listed at once. A document that is not a profile, carries a
// secret value or names a server it does not define is refused with the
// engine's message naming the field, and nothing is written. axe-core finds
// nothing serious on the dialog with its preview, light and dark.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startApp, gotoView, byTestId, exists, fill, eventually, screenshot, screenshotDark, readJson } from './lib/app.mjs';
import { darkViolations, seriousViolations } from './lib/axe.mjs';

/** In Claude Desktop's fixture file (github's winner here), as a literal. */
const DESKTOP_TOKEN = 'ghp_desktopFixture0000000000000000000000';
/** GITHUB_TOKEN, as run.sh starts the app. */
const ENV_TOKEN = 'ghp_fixture';
const SERVERS = ['alpha', 'github', 'vars-demo', 'notes'];

let app;
before(async () => {
  app = await startApp('profile-share', {
    extraServers: { notes: { type: 'stdio', command: 'notes-mcp-not-on-this-machine', enabled: false } },
    prepare(fx) {
      const settings = fs.existsSync(fx.settings) ? readJson(fx.settings) : {};
      settings.profiles = { list: [{ name: 'Shared', servers: SERVERS.map((name) => ({ name })) }] };
      fs.mkdirSync(path.dirname(fx.settings), { recursive: true });
      fs.writeFileSync(fx.settings, JSON.stringify(settings, null, 2) + '\n');
    },
  });
});
after(async () => {
  if (app) await app.close();
});

const text = async (b, id) => (await (await byTestId(b, id)).getText()).trim();
const attr = async (b, id, name) => (await byTestId(b, id)).getAttribute(name);

/** Puts `value` into a Svelte-bound text area as a paste does (one input event). */
async function paste(b, testId, value) {
  await b.execute((id, v) => {
    const el = document.querySelector(`[data-testid="${id}"]`);
    el.value = v;
    el.dispatchEvent(new Event('input', { bubbles: true }));
  }, testId, value);
}

async function showProfile(b, name) {
  await gotoView(b, 'profiles');
  await (await byTestId(b, `profile-row-${name}`)).click();
  await eventually(b, async () => (await text(b, 'profile-name')) === name, `${name} is shown`);
}

async function openImport(b) {
  await gotoView(b, 'profiles');
  await (await byTestId(b, 'profile-import')).click();
  await byTestId(b, 'profile-import-preview');
}

async function closeDialog(b) {
  await b.keys(['Escape']);
  await eventually(b, async () => !(await exists(b, 'profile-import-preview')), 'the dialog closed');
}

const exported = () => path.join(app.fx.home, 'Shared.switchboard-profile.json');

test('a profile is exported to a file in the home folder with references where its secrets were', async () => {
  const b = app.browser;
  await showProfile(b, 'Shared');
  await (await byTestId(b, 'profile-export')).click();
  const field = await byTestId(b, 'profile-export-path');
  assert.equal(await field.getValue(), '~/Shared.switchboard-profile.json', 'the file suggested');
  await (await byTestId(b, 'profile-export-save')).click();
  await byTestId(b, 'profile-export-report', { timeout: 15_000 });
  assert.equal(await text(b, 'profile-export-file'), exported());
  const said = await text(b, 'profile-export-report');
  assert.match(said, /Exported Shared \(4 servers\)/, said);
  assert.match(said, /env\.GITHUB_PERSONAL_ACCESS_TOKEN of github/, said);
  await screenshot(b, 'profile-export');

  const file = fs.readFileSync(exported(), 'utf8');
  for (const value of [DESKTOP_TOKEN, ENV_TOKEN]) assert.ok(!file.includes(value), `the exported file holds ${value}:\n${file}`);
  const doc = JSON.parse(file);
  assert.equal(doc.switchboardProfile, 1);
  assert.deepEqual(Object.keys(doc.servers), SERVERS);
  assert.equal(doc.servers.github.env.GITHUB_PERSONAL_ACCESS_TOKEN, '${keychain:github.GITHUB_PERSONAL_ACCESS_TOKEN}');
  assert.equal(doc.servers['vars-demo'].env.TOKEN, '${env:GITHUB_TOKEN}', 'a reference stays a reference');

  // Once more: the file is there, and is replaced only when asked.
  fs.writeFileSync(exported(), 'mine\n');
  await (await byTestId(b, 'profile-export-save')).click();
  assert.match(await text(b, 'profile-export-error'), /exists already/);
  assert.equal(fs.readFileSync(exported(), 'utf8'), 'mine\n', 'not overwritten');
  await (await byTestId(b, 'profile-export-replace')).click();
  await byTestId(b, 'profile-export-report', { timeout: 15_000 });
  assert.equal(fs.readFileSync(exported(), 'utf8'), file, 'replaced when asked');
});

test('imported back under another name: the preview first, the secret typed into the keychain, the new profile listed', async () => {
  const b = app.browser;
  await openImport(b);
  await fill(await byTestId(b, 'profile-import-path'), '~/Shared.switchboard-profile.json');
  // Under its own name it is the profile here already: nothing to write.
  await (await byTestId(b, 'profile-import-preview')).click();
  await byTestId(b, 'profile-import-plan', { timeout: 15_000 });
  assert.equal(await attr(b, 'profile-import-plan', 'data-writes'), 'false');
  assert.match(await text(b, 'profile-import-headline'), /The profile Shared is here already/);

  await fill(await byTestId(b, 'profile-import-as'), 'Shared copy');
  assert.equal(await exists(b, 'profile-import-plan'), false, 'a changed form drops the preview');
  assert.equal(await (await byTestId(b, 'profile-import-confirm')).isEnabled(), false, 'nothing to import before a preview');
  await (await byTestId(b, 'profile-import-preview')).click();
  await eventually(b, async () => (await exists(b, 'profile-import-plan')) && (await attr(b, 'profile-import-plan', 'data-profile')) === 'Shared copy', 'the preview for Shared copy', 15_000);
  assert.equal(await text(b, 'profile-import-headline'), 'Makes the profile Shared copy with 4 servers.');
  for (const s of SERVERS) assert.equal(await attr(b, `profile-import-server-${s}`, 'data-action'), 'reuse', `${s} is here already, the same`);
  assert.match(await text(b, 'profile-import-runtimes'), /notes-mcp-not-on-this-machine for notes/, 'notes\'s program is not on this machine');
  const secret = await byTestId(b, 'profile-import-secret-github.GITHUB_PERSONAL_ACCESS_TOKEN');
  assert.equal(await secret.getAttribute('type'), 'password');
  await screenshot(b, 'profile-import-preview');

  await secret.setValue('ghp_typedOnImport0000000000000000000000');
  await (await byTestId(b, 'profile-import-confirm')).click();
  const report = await byTestId(b, 'profile-import-report', { timeout: 15_000 });
  const said = (await report.getText()).trim();
  assert.match(said, /Imported the profile Shared copy \(change #\d+\)/, said);
  assert.match(said, /Kept in the OS keychain: github\.GITHUB_PERSONAL_ACCESS_TOKEN/, said);
  assert.ok(!said.includes('ghp_typedOnImport'), 'the typed value is not shown');
  const made = readJson(app.fx.settings).profiles.list.find((p) => p.name === 'Shared copy');
  assert.deepEqual(made?.servers, SERVERS.map((name) => ({ name })));
  for (const f of [app.fx.settings, app.fx.servers]) assert.ok(!fs.readFileSync(f, 'utf8').includes('ghp_typedOnImport'), `${f} holds the typed secret`);

  await (await byTestId(b, 'profile-import-show')).click();
  await eventually(b, async () => !(await exists(b, 'profile-import-report')), 'the dialog closed');
  await byTestId(b, 'profile-row-Shared copy');
  await eventually(b, async () => (await text(b, 'profile-name')) === 'Shared copy', 'the new profile is shown');
});

test('bad documents are refused with the engine\'s message naming the field, and nothing is written', async () => {
  const b = app.browser;
  const good = readJson(exported());
  const written = () => [app.fx.settings, app.fx.servers].map((f) => fs.readFileSync(f, 'utf8'));
  const before = written();
  const withSecret = structuredClone(good);
  withSecret.servers.github.env.GITHUB_PERSONAL_ACCESS_TOKEN = DESKTOP_TOKEN;
  const ghost = structuredClone(good);
  ghost.profile.servers.push({ name: 'ghost' });
  const cases = [
    ['{"hello": 1}', /"switchboardProfile" is missing/],
    [JSON.stringify(withSecret), /field env\.GITHUB_PERSONAL_ACCESS_TOKEN of server "github" carries a secret value/],
    [JSON.stringify(ghost), /"ghost"/],
  ];
  await openImport(b);
  await (await byTestId(b, 'profile-import-paste')).click();
  await fill(await byTestId(b, 'profile-import-as'), 'Other');
  for (const [doc, want] of cases) {
    await paste(b, 'profile-import-text', doc);
    await (await byTestId(b, 'profile-import-preview')).click();
    await byTestId(b, 'profile-import-error', { timeout: 15_000 });
    const msg = await text(b, 'profile-import-error');
    assert.match(msg, want);
    assert.ok(!msg.includes(DESKTOP_TOKEN), `the message repeats the secret: ${msg}`);
    assert.equal(await exists(b, 'profile-import-plan'), false, 'no preview');
    assert.equal(await (await byTestId(b, 'profile-import-confirm')).isEnabled(), false, 'nothing to import');
  }
  assert.deepEqual(written(), before, 'nothing was written');
  await closeDialog(b);
  assert.equal(await exists(b, 'profile-row-Other'), false);
});

test('the import dialog with its preview has no serious or critical accessibility violation, light and dark', async () => {
  const b = app.browser;
  await openImport(b);
  await fill(await byTestId(b, 'profile-import-path'), exported());
  await fill(await byTestId(b, 'profile-import-as'), 'Third');
  await (await byTestId(b, 'profile-import-preview')).click();
  await byTestId(b, 'profile-import-plan', { timeout: 15_000 });
  const found = (await seriousViolations(b)).map((v) => `light: ${v}`);
  await screenshotDark(b, 'profile-import-preview-dark');
  found.push(...(await darkViolations(b)).map((v) => `dark: ${v}`));
  await closeDialog(b);
  assert.deepEqual(found, [], `\n${found.join('\n')}`);
});
