import type pg from 'pg';
import { exclusivelyForTenant } from '../db/locks.ts';
import { onPg, type Sql } from '../db/sql.ts';
import { recordRun } from './retention.ts';

// Removing a workspace whose deletion is due (docs/data-lifecycle.md, "Deleting a workspace"), in bounded
// batches like retention: first whatever lets anyone in or out (keys, users, secrets, endpoints), then the
// data, largest tables first and children before their parents so that no cascade is large, then the tenant
// row itself, which leaves its only trace in deleted_workspaces: its id, plan and dates, no name and no person.
// A pass that runs out of budget leaves the rest to the next; the order makes that safe. Each batch holds the
// workspace's tenant lock exclusively (docs/concurrency.md): what is still being applied to the workspace
// ends first, and rows another transaction holds are passed by (SKIP LOCKED) for a later batch.

/**
 * Tables emptied one batch at a time, in this order, each on an index that starts with tenant_id.
 * webhook_attempts go with their deliveries, health_history with its customers.
 */
const TABLES = [
  'api_keys',
  'users',
  'inbound_secrets',
  'integration_freshness',
  'webhook_deliveries',
  'webhook_endpoints',
  'outbox_pending',
  'outbox_events',
  'outbox_sequences',
  'signals',
  'signal_rollups',
  'inbox_events',
  'alerts',
  'churn_outcomes',
  'churn_predictions',
  'health_snapshots',
  'health_changes',
  'customer_identities',
  'invoice_payments',
  'invoices',
  'subscriptions',
  'idempotency_keys',
  'attribution_requests',
  'customers',
] as const;

/** No row of the workspace is left in any of the tables (the tenant is `$1`). */
const EMPTY = TABLES.map((table) => `NOT EXISTS (SELECT 1 FROM ${table} WHERE tenant_id = $1)`).join(' AND ');

export interface PurgeOptions {
  batchSize: number;
  /** Full batches per pass. */
  maxBatches: number;
}

/** Workspaces whose deletion window has ended. */
export async function dueWorkspaces(sql: Sql): Promise<string[]> {
  const rows = await sql.query<{ id: string }>('SELECT id FROM tenants WHERE deletion_due_at <= now() ORDER BY deletion_due_at');
  return rows.map((r) => r.id);
}

/** A customer brings up to a year of daily history with it: fewer of them per statement. */
const HISTORY_PER_CUSTOMER = 50;

interface PurgeReport {
  rows: number;
  /** The workspaces gone completely in this pass. */
  workspaces: string[];
  behind: boolean;
}

/**
 * One pass: removes due workspaces batch by batch within the budget, and records what it did for /metrics.
 * Resolves with the rows removed and the workspaces gone completely.
 */
export async function purgeDueWorkspaces(pool: pg.Pool, opts: PurgeOptions): Promise<PurgeReport> {
  const report = await purge(pool, opts);
  await recordRun(onPg(pool), 'workspaces', report.rows, report.behind);
  return report;
}

async function purge(pool: pg.Pool, opts: PurgeOptions): Promise<PurgeReport> {
  let budget = opts.maxBatches;
  let rows = 0;
  let behind = false;
  const workspaces: string[] = [];
  for (const tenantId of await dueWorkspaces(onPg(pool))) {
    const alone = <T>(fn: (sql: Sql) => Promise<T>) => exclusivelyForTenant(pool, tenantId, fn);
    // As in retention, only a full batch spends the budget; a pass resumes from the first table, whose
    // emptiness then costs one look each.
    for (const table of TABLES) {
      const limit = table === 'customers' ? Math.max(1, Math.floor(opts.batchSize / HISTORY_PER_CUSTOMER)) : opts.batchSize;
      for (;;) {
        if (budget <= 0) return { rows, workspaces, behind: true };
        const n = await alone((sql) => deleteBatch(sql, table, tenantId, limit));
        rows += n;
        if (n < limit) break;
        budget--;
      }
    }
    // The audit log goes last but one: it records the deletion until the data is gone.
    for (;;) {
      if (budget <= 0) return { rows, workspaces, behind: true };
      const [r] = await alone((sql) =>
        sql.query<{ n: number }>(`SELECT audit_events_purge($1, 'infinity', $2) AS n`, [tenantId, opts.batchSize]),
      );
      rows += r!.n;
      if (r!.n < opts.batchSize) break;
      budget--;
    }
    // Still due: a cancellation that raced this pass keeps the (now empty) workspace. And empty: a row the
    // batches passed by (an event a worker was applying, whose row it holds until it has the lock this pass
    // holds) would be reached by the tenant's cascade, which would then wait on that worker while it waits
    // here; the workspace goes in a later pass instead. The record that it existed is written by the same
    // statement, so one is never without the other.
    const gone = await alone((sql) =>
      sql.query(
        `WITH gone AS (DELETE FROM tenants WHERE id = $1 AND deletion_due_at <= now() AND ${EMPTY}
                     RETURNING id, plan, created_at, deletion_requested_at, deletion_due_at)
       INSERT INTO deleted_workspaces (tenant_id, plan, created_at, requested_at, due_at)
       SELECT id, plan, created_at, deletion_requested_at, deletion_due_at FROM gone
       RETURNING tenant_id`,
        [tenantId],
      ),
    );
    if (gone.length) workspaces.push(tenantId);
    else behind = true;
  }
  return { rows, workspaces, behind };
}

export async function deleteBatch(sql: Sql, table: (typeof TABLES)[number], tenantId: string, limit: number): Promise<number> {
  if (table === 'webhook_endpoints') await holdEndpointsAndDeliveries(sql, tenantId);
  const gone = await sql.query(
    `DELETE FROM ${table} WHERE ctid = ANY(ARRAY(SELECT ctid FROM ${table} WHERE tenant_id = $1 LIMIT $2 FOR UPDATE SKIP LOCKED)) RETURNING 1`,
    [tenantId, limit],
  );
  return gone.length;
}

/**
 * Before a batch of endpoints goes, what its cascade would reach is taken as endpoint removal takes it
 * (docs/concurrency.md, steps 11 and 12): the workspace's endpoints (at most 20), then their deliveries in id
 * order, then their circuit breakers. Left to the cascade, the deliveries would be taken in the order of the
 * index it walks (endpoint, newest first), against the id order of every writer of several deliveries (a
 * claim, recorded successes, holding, releasing), and deadlock with them. The endpoints are waited for, not
 * passed by: whoever holds one (a failure being recorded) takes nothing this transaction holds. No delivery
 * can be added meanwhile, as its insert takes a key-share lock on its endpoint's row, held here.
 */
async function holdEndpointsAndDeliveries(sql: Sql, tenantId: string): Promise<void> {
  const endpoints = `SELECT id FROM webhook_endpoints WHERE tenant_id = $1`;
  await sql.query(`${endpoints} ORDER BY id FOR UPDATE`, [tenantId]);
  await sql.query(`SELECT 1 AS held FROM webhook_deliveries WHERE endpoint_id IN (${endpoints}) ORDER BY id FOR UPDATE`, [tenantId]);
  await sql.query(`SELECT 1 AS held FROM webhook_endpoint_circuits WHERE endpoint_id IN (${endpoints}) ORDER BY endpoint_id FOR UPDATE`, [
    tenantId,
  ]);
}
