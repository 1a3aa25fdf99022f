import { describe, expect, it } from 'vitest';
import { DEFAULT_VIEW, hashFor, viewFromHash, VIEWS } from './views';

describe('viewFromHash', () => {
  it('maps every view hash back to its view', () => {
    for (const v of VIEWS) expect(viewFromHash(hashFor(v.id))).toBe(v.id);
  });

  it('accepts sub-paths, queries and missing slashes', () => {
    expect(viewFromHash('#/tools/github')).toBe('tools');
    expect(viewFromHash('#logs?server=x')).toBe('logs');
    expect(viewFromHash('#/Settings')).toBe('settings');
    expect(viewFromHash('#/gateway')).toBe('gateway');
  });

  it('falls back to the default for empty or unknown hashes', () => {
    expect(viewFromHash('')).toBe(DEFAULT_VIEW);
    expect(viewFromHash('#/nope')).toBe(DEFAULT_VIEW);
  });
});
