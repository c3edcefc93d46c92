import type pg from 'pg';
import { scoringCustomers, scoringPassDuration } from '../runtime/metrics.ts';
import { onPg } from '../db/sql.ts';
import type { Scorer } from './recompute.ts';
import { wakeSnoozedAlerts } from './alert-rows.ts';
import { type Claim, claimDue, collectRequests, releaseClaims, requestStale } from './scoring-queue.ts';

export interface ScoringLoopOptions {
  batchSize: number;
  leaseSeconds: number;
  /** Batches one process works on at once; the database does most of the work, so 2 keeps it busy. */
  concurrency: number;
  log: { error: (o: object, m: string) => void; warn: (o: object, m: string) => void; info: (o: object, m: string) => void };
  /** Seconds before a customer whose recompute failed is tried again. */
  retryDelaySeconds?: number;
}

/**
 * Works the scoring queue down: claim a batch, recompute it, repeat until nothing is due. A failing
 * batch is retried customer by customer, so one bad customer delays only itself.
 */
export function createScoringLoop(pool: pg.Pool, scorer: Scorer, opts: ScoringLoopOptions) {
  const sql = onPg(pool);
  const retryDelay = opts.retryDelaySeconds ?? 300;
  let stopped = false;

  async function one(claims: Claim[]): Promise<number> {
    try {
      return (await scorer.recompute(claims)).computed;
    } catch (err) {
      if (claims.length === 1) {
        opts.log.error({ err, customerId: claims[0]!.customerId }, 'scoring failed; it will be retried');
        await releaseClaims(sql, [claims[0]!.customerId], retryDelay).catch(() => {});
        return 0;
      }
      // Seen, not hidden: a batch fails only for a defect (a deadlock included) or a database gone away.
      opts.log.warn({ err, customers: claims.length }, 'a scoring batch failed; computing each customer on its own');
      let n = 0;
      for (const c of claims) n += await one([c]);
      return n;
    }
  }

  /** Moves every request made so far into the queue. */
  async function collect(): Promise<void> {
    while ((await collectRequests(sql)) > 0 && !stopped);
  }

  async function lane(): Promise<number> {
    let total = 0;
    while (!stopped) {
      await collect();
      const claims = await claimDue(sql, opts.batchSize, opts.leaseSeconds);
      if (claims.length === 0) return total;
      total += await one(claims);
    }
    return total;
  }

  return {
    /** Lanes finish the batch in hand, then stop claiming. */
    stop: () => {
      stopped = true;
    },
    collect,
    /** Recomputes everything due now; resolves with how many customers were computed. */
    async drain(): Promise<number> {
      const end = scoringPassDuration.startTimer();
      const lanes = await Promise.all(Array.from({ length: opts.concurrency }, lane));
      const computed = lanes.reduce((a, b) => a + b, 0);
      // A pass that found nothing due says nothing of how long scoring takes: only passes that computed are timed.
      if (computed > 0) {
        end();
        scoringCustomers.inc(computed);
      }
      return computed;
    },
    /** Asks for customers not computed for a day and wakes snoozed alerts (old history goes with retention). */
    async daily(): Promise<{ queued: number; woken: number }> {
      const queued = await requestStale(sql);
      const woken = await wakeSnoozedAlerts(sql);
      if (queued || woken) opts.log.info({ queued, woken }, 'daily scoring pass queued customers');
      return { queued, woken };
    },
  };
}

export type ScoringLoop = ReturnType<typeof createScoringLoop>;
