import { describe, expect, it } from 'vitest';
import { MAX_ATTEMPTS, nextAttemptAt, RETRY_DELAYS_MS } from './retry-schedule.ts';

const now = new Date('2026-11-20T00:00:00Z');
const after = (attemptsMade: number, random = () => 0, retryAfterMs?: number) =>
  nextAttemptAt(attemptsMade, now, { random, retryAfterMs })!.getTime() - now.getTime();

describe('the retry schedule', () => {
  it('retries at 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h: eight attempts in all', () => {
    expect(RETRY_DELAYS_MS).toEqual([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
    expect(MAX_ATTEMPTS).toBe(8);
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => after(n))).toEqual(RETRY_DELAYS_MS);
  });

  it('gives up after the last attempt', () => {
    expect(nextAttemptAt(MAX_ATTEMPTS, now)).toBeNull();
  });

  it('adds at most 10 % jitter', () => {
    expect(after(2, () => 0.999_999)).toBeLessThan(330_000);
    expect(after(2, () => 0.5)).toBe(315_000);
  });

  it('waits at least as long as the receiver’s Retry-After asks', () => {
    expect(after(1, () => 0, 60_000)).toBe(60_000);
    expect(after(3, () => 0, 60_000)).toBe(1_800_000);
  });

  it('spans about 27.6 hours before the delivery fails', () => {
    const total = RETRY_DELAYS_MS.reduce((a, b) => a + b, 0);
    expect(total / 3_600_000).toBeCloseTo(27.6, 1);
  });
});
