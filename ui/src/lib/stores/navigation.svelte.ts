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
}

export const navigation = new Navigation();
