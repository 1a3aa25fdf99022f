import { describe, expect, it } from 'vitest';
import { fromForm, toForm } from './serverDefaults';
import type { ServerDefaults } from '../types';

const base: ServerDefaults = {
  timeoutMs: 30_000,
  healthIntervalMs: 15_000,
  restartPolicy: {
    initialDelayMs: 500,
    maxDelayMs: 15_000,
    backoffMultiplier: 2,
    maxRestartAttempts: 5,
  },
};

describe('server defaults form', () => {
  it('shows seconds and counts, and reads them back as milliseconds', () => {
    const f = toForm(base);
    expect(f).toEqual({
      timeout: '30',
      healthInterval: '15',
      restarts: '5',
      firstWait: '0.5',
      longestWait: '15',
    });
    expect(fromForm(f, base)).toEqual({ ok: true, defaults: base });
  });

  it('keeps the backoff multiplier the form does not show', () => {
    const r = fromForm(
      { ...toForm(base), timeout: '90', restarts: '2' },
      { ...base, restartPolicy: { ...base.restartPolicy, backoffMultiplier: 3 } },
    );
    expect(r).toEqual({
      ok: true,
      defaults: {
        ...base,
        timeoutMs: 90_000,
        restartPolicy: { ...base.restartPolicy, backoffMultiplier: 3, maxRestartAttempts: 2 },
      },
    });
  });

  it('names the field that is not a number', () => {
    expect(fromForm({ ...toForm(base), healthInterval: 'soon' }, base)).toEqual({
      ok: false,
      field: 'healthInterval',
      error: 'Health check interval: "soon" is not a number of seconds',
    });
    expect(fromForm({ ...toForm(base), restarts: '1.5' }, base)).toMatchObject({
      ok: false,
      field: 'restarts',
    });
  });
});
