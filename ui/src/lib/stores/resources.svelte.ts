// What the Resources & prompts view remembers while the user is elsewhere:
// which resources this window subscribed to (the engine keeps them across
// reconnects but does not list them), the open tab, and per server the
// resource and prompt last picked.

import { api } from '../api';
import { resourceKey } from '../model/resources';

export type BrowserTab = 'resources' | 'prompts';

/** A listed resource (by uri) or a template (by uriTemplate) being filled in. */
export type ResourcePick =
  { kind: 'resource'; uri: string } | { kind: 'template'; template: string };

class ResourceBrowser {
  tab = $state<BrowserTab>('resources');
  /** The server last browsed: the nav link (`#/resources`) opens it again. */
  server = $state<string | null>(null);
  subscribed = $state<Record<string, true>>({});
  picked = $state<Record<string, ResourcePick>>({});
  prompt = $state<Record<string, string>>({});

  isSubscribed(server: string, uri: string): boolean {
    return this.subscribed[resourceKey(server, uri)] === true;
  }

  /** Throws the command's error; the view shows it. */
  async subscribe(server: string, uri: string) {
    await api.subscribeResource(server, uri);
    this.subscribed[resourceKey(server, uri)] = true;
  }

  async unsubscribe(server: string, uri: string) {
    // Forgotten locally even if the server is gone: the engine forgot it too.
    delete this.subscribed[resourceKey(server, uri)];
    await api.unsubscribeResource(server, uri);
  }
}

export const resourceBrowser = new ResourceBrowser();
