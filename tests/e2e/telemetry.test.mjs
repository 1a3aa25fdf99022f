// The OpenTelemetry export in the app (issue 29 point 4): Settings →
// Activity → OpenTelemetry is off by default; a URL that is not http(s) is
// refused with the field named and nothing written; turned on with the URL
// of a tiny OTLP/HTTP receiver run by this test, settings.json holds exactly
// those values (every other key untouched), and a tool called from the Tools
// view reaches the receiver as a span (its name and `tools/call` in the
// protobuf body; the arguments not, since payloads are off); the status line
// counts the span as sent. Axe-core finds nothing serious, light and dark;
// screenshots of the subsection in both.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { startApp, gotoView, byTestId, exists, fill, screenshot, eventually } from './lib/app.mjs';
import { seriousViolations } from './lib/axe.mjs';

const ARGS_TEXT = 'otel-args-text-4f9a21';

/** An OTLP/HTTP receiver on loopback: keeps the body of each POST /v1/traces and accepts it. */
function startReceiver() {
  const bodies = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/traces') {
        bodies.push(Buffer.concat(chunks));
        // An empty ExportTraceServiceResponse: everything accepted.
        res.writeHead(200, { 'content-type': 'application/x-protobuf' });
        res.end();
      } else {
        res.writeHead(404);
        res.end();
      }
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      resolve({ url: `http://127.0.0.1:${port}/v1/traces`, bodies, close: () => new Promise((r) => server.close(r)) });
    });
  });
}

let app;
let receiver;
before(async () => {
  receiver = await startReceiver();
  app = await startApp('telemetry', {
    // Keys the export's settings must leave alone: an unknown one, the
    // journal's limits, and those Switchboard always writes.
    prepare: (fx) => {
      fs.mkdirSync(path.dirname(fx.settings), { recursive: true });
      const settings = {
        priority: [],
        projects: [],
        enableProjectConfig: true,
        parked: [],
        journal: { keepDays: 9, keepMb: 90 },
        somethingNewer: [1, 2],
      };
      fs.writeFileSync(fx.settings, JSON.stringify(settings, null, 2) + '\n');
    },
  });
});
after(async () => {
  if (app) await app.close();
  if (receiver) await receiver.close();
});

const readSettings = () => JSON.parse(fs.readFileSync(app.fx.settings, 'utf8'));

/** Axe in light and dark, each entry prefixed with where. */
async function axeBothThemes(b, where) {
  const found = (await seriousViolations(b)).map((v) => `${where} light: ${v}`);
  await b.execute(() => {
    document.documentElement.dataset.theme = 'dark';
  });
  try {
    found.push(...(await seriousViolations(b)).map((v) => `${where} dark: ${v}`));
  } finally {
    await b.execute(() => {
      delete document.documentElement.dataset.theme;
    });
  }
  return found;
}

/** Screenshots `name` light and `name-dark`. */
async function bothThemes(b, name) {
  await screenshot(b, name);
  await b.execute(() => {
    document.documentElement.dataset.theme = 'dark';
  });
  try {
    await screenshot(b, `${name}-dark`);
  } finally {
    await b.execute(() => {
      delete document.documentElement.dataset.theme;
    });
  }
}

async function openSubsection(b) {
  await gotoView(b, 'settings');
  const section = await byTestId(b, 'settings-telemetry');
  await section.scrollIntoView({ block: 'start' });
  return section;
}

