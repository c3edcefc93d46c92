// The retry schedule of docs/decisions.md §5. The doc's table and this one are checked against each other
// (retry-schedule.test.ts), and every other statement of the schedule (/openapi.json's `webhooks`) is
// derived from here.

/** The wait before each attempt after the first. */
export const RETRY_DELAYS_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;
/** Each wait is stretched by up to this fraction at random, so that a recovering receiver is not hit by a synchronised wave. */
export const RETRY_JITTER = 0.1;
/** From the first attempt to the last, before jitter; then the delivery is failed. */
export const RETRY_SPAN_MS = RETRY_DELAYS_MS.reduce((a, b) => a + b, 0);
/**
 * The longest a receiver's Retry-After defers an attempt: the longest scheduled wait. A receiver could
 * otherwise park a delivery for centuries, where it is neither delivered nor failed nor ever removed.
 */
export const MAX_RETRY_AFTER_MS = Math.max(...RETRY_DELAYS_MS);

/** When attempt number `attemptsMade + 1` is due, or null when no attempt is left. */
export function nextAttemptAt(attemptsMade: number, now: Date, opts: { retryAfterMs?: number; random?: () => number } = {}): Date | null {
  const base = RETRY_DELAYS_MS[attemptsMade - 1];
  if (base === undefined) return null;
  const jittered = base * (1 + RETRY_JITTER * (opts.random ?? Math.random)());
  const asked = opts.retryAfterMs !== undefined && Number.isFinite(opts.retryAfterMs) ? Math.min(opts.retryAfterMs, MAX_RETRY_AFTER_MS) : 0;
  return new Date(now.getTime() + Math.max(jittered, asked));
}
