// A small MCP client over streamable HTTP (MCP 2025-06-18), for checking the
// app's gateway the way another client on this machine would use it:
// initialize, list tools, and wait for notifications on the GET stream.

const PROTOCOL = '2025-06-18';

/** `data:` payloads of a text/event-stream body, as parsed JSON. */
function sseMessages(text) {
  const out = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    const data = block.split(/\r?\n/).filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trimStart()).join('\n');
    if (data) {
      try {
        out.push(JSON.parse(data));
      } catch {}
    }
  }
  return out;
}

export class McpHttpClient {
  constructor(url, token) {
    this.url = url;
    this.token = token;
    this.session = null;
    this.nextId = 1;
    this.notifications = [];
    this.waiters = [];
    this.stream = null;
  }

  headers(extra = {}) {
    const h = { Accept: 'application/json, text/event-stream', 'Content-Type': 'application/json', ...extra };
    if (this.token) h.Authorization = `Bearer ${this.token}`;
    if (this.session) h['Mcp-Session-Id'] = this.session;
    if (this.session) h['Mcp-Protocol-Version'] = PROTOCOL;
    return h;
  }

  /** POST one message; the response (if a request) as parsed JSON-RPC. */
  async post(message, { timeoutMs = 15_000 } = {}) {
    const res = await fetch(this.url, { method: 'POST', headers: this.headers(), body: JSON.stringify(message), signal: AbortSignal.timeout(timeoutMs) });
    if (!res.ok && res.status !== 202) {
      const err = new Error(`${message.method}: HTTP ${res.status} ${await res.text()}`);
      err.status = res.status;
      throw err;
    }
    const sid = res.headers.get('mcp-session-id');
    if (sid) this.session = sid;
    if (message.id === undefined) return null;
    const type = res.headers.get('content-type') ?? '';
    const body = await res.text();
    const msgs = type.includes('text/event-stream') ? sseMessages(body) : [JSON.parse(body)];
    const reply = msgs.find((m) => m.id === message.id);
    if (!reply) throw new Error(`${message.method}: no response in ${body.slice(0, 500)}`);
    if (reply.error) throw new Error(`${message.method}: ${reply.error.message}`);
    return reply.result;
  }

  request(method, params = {}) {
    return this.post({ jsonrpc: '2.0', id: this.nextId++, method, params });
  }

  async initialize(name = 'e2e-client', version = '1.0.0') {
    const result = await this.request('initialize', { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name, version } });
    await this.post({ jsonrpc: '2.0', method: 'notifications/initialized' });
    return result;
  }

  async listTools() {
    const names = [];
    let cursor;
    do {
      const r = await this.request('tools/list', cursor ? { cursor } : {});
      names.push(...r.tools.map((t) => t.name));
      cursor = r.nextCursor;
    } while (cursor);
    return names;
  }

  /** Opens the GET stream the server sends notifications on. */
  async listen() {
    const ctl = new AbortController();
    const headers = this.headers({ Accept: 'text/event-stream' });
    delete headers['Content-Type'];
    const res = await fetch(this.url, { method: 'GET', headers, signal: ctl.signal });
    if (!res.ok) throw new Error(`GET stream: HTTP ${res.status}`);
    this.stream = ctl;
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buf = '';
    (async () => {
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buf += decoder.decode(value, { stream: true });
          const cut = buf.lastIndexOf('\n\n');
          if (cut < 0) continue;
          for (const m of sseMessages(buf.slice(0, cut))) this.notify(m);
          buf = buf.slice(cut + 2);
        }
      } catch {}
    })();
  }

  notify(m) {
    if (!m.method) return;
    this.notifications.push(m.method);
    this.waiters = this.waiters.filter((w) => !w(m.method));
  }

  /** Resolves at the next notification `method` (after this call). */
  next(method, timeoutMs = 15_000) {
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no ${method} within ${timeoutMs} ms (got ${this.notifications.join(', ') || 'nothing'})`)), timeoutMs);
      this.waiters.push((got) => {
        if (got !== method) return false;
        clearTimeout(t);
        resolve();
        return true;
      });
    });
  }

  async close() {
    this.stream?.abort();
    if (this.session) {
      await fetch(this.url, { method: 'DELETE', headers: this.headers() }).catch(() => {});
    }
  }
}
