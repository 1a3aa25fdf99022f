// The one place that talks to the Rust side: every `invoke` and `listen`
// goes through here, so commands, their argument shapes and error handling
// live in one file and tests can mock a single module.

import { invoke, isTauri, type InvokeArgs } from '@tauri-apps/api/core';
import { listen, type EventCallback, type UnlistenFn } from '@tauri-apps/api/event';
import type { AppInfo, CommandErrorPayload } from './types';

/** A failed command, with the `code` the Rust side chose and the command name. */
export class CommandError extends Error {
  readonly code: string;
  readonly command: string;

  constructor(command: string, code: string, message: string) {
    super(message);
    this.name = 'CommandError';
    this.code = code;
    this.command = command;
  }
}

function isPayload(value: unknown): value is CommandErrorPayload {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as CommandErrorPayload).code === 'string' &&
    typeof (value as CommandErrorPayload).message === 'string'
  );
}

/** Turns whatever a rejected `invoke` carried into a `CommandError`. */
export function toCommandError(command: string, raw: unknown): CommandError {
  if (raw instanceof CommandError) return raw;
  if (isPayload(raw)) return new CommandError(command, raw.code, raw.message);
  if (typeof raw === 'string') return new CommandError(command, 'unknown', raw);
  if (raw instanceof Error) return new CommandError(command, 'unknown', raw.message);
  return new CommandError(command, 'unknown', `${command} failed: ${JSON.stringify(raw)}`);
}

/** True inside the desktop app; false in a plain browser (`npm run dev` alone). */
export function inApp(): boolean {
  return isTauri();
}

async function call<T>(command: string, args?: InvokeArgs): Promise<T> {
  if (!inApp()) {
    throw new CommandError(
      command,
      'not_in_app',
      'The Switchboard engine is only reachable inside the desktop app.',
    );
  }
  try {
    return await invoke<T>(command, args);
  } catch (raw) {
    throw toCommandError(command, raw);
  }
}

/** Subscribes to one event stream from the Rust side; resolves to its unsubscribe. */
export async function subscribe<T>(event: string, handler: EventCallback<T>): Promise<UnlistenFn> {
  if (!inApp()) return () => {};
  return listen<T>(event, handler);
}

export const api = {
  appInfo: (): Promise<AppInfo> => call<AppInfo>('app_info'),
};
