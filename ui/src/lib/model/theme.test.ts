import { describe, expect, it } from 'vitest';
import { applyTheme, readTheme, THEME_KEY } from './theme';

function memory() {
  const m = new Map<string, string>();
  return {
    getItem: (k: string) => m.get(k) ?? null,
    setItem: (k: string, v: string) => void m.set(k, v),
    removeItem: (k: string) => void m.delete(k),
    m,
  };
}

describe('theme', () => {
  it('is kept and applied as data-theme; "system" removes both', () => {
    const s = memory();
    const root = { dataset: {} as Record<string, string> } as unknown as HTMLElement;
    expect(readTheme(s)).toBe('system');
    applyTheme('dark', root, s);
    expect(root.dataset.theme).toBe('dark');
    expect(readTheme(s)).toBe('dark');
    applyTheme('system', root, s);
    expect(root.dataset.theme).toBeUndefined();
    expect(s.m.has(THEME_KEY)).toBe(false);
    s.setItem(THEME_KEY, 'purple');
    expect(readTheme(s)).toBe('system');
  });
});
