// "Use Switchboard in…" on the Gateway view: what a client's row says about
// its `switchboard` entry, which transports it can use and which one is
// offered first, and the sentences shown after Connect and Disconnect.

import type {
  ClientConnection,
  ConnectReport,
  DisconnectReport,
  GatewayState,
  KeptServer,
} from '../types';

/** True when the client's file holds an entry Switchboard wrote. */
export function isConnected(c: ClientConnection): boolean {
  return c.entry.kind === 'connected';
}

/**
 * The row's state in words. Only a connected row contains the word
 * "connected" (the absent state is "Not set up").
 */
export function connectionStateText(c: ClientConnection): string {
  if (c.problem) return c.problem;
  switch (c.entry.kind) {
    case 'absent':
      return 'Not set up';
    case 'foreign':
      return `Has its own server named switchboard: ${c.entry.runs}`;
    case 'connected': {
      const how =
        c.entry.transport === 'stdio' ? 'Connected (runs switchboard serve)' : 'Connected (HTTP)';
      return c.entry.enabled ? how : `${how}, turned off in ${c.label}`;
    }
  }
}

/** The transports a client can be connected with, HTTP first when it takes one. */
export function transportChoices(c: ClientConnection): ('http' | 'stdio')[] {
  return c.http === 'none' ? ['stdio'] : ['http', 'stdio'];
}

/**
 * Whether Connect starts on HTTP: the client takes an HTTP entry and either
 * the gateway listens now, or the client already uses HTTP.
 */
export function defaultHttp(c: ClientConnection, gateway: GatewayState | undefined): boolean {
  if (c.http === 'none') return false;
  if (gateway === 'listening') return true;
  return c.entry.kind === 'connected' && c.entry.transport !== 'stdio';
}

const list = (names: string[]) => names.join(', ');
const keptText = (kept: KeptServer[]) => kept.map((k) => `${k.name} (${k.reason})`).join(', ');

/** "Written to <path>; restart <label> to use it." plus what was turned off. */
export function connectResultText(r: ConnectReport): string {
  const parts: string[] = [];
  if (r.action === 'unchanged') parts.push(`${r.path} already held this entry; nothing changed.`);
  else parts.push(`Written to ${r.path}; restart ${r.label} to use it.`);
  if (r.disable.length)
    parts.push(`Turned off in ${r.label}: ${list(r.disable.map((d) => d.name))}.`);
  if (r.kept.length) parts.push(`Kept: ${keptText(r.kept)}.`);
  return parts.join(' ');
}

/** What Disconnect did, in one line. */
export function disconnectResultText(r: DisconnectReport): string {
  const parts: string[] = [];
  if (r.removedFile) parts.push(`Removed ${r.path}, which only held Switchboard's entry.`);
  else if (r.removedEntry) parts.push(`Removed Switchboard's entry from ${r.path}.`);
  else parts.push(`${r.path} held no Switchboard entry; nothing to remove.`);
  if (r.reEnabled.length) parts.push(`Turned back on: ${list(r.reEnabled)}.`);
  if (r.removedCopies.length)
    parts.push(`Removed the copies in Switchboard: ${list(r.removedCopies)}.`);
  if (r.kept.length) parts.push(`Kept: ${keptText(r.kept)}.`);
  parts.push(`Restart ${r.label} for it to take effect.`);
  return parts.join(' ');
}
