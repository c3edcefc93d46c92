import type { Sql } from '../db/sql.ts';

export interface Claim {
  customerId: string;
  version: number;
}

/**
 * Claims up to `limit` due customers for this worker for `leaseSeconds`. SKIP LOCKED makes concurrent
 * claimers take disjoint sets; a crashed worker's claims become claimable again when the lease ends.
 */
export async function claimDue(sql: Sql, limit: number, leaseSeconds: number): Promise<Claim[]> {
  const rows = await sql.query<{ customer_id: string; version: number }>(
    `UPDATE scoring_queue SET claimed_until = now() + make_interval(secs => $2)
     WHERE customer_id IN (
       SELECT customer_id FROM scoring_queue
       WHERE due_at <= now() AND (claimed_until IS NULL OR claimed_until < now())
       ORDER BY due_at LIMIT $1 FOR UPDATE SKIP LOCKED)
     RETURNING customer_id, version`,
    [limit, leaseSeconds],
  );
  return rows.map((r) => ({ customerId: r.customer_id, version: r.version }));
}

/**
 * Ends claims in the caller's transaction, after the results are written: a row whose version did not
 * move is done; one that a change bumped meanwhile is released to be computed again.
 */
export async function finishClaims(sql: Sql, claims: Claim[]): Promise<void> {
  if (claims.length === 0) return;
  const ids = claims.map((c) => c.customerId);
  await sql.query(
    `DELETE FROM scoring_queue q USING unnest($1::uuid[], $2::int[]) AS d(id, v) WHERE q.customer_id = d.id AND q.version = d.v`,
    [ids, claims.map((c) => c.version)],
  );
  await sql.query(`UPDATE scoring_queue SET claimed_until = NULL, due_at = now() WHERE customer_id = ANY($1::uuid[])`, [ids]);
}

/** Gives claims back after a failure, to be tried again after `delaySeconds`. */
export async function releaseClaims(sql: Sql, customerIds: string[], delaySeconds: number): Promise<void> {
  await sql.query(
    `UPDATE scoring_queue SET claimed_until = NULL, due_at = now() + make_interval(secs => $2) WHERE customer_id = ANY($1::uuid[])`,
    [customerIds, delaySeconds],
  );
}

/**
 * The daily pass's first half: queues every customer not computed for almost a day (time decay,
 * inactivity, trials ending). Idempotent, so any number of workers may run it.
 */
export async function queueStale(sql: Sql, maxAgeHours = 23): Promise<number> {
  const rows = await sql.query<{ n: number }>(
    `WITH queued AS (
       INSERT INTO scoring_queue (customer_id, tenant_id, due_at)
       SELECT c.id, c.tenant_id, now() FROM customers c LEFT JOIN health_snapshots h ON h.customer_id = c.id
       WHERE h.computed_at IS NULL OR h.computed_at < now() - make_interval(hours => $1)
       ON CONFLICT (customer_id) DO NOTHING RETURNING 1)
     SELECT count(*)::int AS n FROM queued`,
    [maxAgeHours],
  );
  return rows[0]?.n ?? 0;
}

/** Queues every customer of a tenant now (new weights, a new churn model). */
export async function queueTenant(sql: Sql, tenantId: string): Promise<void> {
  await sql.query(
    `INSERT INTO scoring_queue (customer_id, tenant_id, due_at)
     SELECT id, tenant_id, now() FROM customers WHERE tenant_id = $1
     ON CONFLICT (customer_id) DO UPDATE SET due_at = least(scoring_queue.due_at, now()), version = scoring_queue.version + 1`,
    [tenantId],
  );
}

/** Snoozed alerts whose time has come are open again. */
export async function wakeSnoozedAlerts(sql: Sql): Promise<number> {
  const rows = await sql.query(
    `UPDATE alerts SET status = 'open', snoozed_until = NULL, updated_at = now() WHERE status = 'snoozed' AND snoozed_until <= now() RETURNING id`,
  );
  return rows.length;
}
