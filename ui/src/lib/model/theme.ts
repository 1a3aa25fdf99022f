// The theme chosen in Settings: follow the system, or always light or dark.
// Kept in the webview's storage (it is about this window only) and applied
// as `data-theme` on the root element, which app.css reads.

export type Theme = 'system' | 'light' | 'dark';

export const THEME_KEY = 'switchboard.theme';

export function readTheme(storage: Pick<Storage, 'getItem'>): Theme {
  const t = storage.getItem(THEME_KEY);
  return t === 'light' || t === 'dark' ? t : 'system';
}

export function applyTheme(
  theme: Theme,
  root: HTMLElement,
  storage: Pick<Storage, 'setItem' | 'removeItem'>,
) {
  if (theme === 'system') {
    delete root.dataset.theme;
    storage.removeItem(THEME_KEY);
  } else {
    root.dataset.theme = theme;
    storage.setItem(THEME_KEY, theme);
  }
}
