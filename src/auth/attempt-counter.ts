import { createHash } from 'node:crypto';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import { DomainError } from '../errors.ts';

/**
 * The key a client address is counted under: IPv4 as is, IPv6 by its /64, since one subscriber
 * usually holds a whole /64 and could otherwise take a fresh address for every guess.
 */
export function clientKey(address: string): string {
  if (isIP(address) !== 6) return address;
  try {
    const ip = ipaddr.IPv6.parse(address);
    if (ip.isIPv4MappedAddress()) return ip.toIPv4Address().toString();
    return `${ip.parts
      .slice(0, 4)
      .map((p) => p.toString(16))
      .join(':')}::/64`;
  } catch {
    return address;
  }
}

export interface Count {
  /** Attempts in the current window, this one included. */
  count: number;
  /** Seconds until the window ends, at least 1. */
  resetSeconds: number;
}

export interface AttemptCounter {
  /** Counts one attempt under `key` in a fixed window. Never throws: Redis trouble falls back to this process's count. */
  hit(key: string): Promise<Count>;
}

// INCR and the window's expiry in one step, so a crash between them cannot leave a counter that never expires.
const HIT_SCRIPT = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return {n, redis.call('PTTL', KEYS[1])}
`;

/**
 * Fixed-window counters for attempts that guard credentials (logins, failed authentications). With
 * Redis they are shared by every API process; when Redis is absent, not connected or failing, each
 * process counts on its own — a limit that fails closed per process rather than not at all.
 */
export function createAttemptCounter(opts: {
  windowMs: number;
  redis?: Redis;
  prefix: string;
  onRedisError?: (e: unknown) => void;
}): AttemptCounter {
  const local = new LRUCache<string, { count: number; resetAt: number }>({ max: 100_000, ttl: opts.windowMs });

  function hitLocally(key: string): Count {
    const now = Date.now();
    const entry = local.get(key);
    const current = entry && entry.resetAt > now ? entry : { count: 0, resetAt: now + opts.windowMs };
    current.count += 1;
    local.set(key, current, { ttl: current.resetAt - now });
    return { count: current.count, resetSeconds: Math.max(1, Math.ceil((current.resetAt - now) / 1000)) };
  }

  return {
    async hit(key) {
      const redis = opts.redis;
      if (redis && redis.status === 'ready') {
        try {
          const [count, ttl] = (await redis.eval(HIT_SCRIPT, 1, `${opts.prefix}${key}`, opts.windowMs)) as [number, number];
          return { count, resetSeconds: Math.max(1, Math.ceil((ttl > 0 ? ttl : opts.windowMs) / 1000)) };
        } catch (e) {
          opts.onRedisError?.(e);
        }
      }
      return hitLocally(key);
    },
  };
}

export const tooManyAttempts = (detail: string, retryAfterSeconds: number) =>
  new DomainError('rate_limited', `${detail} Retry in ${retryAfterSeconds} s.`, { retryAfterSeconds });

/**
 * A per-address budget of failures (unknown keys, bad tokens, unknown inbound addresses). Once an
 * address has spent it, this process refuses it at once until the window ends, without asking
 * Redis or the database again; the count itself is shared through the counter.
 */
export function createFailureBudget(counter: AttemptCounter, limit: number) {
  const blocked = new LRUCache<string, number>({ max: 100_000, ttl: 3_600_000 });
  return {
    /** Seconds the address must wait, or 0. */
    waitFor(address: string): number {
      const key = clientKey(address);
      const until = blocked.get(key);
      if (!until) return 0;
      const left = Math.ceil((until - Date.now()) / 1000);
      if (left <= 0) blocked.delete(key);
      return Math.max(0, left);
    },
    async fail(address: string): Promise<void> {
      const key = clientKey(address);
      const { count, resetSeconds } = await counter.hit(key);
      if (count >= limit) blocked.set(key, Date.now() + resetSeconds * 1000, { ttl: resetSeconds * 1000 });
    },
  };
}

export type FailureBudget = ReturnType<typeof createFailureBudget>;

export interface LoginGuard {
  /** Counts a sign-in attempt for the client address and for the account; throws rate_limited over either limit. */
  attempt(address: string, email: string): Promise<void>;
}

/**
 * Sign-in attempts are limited per client address and per account (email), whatever credentials
 * or headers come with the request, so neither a spread of addresses against one account nor one
 * address against many accounts can guess passwords at speed. Emails are counted by hash.
 */
export function createLoginGuard(deps: {
  byAddress: AttemptCounter;
  byAccount: AttemptCounter;
  perAddress: number;
  perAccount: number;
}): LoginGuard {
  return {
    async attempt(address, email) {
      const account = createHash('sha256').update(email.toLowerCase()).digest('hex');
      const [a, b] = await Promise.all([deps.byAddress.hit(clientKey(address)), deps.byAccount.hit(account)]);
      if (a.count > deps.perAddress || b.count > deps.perAccount) {
        const wait = Math.max(a.count > deps.perAddress ? a.resetSeconds : 0, b.count > deps.perAccount ? b.resetSeconds : 0);
        throw tooManyAttempts('Too many sign-in attempts.', wait);
      }
    },
  };
}
