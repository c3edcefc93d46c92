import type pg from 'pg';
import { STATS_WINDOWS, type StatsWindow } from '../contract/enums.ts';
import { onPg } from '../db/sql.ts';
import { type CircuitSettings, type CircuitView, circuitView } from '../outbox/sender/circuit-breaker.ts';
import { addHistograms, emptyHistogram, quantile } from '../outbox/sender/latency-histogram.ts';

/** An endpoint's breaker row as Prisma reads it (the fields the view needs). */
export interface CircuitRecord {
  state: CircuitView['state'];
  openedAt: Date | null;
  nextProbeAt: Date | null;
  windowStartedAt: Date;
  windowAttempts: number;
  windowFailures: number;
  previousAttempts: number;
  previousFailures: number;
}

export interface StatsPoint {
  from: Date;
  attempts: number;
  succeeded: number;
  failed: number;
  p95Ms: number | null;
}

export interface EndpointStats {
  endpointId: string;
  window: StatsWindow;
  from: Date;
  to: Date;
  attempts: number;
  succeeded: number;
  failed: number;
  successRate: number | null;
  latencyMs: { p50: number | null; p95: number | null; p99: number | null };
  pending: number;
  held: number;
  oldestPendingAgeSeconds: number | null;
  points: StatsPoint[];
}

/** Milliseconds to a tenth. */
const tenth = (ms: number | null) => (ms === null ? null : Math.round(ms * 10) / 10);

/**
 * What the API shows of an endpoint's deliveries: its circuit breaker, and its figures over the last hour or day
 * (docs/receiving-webhooks.md, "Delivery figures"). Reads only: the deliverer writes both (delivery-store.ts). The
 * caller has checked that the endpoint is the tenant's.
 */
export function createWebhookStatsService(deps: { pool: pg.Pool; circuit: CircuitSettings; now?: () => Date }) {
  const sql = onPg(deps.pool);
  const now = deps.now ?? (() => new Date());
  return {
    /** The breaker as the API shows it; closed when the endpoint has no row yet. */
    circuit: (row: CircuitRecord | null | undefined) => circuitView(row, deps.circuit.windowSeconds, now()),

    /**
     * The endpoint's attempts in the window, point by point (every point present, oldest first), with the
     * success rate and the latency percentiles of the whole window, and the deliveries pending now. Tests are
     * not counted. One read of at most 1,440 rows (a row per minute with attempts) and one of the pending rows.
     */
    async figures(endpointId: string, window: StatsWindow): Promise<EndpointStats> {
      const { seconds, pointSeconds } = STATS_WINDOWS[window];
      const to = now();
      const step = pointSeconds * 1000;
      const count = seconds / pointSeconds;
      const first = Math.floor(to.getTime() / step) * step - (count - 1) * step;
      const [rows, [pending]] = await Promise.all([
        sql.query<{ minute: Date; attempts: number; failures: number; latency: number[] | null }>(
          `SELECT minute, attempts, failures, latency FROM webhook_endpoint_stats
           WHERE endpoint_id = $1 AND minute >= $2 ORDER BY minute`,
          [endpointId, new Date(first)],
        ),
        sql.query<{ pending: number; held: number; oldest: Date | null }>(
          `SELECT count(*)::int AS pending, count(*) FILTER (WHERE held_at IS NOT NULL)::int AS held, min(created_at) AS oldest
           FROM webhook_deliveries WHERE endpoint_id = $1 AND status = 'pending' AND NOT is_test`,
          [endpointId],
        ),
      ]);
      const points = Array.from({ length: count }, (_, i) => ({
        from: new Date(first + i * step),
        attempts: 0,
        failed: 0,
        latency: emptyHistogram(),
      }));
      const all = emptyHistogram();
      for (const r of rows) {
        const p = points[Math.min(count - 1, Math.floor((r.minute.getTime() - first) / step))]!;
        p.attempts += r.attempts;
        p.failed += r.failures;
        addHistograms(p.latency, r.latency);
        addHistograms(all, r.latency);
      }
      const attempts = points.reduce((a, p) => a + p.attempts, 0);
      const failed = points.reduce((a, p) => a + p.failed, 0);
      return {
        endpointId,
        window,
        from: new Date(first),
        to,
        attempts,
        succeeded: attempts - failed,
        failed,
        successRate: attempts ? (attempts - failed) / attempts : null,
        latencyMs: { p50: tenth(quantile(all, 0.5)), p95: tenth(quantile(all, 0.95)), p99: tenth(quantile(all, 0.99)) },
        pending: pending?.pending ?? 0,
        held: pending?.held ?? 0,
        oldestPendingAgeSeconds: pending?.oldest ? Math.max(0, (to.getTime() - pending.oldest.getTime()) / 1000) : null,
        points: points.map((p) => ({
          from: p.from,
          attempts: p.attempts,
          succeeded: p.attempts - p.failed,
          failed: p.failed,
          p95Ms: tenth(quantile(p.latency, 0.95)),
        })),
      };
    },
  };
}

export type WebhookStatsService = ReturnType<typeof createWebhookStatsService>;
