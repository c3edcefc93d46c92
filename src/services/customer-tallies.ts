import type pg from 'pg';
import { inTransaction, onPg } from '../db/sql.ts';

// A tenant's customers counted by health status and churn risk level, with their scores summed, so that the
// list's total and the portfolio cost the same at a million customers as at ten thousand. The statement
// triggers of `customers` append each statement's net change to `customer_tally_changes` (migration
// 20261201500000); a read adds the tenant's pending changes to its folded tallies in one statement, so the
// figures are exact as of the read's snapshot. Folding moves a tenant's changes into `customer_tallies`.

/** One group of a tenant's customers: a health status and a risk level, each null where the customer has none. */
export interface Tally {
  healthStatus: string | null;
  churnRiskLevel: string | null;
  customers: number;
  /** Customers of the group with a health score, and the sum of those scores. */
  scored: number;
  scoreSum: number;
}

/** Changes a read may meet before it folds them: a read adds them up, so past this many it costs more than the tallies. */
export const FOLD_AFTER_CHANGES = 200;

/**
 * The key space of the per-tenant fold lock: only ever tried, never waited for, and held by a transaction
 * holding nothing else, so it stands outside the lock order (docs/concurrency.md).
 */
export const TALLY_FOLD_LOCK_SPACE = 0x74616c6c;

const READ = `
  SELECT nullif(health_status, '') AS "healthStatus", nullif(churn_risk_level, '') AS "churnRiskLevel",
         sum(customers)::float8 AS customers, sum(scored)::float8 AS scored, sum(score_sum)::float8 AS "scoreSum",
         sum(changes)::int AS changes
  FROM (
    SELECT health_status, churn_risk_level, customers, scored, score_sum, 0 AS changes FROM customer_tallies WHERE tenant_id = $1
    UNION ALL
    SELECT health_status, churn_risk_level, customers, scored, score_sum, 1 FROM customer_tally_changes WHERE tenant_id = $1
  ) t
  GROUP BY 1, 2`;

// One statement: the tenant's changes deleted and added to its tallies (in key order, the rows' one order).
const FOLD = `
  WITH moved AS (DELETE FROM customer_tally_changes WHERE tenant_id = $1 RETURNING *),
  summed AS (
    SELECT tenant_id, health_status, churn_risk_level, sum(customers) AS customers, sum(scored) AS scored, sum(score_sum) AS score_sum
    FROM moved GROUP BY 1, 2, 3
  )
  INSERT INTO customer_tallies AS t (tenant_id, health_status, churn_risk_level, customers, scored, score_sum)
  SELECT * FROM summed ORDER BY health_status, churn_risk_level
  ON CONFLICT (tenant_id, health_status, churn_risk_level) DO UPDATE
    SET customers = t.customers + excluded.customers, scored = t.scored + excluded.scored, score_sum = t.score_sum + excluded.score_sum`;

export type CustomerTallies = ReturnType<typeof createCustomerTallies>;

/** `reads` serves the reads; `pool` (the primary) folds. */
export function createCustomerTallies(deps: { pool: pg.Pool; reads?: pg.Pool }) {
  const read = onPg(deps.reads ?? deps.pool);

  /**
   * Moves the tenant's pending changes into its tallies, unless another transaction is doing so. Locks: the
   * fold key (tried), then the tenant row `FOR KEY SHARE` (as the tallies' foreign key would), then the
   * tenant's change rows, which no one else deletes, then its tally rows in key order, which no one else
   * writes; the removal of the workspace, which deletes the tenant row and so its tallies, waits for it or
   * it for the removal, holding nothing the other wants.
   */
  async function fold(tenantId: string): Promise<void> {
    await inTransaction(deps.pool, async (sql) => {
      const [lock] = await sql.query<{ ok: boolean }>('SELECT pg_try_advisory_xact_lock($1::int, hashtext($2)) AS ok', [
        TALLY_FOLD_LOCK_SPACE,
        tenantId,
      ]);
      if (!lock!.ok) return;
      const tenant = await sql.query('SELECT 1 FROM tenants WHERE id = $1 FOR KEY SHARE', [tenantId]);
      if (tenant.length === 0) {
        await sql.query('DELETE FROM customer_tally_changes WHERE tenant_id = $1', [tenantId]);
        return;
      }
      await sql.query(FOLD, [tenantId]);
    });
  }

  return {
    /** The tenant's customers by health status and risk level, exact as of this read; folds its changes when they have piled up. */
    async of(tenantId: string): Promise<Tally[]> {
      const rows = await read.query<Tally & { changes: number }>(READ, [tenantId]);
      if (rows.reduce((n, r) => n + r.changes, 0) > FOLD_AFTER_CHANGES) await fold(tenantId);
      return rows.filter((r) => r.customers !== 0).map(({ changes: _, ...tally }) => tally);
    },
    fold,
  };
}

/** How many of the tallies' customers match the filters. */
export function countOf(tallies: readonly Tally[], filters: { healthStatus?: string | null; riskLevel?: string | null }): number {
  return tallies
    .filter(
      (t) =>
        (!filters.healthStatus || t.healthStatus === filters.healthStatus) &&
        (!filters.riskLevel || t.churnRiskLevel === filters.riskLevel),
    )
    .reduce((n, t) => n + t.customers, 0);
}
