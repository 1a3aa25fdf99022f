import { describe, expect, it } from 'vitest';
import { sharedFailure, sharedFailureTitle } from './sharedFailure';
import type { Diagnosis, ServerView } from '../types';

const node: Diagnosis = {
  class: 'command-not-found',
  summary: 'npx not found — install Node.js',
  detail: '"npx" was not found…',
  error: 'x',
};
const uv: Diagnosis = {
  class: 'command-not-found',
  summary: 'uvx not found — install uv',
  detail: '"uvx" was not found…',
  error: 'x',
};
const sv = (
  name: string,
  diagnosis?: Diagnosis,
  state: 'failed' | 'connected' = 'failed',
): ServerView =>
  ({
    name,
    transport: 'stdio',
    enabled: true,
    source: 's',
    path: '/x',
    errors: [],
    warnings: [],
    shadowed: [],
    runtime: {
      name,
      status: state === 'failed' ? { state, error: 'x' } : { state },
      transport: 'stdio',
      toolCount: 0,
      deferred: false,
      warnings: [],
      restarts: 0,
      diagnosis,
    },
  }) as ServerView;

describe('a failure many servers share', () => {
  it('is the largest group of at least three alike', () => {
    const list = [
      sv('a', node),
      sv('b', uv),
      sv('c', node),
      sv('d', node),
      sv('e', uv),
      sv('f', undefined, 'connected'),
    ];
    const f = sharedFailure(list)!;
    expect(f.servers).toEqual(['a', 'c', 'd']);
    expect(sharedFailureTitle(f)).toBe('3 servers cannot start: npx not found — install Node.js');
  });

  it('is nothing when fewer fail alike', () => {
    expect(sharedFailure([sv('a', node), sv('b', node), sv('c', uv)])).toBeNull();
  });
});
