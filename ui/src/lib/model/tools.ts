// Searching tools and marking the ones whose sanitized names collided.

import type { ToolEntry, ToolIndex } from '../types';

// Per tool list, each tool's searchable text in lower case, made once: a
// keystroke in the search box then only scans (10,000 tools in ~1 ms).
const haystacks = new WeakMap<ToolEntry[], string[]>();

function haystacksOf(tools: ToolEntry[]): string[] {
  let h = haystacks.get(tools);
  if (!h) {
    h = tools.map((t) => [t.name, t.tool, t.server, t.description ?? ''].join('\n').toLowerCase());
    haystacks.set(tools, h);
  }
  return h;
}

export function filterTools(tools: ToolEntry[], query: string): ToolEntry[] {
  const q = query.trim().toLowerCase();
  if (!q) return tools;
  const h = haystacksOf(tools);
  return tools.filter((_, i) => h[i].includes(q));
}

/** Every final name that took part in a collision. */
export function collidedNames(index: ToolIndex): Set<string> {
  return new Set(index.collisions.flatMap((c) => c.resolved));
}
