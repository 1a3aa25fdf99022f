// Which view is showing, kept in sync with the location hash so the back
// button and deep links work.

import { hashFor, viewFromHash, type ViewId } from '../views';

class Navigation {
  current = $state<ViewId>(viewFromHash(location.hash));

  constructor() {
    window.addEventListener('hashchange', () => {
      this.current = viewFromHash(location.hash);
    });
  }

  go(view: ViewId) {
    if (view === this.current) return;
    location.hash = hashFor(view);
  }
}

export const navigation = new Navigation();
