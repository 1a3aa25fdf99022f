// Accessibility: axe-core (the engine browsers' own audits use) over every
// view of the real app, light and dark; no serious or critical violation.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { startApp, gotoView, byTestId } from './lib/app.mjs';

const require = createRequire(import.meta.url);
const AXE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const VIEWS = ['servers', 'catalog', 'tools', 'profiles', 'resources', 'gateway', 'accounts', 'sources', 'logs', 'history', 'settings'];

let app;
before(async () => {
  app = await startApp('accessibility');
});
after(async () => {
  if (app) await app.close();
});

/**
 * Serious and critical violations on the page as it is now, one line each.
 * axe's source goes in the WebDriver script itself: the app's CSP forbids
 * eval and foreign scripts, and WebDriver scripts are not subject to it.
 */
async function audit(b, dark) {
  const body = `
    const done = arguments[arguments.length - 1];
    const dark = arguments[0];
    if (!window.axe) { ${AXE}\n }
    let style = null;
    if (dark) {
      const css = [];
      for (const sheet of document.styleSheets) {
        let list;
        try { list = sheet.cssRules; } catch (e) { continue; }
        for (const r of list) if (r instanceof CSSMediaRule && /prefers-color-scheme:\\s*dark/.test(r.media.mediaText)) for (const inner of r.cssRules) css.push(inner.cssText);
      }
      style = document.createElement('style');
      style.textContent = css.join('\\n');
      document.head.append(style);
    }
    window.axe
      .run(document, { resultTypes: ['violations'] })
      .then((r) => {
        if (style) style.remove();
        done(r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.impact + ' ' + v.id + ': ' + v.help + ' — ' + v.nodes.slice(0, 4).map((n) => n.target.join(' ')).join(' | ') + ' (' + v.nodes.length + ')'));
      })
      .catch((e) => done(['axe failed: ' + e]));
  `;
  return b.executeAsync(body, dark);
}

test('no serious or critical accessibility violation on any view, light and dark', async () => {
  const b = app.browser;
  await gotoView(b, 'servers');
  await byTestId(b, 'server-row-alpha', { timeout: 20_000 });
  const found = [];
  for (const view of VIEWS) {
    await gotoView(b, view);
    for (const dark of [false, true]) {
      for (const v of await audit(b, dark)) found.push(`${view}${dark ? ' (dark)' : ''}: ${v}`);
    }
  }
  assert.deepEqual(found, [], `\n${found.join('\n')}`);
});
