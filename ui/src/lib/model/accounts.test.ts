import { describe, expect, it } from 'vitest';
import { expiryText, issuerLabel, relativeTime, sortAccounts, untilNextExpiry } from './accounts';
import type { Account } from '../types';

const NOW = 1_800_000_000_000;
const s = (offsetSeconds: number) => NOW / 1000 + offsetSeconds;

const account = (over: Partial<Account> = {}): Account => ({
  server: 'linear',
  resource: 'https://mcp.linear.app/mcp',
  issuer: 'https://linear.app',
  clientId: 'ID',
  scopes: ['read'],
  signedInAt: s(-3600),
  expiresAt: s(3600),
  hasRefreshToken: true,
  usedBy: ['linear'],
  ...over,
});

describe('accounts', () => {
  it('says times relative to now', () => {
    expect(relativeTime(s(10), NOW)).toBe('just now');
    expect(relativeTime(s(-30), NOW)).toBe('just now');
    expect(relativeTime(s(58 * 60), NOW)).toBe('in 58 min');
    expect(relativeTime(s(-3 * 60), NOW)).toBe('3 min ago');
    expect(relativeTime(s(-5 * 3600), NOW)).toBe('5 h ago');
    expect(relativeTime(s(86400), NOW)).toBe('in 1 day');
    expect(relativeTime(s(-3 * 86400), NOW)).toBe('3 days ago');
  });

  it('says whether an expired access token renews itself', () => {
    expect(expiryText(account(), NOW)).toEqual({ text: 'in 1 h', expired: false });
    expect(expiryText(account({ expiresAt: s(-600) }), NOW)).toEqual({
      text: 'expired 10 min ago; renewed when next needed',
      expired: true,
    });
    expect(expiryText(account({ expiresAt: s(-600), hasRefreshToken: false }), NOW)).toEqual({
      text: 'expired 10 min ago; sign in again',
      expired: true,
    });
    expect(expiryText(account({ expiresAt: null }), NOW).text).toBe('no expiry given');
  });

  it('finds when the next token expires, ignoring expired and unknown ones', () => {
    const list = [
      account({ expiresAt: s(-5) }),
      account({ expiresAt: s(120) }),
      account({ expiresAt: s(60) }),
      account({ expiresAt: null }),
    ];
    expect(untilNextExpiry(list, NOW)).toBe(60_000);
    expect(untilNextExpiry([account({ expiresAt: null })], NOW)).toBeNull();
  });

  it('sorts by server and shows the issuer by host', () => {
    expect(
      sortAccounts([account({ server: 'b' }), account({ server: 'a' })]).map((a) => a.server),
    ).toEqual(['a', 'b']);
    expect(issuerLabel('http://127.0.0.1:4123')).toBe('127.0.0.1:4123');
    expect(issuerLabel(null)).toBe('unknown');
    expect(issuerLabel('not a url')).toBe('not a url');
  });
});
