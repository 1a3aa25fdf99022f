// The Resources & prompts browser: which servers can be browsed,
// how a read resource and a prompt's messages are shown, prompt arguments as a
// form, resource templates filled in, and errors in the user's words.

import { ErrorCode } from '../types';
import type {
  JsonSchema,
  PromptInfo,
  PromptMessageInfo,
  ResourceContent,
  ServerView,
} from '../types';

/** Key of one resource of one server (subscriptions, update times). */
export function resourceKey(server: string, uri: string): string {
  return `${server}\u0000${uri}`;
}

/** Why a server cannot be browsed right now, or null when it can (connected). */
export function unavailableReason(server: ServerView): string | null {
  const rt = server.runtime;
  if (!rt) {
    if (server.errors.length) return 'Its definition is invalid, so Switchboard does not run it.';
    if (server.notRunnable) return `Only its own client can run it (${server.notRunnable}).`;
    return 'It has not started yet.';
  }
  switch (rt.status.state) {
    case 'connected':
      return null;
    case 'disabled':
      return 'It is disabled. Enable it on the Servers page to browse it.';
    case 'connecting':
      return 'It is still connecting; this fills in once it is up.';
    case 'restarting':
      return `It is restarting (attempt ${rt.status.attempt} of ${rt.status.of}).`;
    case 'failed':
      return `It failed: ${rt.status.error}`;
    case 'needs-auth':
      return `It needs you to sign in: ${rt.status.message}`;
    case 'disconnected':
      return 'It is stopped. Start it on the Servers page to browse it.';
  }
}

/** Connected servers first, then the rest, each group by name. */
export function browsableFirst(servers: ServerView[]): ServerView[] {
  const up = (s: ServerView) => (unavailableReason(s) === null ? 0 : 1);
  return [...servers].sort((a, b) => up(a) - up(b) || a.name.localeCompare(b.name));
}

/** Bytes of base64 data without decoding it. */
export function base64Bytes(b64: string): number {
  const clean = b64.replace(/\s/g, '');
  if (!clean) return 0;
  const pad = clean.endsWith('==') ? 2 : clean.endsWith('=') ? 1 : 0;
  return Math.floor((clean.length * 3) / 4) - pad;
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} byte${n === 1 ? '' : 's'}`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MB`;
}

export type ShownContent =
  | { kind: 'text'; uri: string; mimeType: string | null; text: string }
  | { kind: 'blob'; uri: string; mimeType: string | null; bytes: number }
  | { kind: 'empty'; uri: string; mimeType: string | null };

/** What to show for one item of a read: its text, or a note for binary data. */
export function showContent(c: ResourceContent): ShownContent {
  const mimeType = c.mimeType ?? null;
  if (typeof c.text === 'string') return { kind: 'text', uri: c.uri, mimeType, text: c.text };
  if (typeof c.blob === 'string')
    return { kind: 'blob', uri: c.uri, mimeType, bytes: base64Bytes(c.blob) };
  return { kind: 'empty', uri: c.uri, mimeType };
}

/** One line for a binary item: "Binary data (image/png), 1.2 KB — not shown." */
export function blobNote(c: { mimeType: string | null; bytes: number }): string {
  return `Binary data (${c.mimeType ?? 'unknown type'}), ${formatBytes(c.bytes)} — not shown.`;
}

/** A prompt's arguments as a JSON Schema for SchemaForm: strings, required ones marked. */
export function promptSchema(prompt: PromptInfo): JsonSchema {
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  for (const a of prompt.arguments ?? []) {
    properties[a.name] = {
      type: 'string',
      ...(a.title ? { title: a.title } : {}),
      ...(a.description ? { description: a.description } : {}),
    };
    if (a.required) required.push(a.name);
  }
  return { type: 'object', properties, required };
}

/** A prompt message's content as display text. */
export function messageText(m: PromptMessageInfo): string {
  const c = m.content ?? { type: 'unknown' };
  switch (c.type) {
    case 'text':
      return typeof c.text === 'string' ? c.text : '';
    case 'image':
    case 'audio': {
      const data = typeof c.data === 'string' ? c.data : '';
      return `[${c.type}: ${c.mimeType ?? 'unknown type'}, ${formatBytes(base64Bytes(data))}]`;
    }
    case 'resource': {
      const r = (c.resource ?? {}) as Partial<ResourceContent>;
      if (typeof r.text === 'string') return r.text;
      return `[resource ${r.uri ?? ''}${r.mimeType ? ` (${r.mimeType})` : ''}]`;
    }
    case 'resource_link':
      return `[link to ${typeof c.uri === 'string' ? c.uri : 'a resource'}]`;
    default:
      return JSON.stringify(c, null, 2);
  }
}

/** Variable names of an RFC 6570 template (`fixture://item/{id}` → `id`). */
export function templateVariables(template: string): string[] {
  const names: string[] = [];
  for (const m of template.matchAll(/\{([^}]+)\}/g)) {
    for (const part of m[1].replace(/^[+#./;?&]/, '').split(',')) {
      const name = part.replace(/\*$/, '').replace(/:\d+$/, '').trim();
      if (name && !names.includes(name)) names.push(name);
    }
  }
  return names;
}

/**
 * Fills a template's variables (simple expansion: values percent-encoded;
 * `{+x}` and `{#x}` keep reserved characters such as `/`).
 */
export function expandTemplate(template: string, values: Record<string, string>): string {
  return template.replace(/\{([^}]+)\}/g, (_, expr: string) => {
    const op = /^[+#./;?&]/.test(expr) ? expr[0] : '';
    const names = (op ? expr.slice(1) : expr)
      .split(',')
      .map((n) => n.replace(/\*$/, '').replace(/:\d+$/, '').trim());
    const enc = op === '+' || op === '#' ? encodeURI : encodeURIComponent;
    const parts = names
      .filter((n) => values[n] !== undefined && values[n] !== '')
      .map((n) => {
        const v = enc(values[n]);
        return op === ';' || op === '?' || op === '&' ? `${n}=${v}` : v;
      });
    if (parts.length === 0) return '';
    const sep = op === '' || op === '+' || op === '#' ? ',' : op === '?' || op === '&' ? '&' : op;
    const first = op === '' || op === '+' ? '' : op === '?' ? '?' : op;
    return first + parts.join(sep);
  });
}

/**
 * A failed resources/prompts command in the user's words. `what` is
 * "resources" or "prompts". Servers without the capability answer
 * "method not found" (JSON-RPC -32601).
 */
export function describeFailure(
  err: { code?: string; message: string },
  server: string,
  what: 'resources' | 'prompts',
): string {
  if (/-32601\b|method not found/i.test(err.message)) return `${server} does not offer ${what}.`;
  if (err.code === ErrorCode.NotConnected)
    return `${server} is not connected any more. It will be browsable again once it reconnects.`;
  if (err.code === ErrorCode.NotFound)
    return `Switchboard does not know a server called ${server}.`;
  return err.message;
}

/** "updated at 14:03:07" for an update time (ms since the epoch). */
export function updatedAt(ms: number, locale?: string): string {
  return `updated at ${new Date(ms).toLocaleTimeString(locale, { hour: '2-digit', minute: '2-digit', second: '2-digit' })}`;
}
