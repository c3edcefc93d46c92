import type { Sql } from '../db/sql.ts';

// The home of scoring_requests and scoring_queue (docs/concurrency.md, "Asking for a recompute").
// Whatever changes a customer's inputs appends a request (the triggers of signals, invoices and
// subscriptions; the functions below): an insert into a table with no unique key and no foreign key, so
// asking never waits and can never close a cycle of waits. Only the scoring loop writes scoring_queue:
// it collects requests into it, claims due rows, and ends its claims, always locking rows in customer order.

export interface Claim {
  customerId: string;
  version: number;
}

/** Customers per request row, for the passes that ask for many customers at once. */
const CUSTOMERS_PER_REQUEST = 1000;

/**
 * Moves up to `limit` requests into scoring_queue in one statement, each customer once, at its earliest due
 * time: a queued row not claimed keeps the earlier of the two times; a claimed one has its version bumped,
 * so the worker holding it computes once more. Requests of customers that no longer exist are dropped.
 * SKIP LOCKED gives concurrent collectors disjoint requests, and rows are upserted in customer order.
 * Answers how many requests were taken.
 */
export async function collectRequests(sql: Sql, limit = 200): Promise<number> {
  const rows = await sql.query<{ n: number }>(
    `WITH taken AS (
       DELETE FROM scoring_requests WHERE id IN (SELECT id FROM scoring_requests ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED)
       RETURNING customer_ids, due_at),
     wanted AS (
       SELECT r.customer_id, min(t.due_at) AS due_at FROM taken t CROSS JOIN LATERAL unnest(t.customer_ids) AS r(customer_id)
       GROUP BY r.customer_id),
     queued AS (
       INSERT INTO scoring_queue (customer_id, tenant_id, due_at)
       SELECT w.customer_id, c.tenant_id, w.due_at FROM wanted w JOIN customers c ON c.id = w.customer_id
       ORDER BY w.customer_id
       ON CONFLICT (customer_id) DO UPDATE
         SET version = scoring_queue.version + CASE WHEN scoring_queue.claimed_until IS NULL THEN 0 ELSE 1 END,
             due_at = least(scoring_queue.due_at, excluded.due_at)
         WHERE scoring_queue.claimed_until IS NOT NULL OR excluded.due_at < scoring_queue.due_at)
     SELECT count(*)::int AS n FROM taken`,
    [limit],
  );
  return rows[0]?.n ?? 0;
}

/**
 * Claims up to `limit` due customers for this worker for `leaseSeconds`. SKIP LOCKED makes concurrent
 * claimers take disjoint sets and never wait; a crashed worker's claims become claimable again when the
 * lease ends.
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

/** Locks the queue rows of these customers in customer order, as every writer of scoring_queue does. */
async function lockRows(sql: Sql, customerIds: string[]): Promise<void> {
  await sql.query('SELECT 1 FROM scoring_queue WHERE customer_id = ANY($1::uuid[]) ORDER BY customer_id FOR UPDATE', [customerIds]);
}

/**
 * Ends claims in the caller's transaction, after the results are written: a row whose version did not
 * move is done; one that a collected request bumped meanwhile is released to be computed again.
 */
export async function finishClaims(sql: Sql, claims: Claim[]): Promise<void> {
  if (claims.length === 0) return;
  const ids = claims.map((c) => c.customerId);
  await lockRows(sql, ids);
  await sql.query(
    `DELETE FROM scoring_queue q USING unnest($1::uuid[], $2::int[]) AS d(id, v) WHERE q.customer_id = d.id AND q.version = d.v`,
    [ids, claims.map((c) => c.version)],
  );
  await sql.query(`UPDATE scoring_queue SET claimed_until = NULL, due_at = now() WHERE customer_id = ANY($1::uuid[])`, [ids]);
}

/** Gives claims back after a failure, to be tried again after `delaySeconds`; one statement, locking in customer order. */
export async function releaseClaims(sql: Sql, customerIds: string[], delaySeconds: number): Promise<void> {
  await sql.query(
    `UPDATE scoring_queue q SET claimed_until = NULL, due_at = now() + make_interval(secs => $2)
     FROM (SELECT customer_id FROM scoring_queue WHERE customer_id = ANY($1::uuid[]) ORDER BY customer_id FOR UPDATE) l
     WHERE q.customer_id = l.customer_id`,
    [customerIds, delaySeconds],
  );
}

/** Removes a customer's queue row (its erasure); a request naming it is dropped when collected. */
export async function dequeueCustomer(sql: Sql, customerId: string): Promise<void> {
  await sql.query('DELETE FROM scoring_queue WHERE customer_id = $1', [customerId]);
}

/** Asks for the customers `selected` (an SQL query yielding `id`) to be recomputed now, in requests of up to a thousand. */
async function requestSelected(sql: Sql, selected: string, values: unknown[]): Promise<number> {
  const rows = await sql.query<{ n: number }>(
    `WITH chosen AS (SELECT id, (row_number() OVER (ORDER BY id) - 1) / ${CUSTOMERS_PER_REQUEST} AS chunk FROM (${selected}) s),
     asked AS (
       INSERT INTO scoring_requests (customer_ids, due_at) SELECT array_agg(id), now() FROM chosen GROUP BY chunk RETURNING cardinality(customer_ids) AS n)
     SELECT coalesce(sum(n), 0)::int AS n FROM asked`,
    values,
  );
  return rows[0]?.n ?? 0;
}

/**
 * The daily pass's first half: asks for every customer not computed for almost a day (time decay,
 * inactivity, trials ending). Any number of workers may run it: their requests collapse when collected.
 */
export function requestStale(sql: Sql, maxAgeHours = 23): Promise<number> {
  return requestSelected(
    sql,
    `SELECT c.id FROM customers c LEFT JOIN health_snapshots h ON h.customer_id = c.id
     WHERE h.computed_at IS NULL OR h.computed_at < now() - make_interval(hours => $1)`,
    [maxAgeHours],
  );
}

/** Asks for every customer of a tenant to be recomputed now (new weights, a new churn model). */
export async function requestTenant(sql: Sql, tenantId: string): Promise<void> {
  await requestSelected(sql, 'SELECT id FROM customers WHERE tenant_id = $1', [tenantId]);
}
