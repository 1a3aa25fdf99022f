// The signed-in accounts view (issue 17): how each stored sign-in is
// described, in words and relative times. Nothing secret ever reaches the UI:
// an Account carries no token or client secret.

import type { Account } from '../types';

const MINUTE = 60;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** "in 58 min", "3 h ago", "just now": `at` in seconds since 1970, `nowMs` in ms. */
export function relativeTime(at: number, nowMs: number): string {
  const delta = at - Math.floor(nowMs / 1000);
  const d = Math.abs(delta);
  if (d < 45) return 'just now';
  let text: string;
  if (d < HOUR) text = `${Math.max(1, Math.round(d / MINUTE))} min`;
  else if (d < DAY) text = `${Math.round(d / HOUR)} h`;
  else {
    const days = Math.round(d / DAY);
    text = `${days} ${days === 1 ? 'day' : 'days'}`;
  }
  return delta > 0 ? `in ${text}` : `${text} ago`;
}

/** A date and time for a tooltip. */
export function absoluteTime(at: number): string {
  return new Date(at * 1000).toLocaleString();
}

/** What the access token's expiry means for the user. */
export function expiryText(a: Account, nowMs: number): { text: string; expired: boolean } {
  if (a.expiresAt === null) return { text: 'no expiry given', expired: false };
  if (a.expiresAt * 1000 > nowMs) return { text: relativeTime(a.expiresAt, nowMs), expired: false };
  const ago = relativeTime(a.expiresAt, nowMs);
  const text = a.hasRefreshToken
    ? `expired ${ago === 'just now' ? 'just now' : ago}; renewed when next needed`
    : `expired ${ago}; sign in again`;
  return { text, expired: true };
}

/** Milliseconds until the next access token in `accounts` expires (the view lists again then); null if none will. */
export function untilNextExpiry(accounts: Account[], nowMs: number): number | null {
  const next = accounts
    .map((a) => a.expiresAt)
    .filter((e): e is number => e !== null && e * 1000 > nowMs)
    .sort((x, y) => x - y)[0];
  return next === undefined ? null : next * 1000 - nowMs;
}

export function sortAccounts(accounts: Account[]): Account[] {
  return [...accounts].sort((a, b) => a.server.localeCompare(b.server));
}

/** The authorization server as a host name, the whole issuer in a tooltip. */
export function issuerLabel(issuer: string | null): string {
  if (!issuer) return 'unknown';
  try {
    return new URL(issuer).host || issuer;
  } catch {
    return issuer;
  }
}
