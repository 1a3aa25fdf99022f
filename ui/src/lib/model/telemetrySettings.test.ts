import { describe, expect, it } from 'vitest';
import { fromTelemetryForm, telemetryStatusText, toTelemetryForm } from './telemetrySettings';

const saved = {
  enabled: false,
  endpoint: 'http://localhost:4318/v1/traces',
  includePayloads: false,
};

describe('telemetry settings form', () => {
  it('round-trips the saved settings, trimming the URL', () => {
    expect(fromTelemetryForm(toTelemetryForm(saved))).toEqual({ ok: true, settings: saved });
    expect(
      fromTelemetryForm({
        enabled: true,
        endpoint: ' https://otel.example.com/v1/traces ',
        includePayloads: true,
      }),
    ).toEqual({
      ok: true,
      settings: {
        enabled: true,
        endpoint: 'https://otel.example.com/v1/traces',
        includePayloads: true,
      },
    });
  });

  it('refuses what is not an http(s) URL with a host, naming the field', () => {
    const f = (endpoint: string) => fromTelemetryForm({ ...saved, enabled: true, endpoint });
    expect(f('localhost:4318')).toEqual({
      ok: false,
      error: 'Collector URL: "localhost:4318" is not an http:// or https:// URL',
    });
    expect(f('not a url')).toEqual({
      ok: false,
      error: 'Collector URL: "not a url" is not a URL (e.g. http://localhost:4318/v1/traces)',
    });
    expect(f('ftp://collector/v1/traces')).toMatchObject({ ok: false });
    expect(f('  ')).toEqual({ ok: false, error: 'Collector URL: give the address of a collector' });
  });

  it('says whether spans go out and how many went or failed', () => {
    const stats = { exporting: true, exported: 1, failed: 0, problem: null };
    const on = { ...saved, enabled: true };
    expect(telemetryStatusText({ settings: on, stats })).toBe(
      'Sending to http://localhost:4318/v1/traces · 1 span sent, 0 failed',
    );
    expect(
      telemetryStatusText({
        settings: on,
        stats: { ...stats, exporting: false, exported: 1200, failed: 3 },
      }),
    ).toBe('Not sending · 1,200 spans sent, 3 failed');
    expect(
      telemetryStatusText({ settings: saved, stats: { ...stats, exporting: false, exported: 0 } }),
    ).toBe('Off: no call is sent.');
    expect(telemetryStatusText({ settings: saved, stats: null })).toBe(
      'The call journal is not open: no call is sent.',
    );
  });
});
