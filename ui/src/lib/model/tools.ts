// Searching tools and marking the ones whose sanitized names collided.

import type { ToolEntry, ToolIndex } from '../types';

export function filterTools(tools: ToolEntry[], query: string): ToolEntry[] {
  const q = query.trim().toLowerCase();
  if (!q) return tools;
  return tools.filter(
    (t) =>
      t.name.toLowerCase().includes(q) ||
      t.tool.toLowerCase().includes(q) ||
      t.server.toLowerCase().includes(q) ||
      (t.description ?? '').toLowerCase().includes(q),
  );
}

/** Every final name that took part in a collision. */
export function collidedNames(index: ToolIndex): Set<string> {
  return new Set(index.collisions.flatMap((c) => c.resolved));
}
