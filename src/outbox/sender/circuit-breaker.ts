import type { CIRCUIT_STATES } from '../../contract/enums.ts';

// The circuit breaker of a webhook endpoint (docs/receiving-webhooks.md, "Circuit breaker"): its settings, the
// failure rate of its recent attempts, and how long each opening lasts. Its state lives in the database
// (webhook_endpoint_circuits), shared by every worker process, and every statement that changes it is in
// delivery-store.ts; this module holds what those statements and the API's view of the state compute alike.
//
//   closed ──(failure rate ≥ threshold over ≥ min attempts in the window)──▶ open
//   open ──(next_probe_at passed, one delivery due: the worker's pass makes it the probe)──▶ half_open
//   half_open ──(the probe delivered)──▶ closed: every delivery it held is due at once
//   half_open ──(the probe failed)──▶ open again, the wait before the next probe doubled (up to the cap)
//
// While open or half open, the endpoint's deliveries are not attempted: each one whose attempt comes due is
// held (webhook_deliveries.held_at) instead of being claimed, keeping its attempts and its place, and is not
// queued again until the breaker closes. Nothing is failed because the breaker is open: a delivery is failed
// only when its own attempts run out, and only probes (real attempts, one at a time, each no sooner than the
// delivery's own retry time) spend attempts while the breaker is open.

export interface CircuitSettings {
  /** The share of failed attempts, 0 < x ≤ 1, at or above which the breaker opens. */
  failureRate: number;
  /** The fewest attempts in the window for the share to count. */
  minAttempts: number;
  /** The window the share is taken over, in seconds (a sliding window of two halves, below). */
  windowSeconds: number;
  /** The wait before the first probe; each failed probe doubles it. */
  probeSeconds: number;
  /** The longest wait before a probe. */
  probeMaxSeconds: number;
}

export const DEFAULT_CIRCUIT: CircuitSettings = {
  failureRate: 0.5,
  minAttempts: 10,
  windowSeconds: 120,
  probeSeconds: 30,
  probeMaxSeconds: 600,
};

export type CircuitState = (typeof CIRCUIT_STATES)[number];

/** The wait before the next probe after the breaker's nth opening since it was last closed (n ≥ 1). */
export function probeBackoffSeconds(s: CircuitSettings, openings: number): number {
  return Math.min(s.probeMaxSeconds, s.probeSeconds * 2 ** Math.max(0, Math.min(30, openings - 1)));
}

/**
 * The recent attempts, as SQL over a circuit row aliased `c` at now(): the counts of the current window, those
 * of the previous one weighted by how much of it still lies within the last `windowSeconds` (the sliding
 * window counter). `$w` is the placeholder holding windowSeconds. Answers the columns of the window moved on to
 * now (`w_started_at`, `w_attempts`, `w_failures`, `p_attempts`, `p_failures`) and the weight of the previous one.
 */
export const rolledWindowSql = (w: string) => `
  CASE WHEN now() >= c.window_started_at + 2 * make_interval(secs => ${w}) THEN now()
       WHEN now() >= c.window_started_at + make_interval(secs => ${w}) THEN c.window_started_at + make_interval(secs => ${w})
       ELSE c.window_started_at END AS w_started_at,
  CASE WHEN now() >= c.window_started_at + make_interval(secs => ${w}) THEN 0 ELSE c.window_attempts END AS w_attempts,
  CASE WHEN now() >= c.window_started_at + make_interval(secs => ${w}) THEN 0 ELSE c.window_failures END AS w_failures,
  CASE WHEN now() >= c.window_started_at + 2 * make_interval(secs => ${w}) THEN 0
       WHEN now() >= c.window_started_at + make_interval(secs => ${w}) THEN c.window_attempts ELSE c.previous_attempts END AS p_attempts,
  CASE WHEN now() >= c.window_started_at + 2 * make_interval(secs => ${w}) THEN 0
       WHEN now() >= c.window_started_at + make_interval(secs => ${w}) THEN c.window_failures ELSE c.previous_failures END AS p_failures`;

/** What the breaker's row holds about the recent attempts. */
export interface CircuitWindow {
  windowStartedAt: Date;
  windowAttempts: number;
  windowFailures: number;
  previousAttempts: number;
  previousFailures: number;
}

/** The recent attempts and failures at `now`, as the breaker counts them (the same arithmetic as the SQL above). */
export function recentAttempts(c: CircuitWindow, windowSeconds: number, now = new Date()): { attempts: number; failures: number } {
  const w = windowSeconds * 1000;
  let start = c.windowStartedAt.getTime();
  let cur = { attempts: c.windowAttempts, failures: c.windowFailures };
  let prev = { attempts: c.previousAttempts, failures: c.previousFailures };
  const t = now.getTime();
  if (t >= start + 2 * w) {
    start = t;
    prev = { attempts: 0, failures: 0 };
    cur = { attempts: 0, failures: 0 };
  } else if (t >= start + w) {
    start += w;
    prev = cur;
    cur = { attempts: 0, failures: 0 };
  }
  const weight = Math.max(0, 1 - (t - start) / w);
  return { attempts: prev.attempts * weight + cur.attempts, failures: prev.failures * weight + cur.failures };
}

/** The breaker as the API shows it. */
export interface CircuitView {
  state: CircuitState;
  openedAt: Date | null;
  nextProbeAt: Date | null;
  /** Failed attempts among the recent ones, 0 to 1; null with none. */
  failureRate: number | null;
  /** The recent attempts it is taken over (rounded). */
  recentAttempts: number;
}

export function circuitView(
  row: (CircuitWindow & { state: CircuitState; openedAt: Date | null; nextProbeAt: Date | null }) | null | undefined,
  windowSeconds: number,
  now = new Date(),
): CircuitView {
  if (!row) return { state: 'closed', openedAt: null, nextProbeAt: null, failureRate: null, recentAttempts: 0 };
  const recent = recentAttempts(row, windowSeconds, now);
  return {
    state: row.state,
    openedAt: row.state === 'closed' ? null : row.openedAt,
    nextProbeAt: row.state === 'open' ? row.nextProbeAt : null,
    failureRate: recent.attempts > 0 ? Math.min(1, recent.failures / recent.attempts) : null,
    recentAttempts: Math.round(recent.attempts),
  };
}
