import { describe, expect, it } from 'vitest';
import { applyEvent, emptyData } from './events';
import {
  base64Bytes,
  blobNote,
  browsableFirst,
  describeFailure,
  expandTemplate,
  messageText,
  promptSchema,
  resourceKey,
  showContent,
  templateVariables,
  unavailableReason,
} from './resources';
import { collectValues, fieldsFromSchema } from './schemaForm';
import type { ServerStatus, ServerView } from '../types';

function server(name: string, status: ServerStatus | null): ServerView {
  return {
    name,
    transport: 'stdio',
    command: 'x',
    enabled: true,
    source: 'switchboard',
    path: '/p',
    errors: [],
    warnings: [],
    shadowed: [],
    runtime: status
      ? {
          name,
          status,
          transport: 'stdio',
          toolCount: 0,
          deferred: false,
          warnings: [],
          restarts: 0,
        }
      : undefined,
  };
}

describe('resource and prompt events', () => {
  it('stamps a subscribed resource when the server reports it changed', () => {
    const d = emptyData();
    const r = applyEvent(
      d,
      { type: 'resource-updated', server: 'beta', uri: 'fixture://counter' },
      1234,
    );
    expect(r.size).toBe(0);
    expect(d.resourceUpdates[resourceKey('beta', 'fixture://counter')]).toBe(1234);
    expect(d.resourceUpdates[resourceKey('alpha', 'fixture://counter')]).toBeUndefined();
    applyEvent(d, { type: 'resource-updated', server: 'beta', uri: 'fixture://counter' }, 5678);
    expect(d.resourceUpdates[resourceKey('beta', 'fixture://counter')]).toBe(5678);
  });

  it('bumps the resource or prompt list version of that server only', () => {
    const d = emptyData();
    applyEvent(d, { type: 'resources-changed', server: 'beta' });
    applyEvent(d, { type: 'resources-changed', server: 'beta' });
    applyEvent(d, { type: 'prompts-changed', server: 'alpha' });
    expect(d.resourceListVersion).toEqual({ beta: 2 });
    expect(d.promptListVersion).toEqual({ alpha: 1 });
  });

  it('keeps server and uri apart in the key', () => {
    expect(resourceKey('a', 'b:c')).not.toBe(resourceKey('a:b', 'c'));
  });
});

describe('which servers can be browsed', () => {
  it('only connected servers, with the reason for the others', () => {
    expect(unavailableReason(server('a', { state: 'connected' }))).toBeNull();
    expect(unavailableReason(server('a', { state: 'disabled' }))).toMatch(/disabled/);
    expect(unavailableReason(server('a', { state: 'restarting', attempt: 2, of: 5 }))).toMatch(
      /attempt 2 of 5/,
    );
    expect(unavailableReason(server('a', { state: 'failed', error: 'boom' }))).toMatch(/boom/);
    expect(unavailableReason(server('a', { state: 'disconnected' }))).toMatch(/Start it/);
    const clientOnly = { ...server('a', null), notRunnable: 'a Claude Desktop extension' };
    expect(unavailableReason(clientOnly)).toMatch(/Claude Desktop extension/);
  });

  it('lists connected servers first, each group by name', () => {
    const list = [
      server('zeta', { state: 'connected' }),
      server('alpha', { state: 'failed', error: 'x' }),
      server('beta', { state: 'connected' }),
    ];
    expect(browsableFirst(list).map((s) => s.name)).toEqual(['beta', 'zeta', 'alpha']);
  });
});