test('off by default; a URL that is not http(s) is refused, naming the field, nothing written', async () => {
  const b = app.browser;
  const before = readSettings();
  await openSubsection(b);
  const status = await byTestId(b, 'telemetry-status');
  await eventually(b, async () => (await status.getText()) === 'Off: no call is sent.', 'the status says it is off');
  const enabled = await byTestId(b, 'telemetry-enabled');
  assert.equal(await enabled.getAttribute('aria-checked'), 'false', 'off by default');
  const endpoint = await byTestId(b, 'telemetry-endpoint');
  assert.equal(await endpoint.getValue(), 'http://localhost:4318/v1/traces');
  assert.equal(await (await byTestId(b, 'telemetry-payloads')).isSelected(), false);

  await enabled.click();
  await fill(endpoint, 'localhost:4318/v1/traces');
  await (await byTestId(b, 'telemetry-save')).click();
  const error = await byTestId(b, 'telemetry-error');
  assert.match(await error.getText(), /^Collector URL: "localhost:4318\/v1\/traces" is not an http:\/\/ or https:\/\/ URL/);
  assert.equal(await endpoint.getAttribute('aria-invalid'), 'true');
  assert.deepEqual(readSettings(), before, 'nothing was written');
  await (await byTestId(b, 'settings-telemetry')).scrollIntoView({ block: 'start' });
  await bothThemes(b, 'settings-telemetry-error');

  // Cancel brings back what is saved.
  await (await byTestId(b, 'telemetry-cancel')).click();
  await eventually(b, async () => !(await exists(b, 'telemetry-error')), 'the error is gone');
  assert.equal(await (await byTestId(b, 'telemetry-enabled')).getAttribute('aria-checked'), 'false');
  assert.equal(await (await byTestId(b, 'telemetry-endpoint')).getValue(), 'http://localhost:4318/v1/traces');
});

test('turned on with a receiver\'s URL: saved exactly, and a call from the Tools view arrives as a span', async () => {
  const b = app.browser;
  const before = readSettings();
  await openSubsection(b);
  await (await byTestId(b, 'telemetry-enabled')).click();
  await fill(await byTestId(b, 'telemetry-endpoint'), receiver.url);
  await (await byTestId(b, 'telemetry-save')).click();
  const want = { enabled: true, endpoint: receiver.url, includePayloads: false };
  await eventually(b, async () => JSON.stringify(readSettings().telemetry) === JSON.stringify(want), 'settings.json holds the export\'s settings', 10_000);
  const { telemetry, ...rest } = readSettings();
  assert.deepEqual(telemetry, want);
  assert.deepEqual(rest, before, 'every other key is untouched');
  assert.deepEqual(rest.somethingNewer, [1, 2], 'an unknown key is kept');
  const status = await byTestId(b, 'telemetry-status');
  await eventually(b, async () => (await status.getText()).startsWith(`Sending to ${receiver.url}`), 'the status says spans are sent', 10_000);

  // A call from the Tools view.
  await gotoView(b, 'tools');
  await fill(await byTestId(b, 'tool-search'), 'mcp_alpha_echo');
  await (await byTestId(b, 'tool-row-mcp_alpha_echo', { timeout: 20_000 })).click();
  const call = await byTestId(b, 'tool-call-button', { displayed: true });
  await fill(await byTestId(b, 'tool-arg-text'), ARGS_TEXT);
  await call.click();
  const result = await byTestId(b, 'tool-result', { timeout: 15_000 });
  await eventually(b, async () => (await result.getText()).includes(ARGS_TEXT), 'echo answered', 15_000);

  const has = (body, text) => body.includes(Buffer.from(text));
  await eventually(
    b,
    async () => receiver.bodies.some((body) => has(body, 'tools/call echo') && has(body, 'alpha')),
    'the receiver has a span of the call (tools/call echo, server alpha)',
    20_000,
  );
  const all = Buffer.concat(receiver.bodies);
  assert.ok(!has(all, ARGS_TEXT), 'the arguments are not sent while payloads are off');

  // The status line counts it.
  await openSubsection(b);
  const shown = await byTestId(b, 'telemetry-status');
  await eventually(b, async () => /· [1-9][\d,]* spans? sent, 0 failed$/.test(await shown.getText()), 'the status counts the span as sent', 10_000);
  assert.equal(await (await byTestId(b, 'telemetry-enabled')).getAttribute('aria-checked'), 'true');
  assert.ok(!(await exists(b, 'telemetry-problem')), 'no problem shown');
  await (await byTestId(b, 'settings-telemetry')).scrollIntoView({ block: 'start' });
  await bothThemes(b, 'settings-telemetry');
  const found = await axeBothThemes(b, 'settings');
  assert.deepEqual(found, [], `\n${found.join('\n')}`);
});
