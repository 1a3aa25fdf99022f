// What is done when a server's answer looks suspicious (the checks on what
// comes back: tool results, resources, prompts), as the server's page
// offers it.
import type { ResultMode } from '../types';

export const RESULT_MODES: { value: ResultMode; label: string; help: string }[] = [
  {
    value: 'log',
    label: 'Log only',
    help: 'The answer is passed on as it came; what was found is in Activity.',
  },
  {
    value: 'warn',
    label: 'Warn (default)',
    help: 'The answer is passed on with a note before it, and Switchboard tells you.',
  },
  {
    value: 'block',
    label: 'Block',
    help: 'The answer is refused: the client gets an error saying what was found and how to allow it.',
  },
];

/** `server`'s mode in what `result_checks` answered (absent: warn). */
export function modeOf(
  checks: Partial<Record<string, ResultMode>> | null,
  server: string,
): ResultMode {
  return checks?.[server] ?? 'warn';
}

/** What a notice says once the mode is saved. */
export function savedText(server: string, mode: ResultMode): string {
  const what: Record<ResultMode, string> = {
    log: 'are passed on and only recorded in Activity',
    warn: 'are passed on with a note',
    block: 'are refused',
  };
  return `Suspicious answers from "${server}" ${what[mode]}`;
}
