import { describe, expect, it } from 'vitest';
import { usableLanguage } from './uplot';

describe('usableLanguage', () => {
  it('keeps a tag Intl takes and replaces one it refuses', () => {
    expect(usableLanguage('de-DE')).toBe('de-DE');
    expect(usableLanguage('C')).toBe('en-US');
    expect(usableLanguage('')).toBe('en-US');
    expect(usableLanguage(undefined)).toBe('en-US');
    expect(usableLanguage('en_US.UTF-8')).toBe('en');
  });
});
