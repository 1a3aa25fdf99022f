// Settings → Activity → OpenTelemetry: the export of each call as a span,
// as the user edits it, to and from the engine's `TelemetrySettings`, and
// how the export is doing in words.
import type { TelemetrySettings, TelemetryStatus } from '../types';

export interface TelemetryForm {
  enabled: boolean;
  endpoint: string;
  includePayloads: boolean;
}

export function toTelemetryForm(s: TelemetrySettings): TelemetryForm {
  return { enabled: s.enabled, endpoint: s.endpoint, includePayloads: s.includePayloads };
}

export type TelemetryParsed =
  { ok: true; settings: TelemetrySettings } | { ok: false; error: string };

/** The form as `TelemetrySettings`: the collector's URL must be http(s) with a host. */
export function fromTelemetryForm(f: TelemetryForm): TelemetryParsed {
  const endpoint = f.endpoint.trim();
  const bad = (why: string) =>
    ({ ok: false, error: `Collector URL: "${endpoint}" ${why}` }) as const;
  if (endpoint === '')
    return { ok: false, error: 'Collector URL: give the address of a collector' };
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return bad('is not a URL (e.g. http://localhost:4318/v1/traces)');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return bad('is not an http:// or https:// URL');
  if (url.hostname === '') return bad('names no host');
  return {
    ok: true,
    settings: { enabled: f.enabled, endpoint, includePayloads: f.includePayloads },
  };
}

const count = (n: number, one: string, many: string) =>
  `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;

/** The status line: whether calls are sent, and how many spans went and failed. */
export function telemetryStatusText(s: TelemetryStatus): string {
  if (!s.stats) return 'The call journal is not open: no call is sent.';
  const figures = `${count(s.stats.exported, 'span sent', 'spans sent')}, ${s.stats.failed.toLocaleString('en-US')} failed`;
  if (s.stats.exporting) return `Sending to ${s.settings.endpoint} · ${figures}`;
  if (s.settings.enabled) return `Not sending · ${figures}`;
  return s.stats.exported + s.stats.failed > 0 ? `Off · ${figures}` : 'Off: no call is sent.';
}
