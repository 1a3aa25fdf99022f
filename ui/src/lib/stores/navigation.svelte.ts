// Which view is showing, kept in sync with the location hash so the back
// button and deep links work.

import { hashFor, subFromHash, viewFromHash, type ViewId } from '../views';

class Navigation {
  current = $state<ViewId>(viewFromHash(location.hash));
  /** The item shown in detail (`#/servers/<name>`), if any. */
  sub = $state<string | null>(subFromHash(location.hash));

  constructor() {
    window.addEventListener('hashchange', () => {
      this.current = viewFromHash(location.hash);
      this.sub = subFromHash(location.hash);
    });
  }

  go(view: ViewId, sub?: string | null) {
    location.hash = hashFor(view, sub);
  }

  /**
   * A server's Edit form asked for from elsewhere (a sign-in that needs an
   * OAuth app): the Servers view opens it, at `section`, and clears this.
   */
  editRequest = $state<{ server: string; section?: 'oauth' } | null>(null);

  editServer(server: string, section?: 'oauth') {
    this.editRequest = { server, section };
    this.go('servers', server);
  }

  /**
   * A registry server asked for from elsewhere (a `switchboard://install?registry=…`
   * link pasted in the Add dialog): the Catalog opens it and clears this.
   */
  catalogRequest = $state<{ name: string; version: string | null } | null>(null);

  openInCatalog(name: string, version: string | null) {
    this.catalogRequest = { name, version };
    this.go('catalog');
  }

  /**
   * Something to install that arrived from outside the Add dialog: a
   * `switchboard://` link the desktop handed over, or a link, a server entry
   * or a `.mcpb` file dropped on the window. The Servers view opens the
   * matching form (filled, nothing written) and clears this.
   */
  installRequest = $state.raw<InstallRequest | null>(null);

  install(req: InstallRequest) {
    this.installRequest = req;
    this.go('servers');
  }
}

/** See `Navigation.install`: link or entry text, or the path of a `.mcpb` file. */
export type InstallRequest =
  | { kind: 'text'; text: string }
  | { kind: 'bundle'; path: string; update?: { server: string; source: string } };

export const navigation = new Navigation();
