// The Settings form for the defaults of servers that set none of their own:
// seconds and counts as the user types them, to and from the engine's
// `ServerDefaults` (milliseconds). Ranges are the engine's to check: it
// refuses a value with a sentence naming the field.
import type { ServerDefaults } from '../types';

export interface DefaultsForm {
  timeout: string;
  healthInterval: string;
  restarts: string;
  firstWait: string;
  longestWait: string;
}

const seconds = (ms: number) => String(ms / 1000);

export function toForm(d: ServerDefaults): DefaultsForm {
  return {
    timeout: seconds(d.timeoutMs),
    healthInterval: seconds(d.healthIntervalMs),
    restarts: String(d.restartPolicy.maxRestartAttempts),
    firstWait: seconds(d.restartPolicy.initialDelayMs),
    longestWait: seconds(d.restartPolicy.maxDelayMs),
  };
}

const LABELS: Record<keyof DefaultsForm, string> = {
  timeout: 'Timeout',
  healthInterval: 'Health check interval',
  restarts: 'Restarts',
  firstWait: 'First restart after',
  longestWait: 'Longest wait between restarts',
};

export type Parsed =
  { ok: true; defaults: ServerDefaults } | { ok: false; field: keyof DefaultsForm; error: string };

/** The form as `ServerDefaults`, keeping what the form does not show from `base`. */
export function fromForm(f: DefaultsForm, base: ServerDefaults): Parsed {
  const num = (field: keyof DefaultsForm, whole: boolean): number | string => {
    const text = f[field].trim();
    const n = Number(text);
    if (text === '' || !Number.isFinite(n) || n < 0)
      return `${LABELS[field]}: "${text}" is not a number of ${whole ? 'times' : 'seconds'}`;
    if (whole && !Number.isInteger(n)) return `${LABELS[field]}: give a whole number`;
    return n;
  };
  const values: Partial<Record<keyof DefaultsForm, number>> = {};
  for (const [field, whole] of [
    ['timeout', false],
    ['healthInterval', false],
    ['restarts', true],
    ['firstWait', false],
    ['longestWait', false],
  ] as const) {
    const v = num(field, whole);
    if (typeof v === 'string') return { ok: false, field, error: v };
    values[field] = v;
  }
  const ms = (s: number) => Math.round(s * 1000);
  return {
    ok: true,
    defaults: {
      timeoutMs: ms(values.timeout!),
      healthIntervalMs: ms(values.healthInterval!),
      restartPolicy: {
        ...base.restartPolicy,
        maxRestartAttempts: values.restarts!,
        initialDelayMs: ms(values.firstWait!),
        maxDelayMs: ms(values.longestWait!),
      },
    },
  };
}
