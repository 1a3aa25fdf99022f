import { describe, expect, it } from 'vitest';
import { filterTools } from './tools';
import type { ToolEntry } from '../types';

const tool = (server: string, name: string, description?: string): ToolEntry => ({
  name: `mcp_${server}_${name}`,
  server,
  tool: name,
  description,
  inputSchema: { type: 'object' },
  deferred: false,
});

describe('filterTools', () => {
  const tools = [
    tool('github', 'create_issue', 'Opens an Issue'),
    tool('files', 'read', 'Reads a file'),
    tool('notes', 'search'),
  ];

  it('matches the sanitized name, the raw name, the server and the description, ignoring case', () => {
    expect(filterTools(tools, 'MCP_FILES').map((t) => t.tool)).toEqual(['read']);
    expect(filterTools(tools, 'create_').map((t) => t.tool)).toEqual(['create_issue']);
    expect(filterTools(tools, 'notes').map((t) => t.tool)).toEqual(['search']);
    expect(filterTools(tools, 'an issue').map((t) => t.tool)).toEqual(['create_issue']);
    expect(filterTools(tools, '  ')).toBe(tools);
  });

  it('never matches across two fields', () => {
    // "read" + "files" would only match if the fields ran together.
    expect(filterTools(tools, 'readfiles')).toEqual([]);
  });

  it('searches a new list, not the text of an earlier one', () => {
    expect(filterTools(tools, 'read')).toHaveLength(1);
    const next = [tool('files', 'write', 'Writes a file')];
    expect(filterTools(next, 'read')).toEqual([]);
    expect(filterTools(next, 'write')).toHaveLength(1);
  });
});
