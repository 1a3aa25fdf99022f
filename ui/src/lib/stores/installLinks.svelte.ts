// `switchboard://` links opened from the desktop (a browser, xdg-open): the
// Rust side keeps them until they are taken (src-tauri/src/deep_link.rs).
// At start this takes what waits (a link that started the app arrives before
// the UI loads), then takes again at each `install-links` event. Taking
// empties the queue on the Rust side, so a link is opened once.

import { api, onEngineEvent } from '../api';
import { navigation } from './navigation.svelte';

let started = false;

/**
 * Follow the desktop's links from now on: each opens the Add dialog with
 * the link read (nothing is written before Install). Several links taken
 * at once (clicked before the window loaded): the latest is shown.
 */
export async function followInstallLinks(
  open: (url: string) => void = (text) => navigation.install({ kind: 'text', text }),
): Promise<void> {
  if (started) return;
  started = true;
  const take = async () => {
    try {
      const links = await api.takeInstallLinks();
      const latest = links.at(-1);
      if (latest !== undefined) open(latest);
    } catch (e) {
      // Outside the desktop app there are no links to take.
      console.warn('switchboard: could not take the links opened from the desktop', e);
    }
  };
  // Listen first: a link arriving between the two is then taken by one of them.
  await onEngineEvent((ev) => {
    if (ev.type === 'install-links') void take();
  });
  await take();
}
