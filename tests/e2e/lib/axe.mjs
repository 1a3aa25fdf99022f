// axe-core audits of the page as it is now (the engine browsers' own audits
// use), for tests that check a dialog or a filled-in view beside the
// per-view sweep of accessibility.test.mjs.
import fs from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const AXE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/**
 * Serious and critical violations, one line each. axe's source goes in the
 * WebDriver script itself: the app's CSP forbids eval and foreign scripts,
 * and WebDriver scripts are not subject to it.
 */
export async function seriousViolations(b) {
  const body = `
    const done = arguments[arguments.length - 1];
    if (!window.axe) { ${AXE}\n }
    window.axe
      .run(document, { resultTypes: ['violations'] })
      .then((r) => done(r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.impact + ' ' + v.id + ': ' + v.help + ' — ' + v.nodes.slice(0, 4).map((n) => n.target.join(' ')).join(' | ') + ' (' + v.nodes.length + ')')))
      .catch((e) => done(['axe failed: ' + e]));
  `;
  return b.executeAsync(body);
}

/**
 * `seriousViolations` with the app's dark rules applied, as `screenshotDark`
 * applies them (Xvfb has no dark preference to switch): the
 * `prefers-color-scheme: dark` rules copied into a style element, audited,
 * removed again.
 */
export async function darkViolations(b) {
  await b.execute(() => {
    const css = [];
    for (const sheet of document.styleSheets) {
      for (const r of sheet.cssRules) {
        if (r instanceof CSSMediaRule && /prefers-color-scheme:\s*dark/.test(r.media.mediaText)) for (const inner of r.cssRules) css.push(inner.cssText);
      }
    }
    const style = document.createElement('style');
    style.id = 'e2e-dark';
    style.textContent = css.join('\n');
    document.head.append(style);
  });
  try {
    return await seriousViolations(b);
  } finally {
    await b.execute(() => document.getElementById('e2e-dark')?.remove());
  }
}
