// uPlot, loaded when a plot is first drawn (it stays out of the first
// screen's bundle). uPlot builds a number format for `navigator.language`
// as it loads, and the webview reports the system's locale as it is: under
// LANG=C that is "C", which Intl refuses, and the module would throw. A
// language Intl refuses is replaced by one it takes first.

import type uPlot from 'uplot';

type UPlot = typeof uPlot;

let loading: Promise<UPlot> | null = null;

/** `lang` when Intl takes it, else the closest tag it does, else `en-US`. */
export function usableLanguage(lang: string | undefined): string {
  const tries = [lang, lang?.split(/[._@]/)[0]?.replace('_', '-')];
  for (const t of tries) {
    if (!t) continue;
    try {
      new Intl.NumberFormat(t);
      return t;
    } catch {
      // not a tag Intl takes
    }
  }
  return 'en-US';
}

export function loadUPlot(): Promise<UPlot> {
  if (!loading) {
    const lang = usableLanguage(navigator.language);
    if (lang !== navigator.language) {
      Object.defineProperty(navigator, 'language', { value: lang, configurable: true });
    }
    loading = import('uplot').then((m) => m.default);
  }
  return loading;
}
