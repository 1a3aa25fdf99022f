import { describe, expect, it } from 'vitest';
import { droppedText, fromDropped, intoField } from './drops';

const data = (m: Record<string, string>) => ({ getData: (t: string) => m[t] ?? '' });

describe('drops', () => {
  it('takes a uri-list’s first link, else the plain text', () => {
    expect(
      droppedText(
        data({
          'text/uri-list': '# from a page\r\nvscode:mcp/install?%7B%7D\r\nhttps://x',
          'text/plain': 'ignored',
        }),
      ),
    ).toBe('vscode:mcp/install?%7B%7D');
    expect(droppedText(data({ 'text/plain': '  {"command":"npx"}\n' }))).toBe('{"command":"npx"}');
    expect(droppedText(data({}))).toBeNull();
    expect(droppedText(null)).toBeNull();
  });

  it('leaves drops into text fields to the field', () => {
    const el = (tagName: string, isContentEditable = false) =>
      ({ tagName, isContentEditable }) as unknown as EventTarget;
    expect(intoField(el('TEXTAREA'))).toBe(true);
    expect(intoField(el('INPUT'))).toBe(true);
    expect(intoField(el('DIV', true))).toBe(true);
    expect(intoField(el('DIV'))).toBe(false);
    expect(intoField(null)).toBe(false);
  });

  it('turns a dropped file into an install request or an error', () => {
    expect(fromDropped({ kind: 'bundle', path: '/x/a.mcpb' })).toEqual({
      kind: 'bundle',
      path: '/x/a.mcpb',
    });
    expect(fromDropped({ kind: 'text', text: '{}' })).toEqual({ kind: 'text', text: '{}' });
    expect(fromDropped({ kind: 'refused', message: '/x is a folder' })).toEqual({
      error: '/x is a folder',
    });
  });
});
