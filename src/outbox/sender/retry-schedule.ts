// docs/decisions.md §5: after the first attempt, retries at 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h
// (8 attempts, about 27.6 h), each with up to 10 % jitter. Then the delivery is failed.
export const RETRY_DELAYS_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/** When attempt number `attemptsMade + 1` is due, or null when no attempt is left. */
export function nextAttemptAt(attemptsMade: number, now: Date, opts: { retryAfterMs?: number; random?: () => number } = {}): Date | null {
  const base = RETRY_DELAYS_MS[attemptsMade - 1];
  if (base === undefined) return null;
  const jittered = base * (1 + 0.1 * (opts.random ?? Math.random)());
  return new Date(now.getTime() + Math.max(jittered, opts.retryAfterMs ?? 0));
}
