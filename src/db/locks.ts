import type pg from 'pg';
import { inTransaction, type Sql } from './sql.ts';

// The service's advisory locks, each kind at its step of the one lock order (docs/concurrency.md), taken in
// one statement and in the order of its keys:
//   step 1: an inbound storing transaction's accept lock and its acceptor's key (ingest/inbox.ts, first statement);
//   step 3: tenant locks (lockTenants);
//   step 4: object locks (lockObjects).
// Locks only tried, never waited for, and sessions that wait for one of these holding nothing else, stand
// outside the order.

/** The first key of the lock a transaction storing inbound events holds, named in its queue message (the second is chosen per group, ingest/inbox.ts). */
export const ACCEPT_LOCK_SPACE = 1_229_866_562;
/**
 * The first key of the locks on acceptor keys: shared by the process that registered the key (for as long
 * as it runs) and by each of its INSERTs (until it commits); taken exclusively only by the sweeper
 * recovering what a process that ended had claimed (ingest/acceptor.ts).
 */
export const ACCEPTOR_LOCK_SPACE = 1_229_866_563;
/** A tenant's lock (lockTenants). */
export const TENANT_LOCK_SPACE = 0x63687361;

/**
 * Step 3 of the order: tenants' locks, held to the end of the transaction. Shared by every transaction that
 * applies a tenant's inbound events or otherwise changes rows those may meet (the overdue pass, retention);
 * exclusive for the worker completing attribution, an erasure, and the removal of a workspace's rows. So an
 * event is applied either before such a change, which then sees the rows it kept without a customer, or
 * after it, seeing the customer; and no row that attribution or erasure changes is held by an event being applied.
 * Keys in order, one mode per key: two tenants whose ids hash alike share a key, which is then taken once,
 * exclusively if either asks for that (never shared and then exclusive).
 */
export async function lockTenants(sql: Sql, tenants: { tenantId: string; exclusive: boolean }[]): Promise<void> {
  if (tenants.length === 0) return;
  // PostgreSQL evaluates a volatile function of a target list above the query's sort, so the locks are
  // taken in key order (the plan shows the calls on the node above the Sort).
  await sql.query(
    `SELECT count(*)::int AS n FROM (
       SELECT CASE WHEN x THEN pg_advisory_xact_lock($1::int, k)::text ELSE pg_advisory_xact_lock_shared($1::int, k)::text END
       FROM (SELECT hashtext(t.tenant) AS k, bool_or(t.exclusive) AS x FROM unnest($2::text[], $3::bool[]) AS t(tenant, exclusive) GROUP BY 1) s
       ORDER BY k) l`,
    [TENANT_LOCK_SPACE, tenants.map((t) => t.tenantId), tenants.map((t) => t.exclusive)],
  );
}

/**
 * Step 4 of the order: objects, each named `tenant:key` (an invoice, a subscription, a charge, a provider's
 * account `provider:id`; the customer a domain stands for, `domain:name`), exclusively to the end of the
 * transaction. A transaction applying inbound events takes the locks of every object it may change before it
 * changes any, so two of them never wait on each other in a cycle. Asking again for a key already held is
 * granted at once.
 */
export async function lockObjects(sql: Sql, keys: string[]): Promise<void> {
  if (keys.length === 0) return;
  await sql.query(
    `SELECT count(*)::int AS n FROM (
       SELECT pg_advisory_xact_lock(k) FROM (SELECT DISTINCT hashtextextended(x, 0) AS k FROM unnest($1::text[]) AS x) s ORDER BY k) l`,
    [[...new Set(keys)]],
  );
}

/** Per pool and tenant, the end of the last transaction this process started holding the tenant's lock exclusively. */
const tails = new WeakMap<pg.Pool, Map<string, Promise<unknown>>>();

/**
 * Runs `fn` in a transaction that first takes the tenant's lock exclusively. Such transactions of one tenant
 * run one after another in this process before they take a connection: each waits for the tenant's events
 * being applied, and a burst of them would otherwise hold the pool's connections waiting, taking them from
 * other tenants' requests.
 */
export function exclusivelyForTenant<T>(pool: pg.Pool, tenantId: string, fn: (sql: Sql) => Promise<T>): Promise<T> {
  let byTenant = tails.get(pool);
  if (!byTenant) tails.set(pool, (byTenant = new Map()));
  const before = byTenant.get(tenantId) ?? Promise.resolve();
  const run = before.then(() =>
    inTransaction(pool, async (sql) => {
      await lockTenants(sql, [{ tenantId, exclusive: true }]);
      return fn(sql);
    }),
  );
  const tail = run.catch(() => {});
  byTenant.set(tenantId, tail);
  void tail.then(() => {
    if (byTenant.get(tenantId) === tail) byTenant.delete(tenantId);
  });
  return run;
}
