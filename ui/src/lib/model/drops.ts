// What a drop on the window asks to install (issue 31). Files arrive from
// the Rust side (`dropped` events: a `.mcpb`, or a text file's content);
// text and links dragged from a browser or an editor arrive as DOM drops.

import type { Dropped } from '../types';
import type { InstallRequest } from '../stores/navigation.svelte';

/** Only what `getData` needs, so tests need no real DataTransfer. */
export type DropData = { getData(type: string): string };

/**
 * The link or text of a DOM drop: a `text/uri-list`'s first link (its `#`
 * lines are comments), else the plain text; `null` when there is none.
 */
export function droppedText(data: DropData | null): string | null {
  if (!data) return null;
  const uris = data
    .getData('text/uri-list')
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const text = uris[0] ?? data.getData('text/plain').trim();
  return text ? text : null;
}

/** Whether a DOM drop lands where text is typed (the field takes it, not us). */
export function intoField(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  return !!el && (el.tagName === 'INPUT' || el.tagName === 'TEXTAREA' || el.isContentEditable);
}

/** A file dropped on the window, as an install request or an error to show. */
export function fromDropped(item: Dropped): InstallRequest | { error: string } {
  switch (item.kind) {
    case 'bundle':
      return { kind: 'bundle', path: item.path };
    case 'text':
      return { kind: 'text', text: item.text };
    case 'refused':
      return { error: item.message };
  }
}