describe('showing what was read', () => {
  it('shows text and describes binary data by type and size', () => {
    expect(showContent({ uri: 'u', mimeType: 'text/plain', text: 'hi' })).toEqual({
      kind: 'text',
      uri: 'u',
      mimeType: 'text/plain',
      text: 'hi',
    });
    const blob = showContent({ uri: 'u', mimeType: 'image/png', blob: 'AAECAw==' });
    expect(blob).toEqual({ kind: 'blob', uri: 'u', mimeType: 'image/png', bytes: 4 });
    expect(blobNote(blob as { mimeType: string; bytes: number })).toBe(
      'Binary data (image/png), 4 bytes — not shown.',
    );
    expect(blobNote({ mimeType: null, bytes: 2048 })).toBe(
      'Binary data (unknown type), 2.0 KB — not shown.',
    );
    expect(showContent({ uri: 'u' }).kind).toBe('empty');
  });

  it('counts base64 bytes with and without padding', () => {
    expect(base64Bytes('')).toBe(0);
    expect(base64Bytes('QQ==')).toBe(1);
    expect(base64Bytes('QUI=')).toBe(2);
    expect(base64Bytes('QUJD')).toBe(3);
    expect(base64Bytes('QUJD\nREVG')).toBe(6);
  });

  it('turns prompt messages into text', () => {
    expect(messageText({ role: 'user', content: { type: 'text', text: 'Hello, Ada!' } })).toBe(
      'Hello, Ada!',
    );
    expect(
      messageText({
        role: 'user',
        content: { type: 'image', mimeType: 'image/png', data: 'QUJD' },
      }),
    ).toBe('[image: image/png, 3 bytes]');
    expect(
      messageText({
        role: 'user',
        content: { type: 'resource', resource: { uri: 'x://y', text: 'inside' } },
      }),
    ).toBe('inside');
    expect(messageText({ role: 'user', content: { type: 'resource_link', uri: 'x://y' } })).toBe(
      '[link to x://y]',
    );
  });
});

describe('prompt arguments as a form', () => {
  it('makes one string field per argument and marks the required ones', () => {
    const schema = promptSchema({
      name: 'greet',
      arguments: [
        { name: 'name', description: 'Who to greet', required: true },
        { name: 'tone', title: 'Tone' },
      ],
    });
    const fields = fieldsFromSchema(schema);
    expect(fields.map((f) => [f.name, f.kind, f.required, f.label])).toEqual([
      ['name', 'string', true, 'name'],
      ['tone', 'string', false, 'Tone'],
    ]);
    expect(fields[0].description).toBe('Who to greet');
    expect(collectValues(fields, { name: '', tone: '' }).errors).toEqual({ name: 'Required' });
    expect(collectValues(fields, { name: 'Ada', tone: '' }).value).toEqual({ name: 'Ada' });
  });

  it('gives an empty form for a prompt without arguments', () => {
    expect(fieldsFromSchema(promptSchema({ name: 'p' }))).toEqual([]);
  });
});

describe('resource templates', () => {
  it('finds the variables', () => {
    expect(templateVariables('fixture://item/{id}')).toEqual(['id']);
    expect(templateVariables('file:///{+path}{?rev,mode}')).toEqual(['path', 'rev', 'mode']);
    expect(templateVariables('plain://x')).toEqual([]);
  });

  it('expands simple, reserved and query variables', () => {
    expect(expandTemplate('fixture://item/{id}', { id: '42' })).toBe('fixture://item/42');
    expect(expandTemplate('fixture://item/{id}', { id: 'a b/c' })).toBe('fixture://item/a%20b%2Fc');
    expect(expandTemplate('file:///{+path}', { path: 'src/main.rs' })).toBe('file:///src/main.rs');
    expect(expandTemplate('x://s{?q,page}', { q: 'mcp', page: '2' })).toBe('x://s?q=mcp&page=2');
    expect(expandTemplate('x://s{?q,page}', { q: 'mcp' })).toBe('x://s?q=mcp');
  });
});

describe("errors in the user's words", () => {
  it('says a server without the capability does not offer it', () => {
    const e = {
      code: 'mcp',
      message: 'MCP error: Mcp error: -32601: resources/prompts are disabled',
    };
    expect(describeFailure(e, 'alpha', 'resources')).toBe('alpha does not offer resources.');
    expect(describeFailure({ code: 'mcp', message: 'Method not found' }, 'alpha', 'prompts')).toBe(
      'alpha does not offer prompts.',
    );
  });

  it('explains a server that went away and passes other messages through', () => {
    expect(
      describeFailure(
        { code: 'not-connected', message: 'Server "b" is not connected' },
        'b',
        'resources',
      ),
    ).toMatch(/not connected any more/);
    expect(
      describeFailure({ code: 'mcp', message: 'MCP error: no resource x' }, 'b', 'resources'),
    ).toBe('MCP error: no resource x');
  });
});
