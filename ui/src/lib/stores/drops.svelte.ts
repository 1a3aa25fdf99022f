// Follows drops on the window (issue 31): a `.mcpb` opens its install form,
// a link, server entry or text file opens the Add dialog with it, filled;
// nothing is written until the person clicks Install.

import { onEngineEvent } from '../api';
import { droppedText, fromDropped, intoField } from '../model/drops';
import { engine } from './engine.svelte';
import { navigation } from './navigation.svelte';

/** Starts following drops; returns the function that stops it. */
export function followDrops(): () => void {
  let gone = false;
  let unlisten: (() => void) | null = null;
  void onEngineEvent((ev) => {
    if (ev.type !== 'dropped') return;
    const got = fromDropped(ev.item);
    if ('error' in got) engine.notice = { kind: 'error', text: got.error };
    else navigation.install(got);
  }).then((u) => (gone ? u() : (unlisten = u)));

  const over = (e: DragEvent) => {
    if (!intoField(e.target)) e.preventDefault();
  };
  const drop = (e: DragEvent) => {
    if (intoField(e.target)) return;
    e.preventDefault();
    const text = droppedText(e.dataTransfer);
    if (text) navigation.install({ kind: 'text', text });
  };
  window.addEventListener('dragover', over);
  window.addEventListener('drop', drop);
  return () => {
    gone = true;
    unlisten?.();
    window.removeEventListener('dragover', over);
    window.removeEventListener('drop', drop);
  };
}
