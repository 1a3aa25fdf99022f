// What the Gateway view and the Tools view show about the app's HTTP gateway:
// its state in words, the warnings about tool counts and
// name lengths, port validation, and which tools the gateway offers once the
// switches (saved, or just flipped and still being saved) are applied.

import type { GatewaySession, GatewaySettings, GatewayStatus } from '../types';
import type { StatusInfo } from './status';

/** Tool counts above which some clients refuse or cut the list (mirrors the engine's `CLIENT_LIMITS`). */
export const CLIENT_LIMITS = [40, 100, 128] as const;
/** Longest tool name most clients accept (mirrors the engine's `NAME_LIMIT`). */
export const NAME_LIMIT = 64;
export const MIN_PORT = 1024;
export const MAX_PORT = 65535;

/** The state as a word, so it never relies on colour alone. */
/** The gateway's state as the badge servers use (same colours for the same meaning). */
export function stateBadge(status: GatewayStatus): StatusInfo {
  const kind = (
    { listening: 'connected', starting: 'connecting', off: 'disabled', failed: 'failed' } as const
  )[status.state];
  return { kind, label: stateLabel(status.state), detail: status.message };
}

export function stateLabel(state: GatewayStatus['state']): string {
  switch (state) {
    case 'listening':
      return 'Listening';
    case 'starting':
      return 'Starting…';
    case 'off':
      return 'Off';
    case 'failed':
      return 'Not listening';
  }
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** "57 tools", "1 tool". */
export function toolCountText(n: number): string {
  return plural(n, 'tool');
}

/**
 * The warning when the gateway offers more tools than some clients take, or
 * null. `overLimits` is what the engine found exceeded (empty in tool search
 * mode, where clients list two tools).
 */
export function limitWarning(s: Pick<GatewayStatus, 'toolCount' | 'overLimits'>): string | null {
  if (s.overLimits.length === 0) return null;
  const limits = [...s.overLimits].sort((a, b) => b - a);
  const [top, ...lower] = limits;
  const others = lower.length ? `, others only ${lower.join(' or ')}` : '';
  return (
    `The gateway offers ${toolCountText(s.toolCount)}, more than ${top}. ` +
    `Some clients use only the first ${top} tools${others}, and never see the rest. ` +
    'Switch off the tools you do not need, or turn on tool search.'
  );
}

/** The warning about names some clients reject, or null. */
export function longNamesWarning(names: readonly string[]): string | null {
  if (names.length === 0) return null;
  return names.length === 1
    ? `1 tool name is longer than ${NAME_LIMIT} characters; some clients reject such a tool:`
    : `${names.length} tool names are longer than ${NAME_LIMIT} characters; some clients reject such tools:`;
}

/** Who a connected client's session is for. */
export function sessionScope(s: Pick<GatewaySession, 'server'>): string {
  return s.server === null ? 'all servers' : `only ${s.server}`;
}

export type PortCheck = { ok: true; port: number | undefined } | { ok: false; error: string };

/**
 * The port field as typed: empty means the default (`port` left unset),
 * otherwise a whole number from 1024 to 65535.
 */
export function checkPort(value: number | string | null | undefined): PortCheck {
  if (value === null || value === undefined || (typeof value === 'string' && value.trim() === ''))
    return { ok: true, port: undefined };
  const n = typeof value === 'number' ? value : Number(value.trim());
  if (!Number.isInteger(n) || n < MIN_PORT || n > MAX_PORT) {
    return { ok: false, error: `The port must be a whole number from ${MIN_PORT} to ${MAX_PORT}.` };
  }
  return { ok: true, port: n };
}

/** The settings to save: the saved ones with `change` on top, with an unset port left out. */
export function settingsWith(saved: GatewaySettings, change: GatewaySettings): GatewaySettings {
  const next: GatewaySettings = { ...saved, ...change };
  if ('port' in change && change.port === undefined) delete next.port;
  return next;
}

const toolKey = (server: string, tool: string) => `${server}\u0000${tool}`;

/** Switches flipped in the UI whose save has not returned yet. */
export interface PendingSwitches {
  /** `toolKey(server, rawTool)` → offered. */
  tools: Record<string, boolean>;
  /** server → left out of the gateway. */
  servers: Record<string, boolean>;
}

export function emptyPending(): PendingSwitches {
  return { tools: {}, servers: {} };
}

export function pendingKey(server: string, tool: string): string {
  return toolKey(server, tool);
}

/** Every switch in force, looked up in constant time (the Tools list may hold 10,000 tools). */
export interface Switches {
  offTools: Set<string>;
  excluded: Set<string>;
}

export function switchesOf(
  status: Pick<GatewayStatus, 'disabledTools' | 'excluded'> | null,
  pending: PendingSwitches = emptyPending(),
): Switches {
  const offTools = new Set<string>();
  for (const [server, tools] of Object.entries(status?.disabledTools ?? {}))
    for (const t of tools) offTools.add(toolKey(server, t));
  for (const [key, on] of Object.entries(pending.tools)) {
    if (on) offTools.delete(key);
    else offTools.add(key);
  }
  const excluded = new Set(status?.excluded ?? []);
  for (const [server, out] of Object.entries(pending.servers)) {
    if (out) excluded.add(server);
    else excluded.delete(server);
  }
  return { offTools, excluded };
}

/**
 * Whether the gateway offers a tool: `on`; `off` when the tool itself is
 * switched off; `server-off` when its whole server is left out.
 */
export type ToolGatewayState = 'on' | 'off' | 'server-off';

export function toolState(sw: Switches, server: string, tool: string): ToolGatewayState {
  if (sw.excluded.has(server)) return 'server-off';
  return sw.offTools.has(toolKey(server, tool)) ? 'off' : 'on';
}

/** The status with one tool switched, as the engine will report it once saved. */
export function withToolSwitch<S extends Pick<GatewayStatus, 'disabledTools'>>(
  status: S,
  server: string,
  tool: string,
  on: boolean,
): S {
  const current = status.disabledTools[server] ?? [];
  const rest = current.filter((t) => t !== tool);
  const list = on ? rest : [...rest, tool];
  const disabledTools = { ...status.disabledTools };
  if (list.length) disabledTools[server] = list;
  else delete disabledTools[server];
  return { ...status, disabledTools };
}

/** The status with a server left out of the gateway (or served again). */
export function withExcluded<S extends Pick<GatewayStatus, 'excluded'>>(
  status: S,
  server: string,
  excluded: boolean,
): S {
  const rest = status.excluded.filter((s) => s !== server);
  return { ...status, excluded: excluded ? [...rest, server] : rest };
}
