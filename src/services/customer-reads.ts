import type pg from 'pg';
import { onPg } from '../db/sql.ts';

// The hot reads of customers in plain SQL, one statement each: a page of the list, and one customer with
// its health. Rows are named as the Customer model names its fields (and its health as the model's
// relations), so the GraphQL type resolves them as it resolves Prisma's. Selections that reach other
// relations, and searches, keep Prisma's planned query (src/schema/customer.ts decides).

/** The columns a list page can show, keyed as the model names them. */
const COLUMNS = {
  id: 'id',
  tenantId: 'tenant_id',
  externalId: 'external_id',
  name: 'name',
  email: 'email',
  domain: 'domain',
  healthScore: 'health_score',
  healthStatus: 'health_status::text',
  churnProbability: 'churn_probability',
  churnRiskLevel: 'churn_risk_level::text',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
} as const;
export type PageColumn = keyof typeof COLUMNS;
export const isPageColumn = (key: string): key is PageColumn => Object.hasOwn(COLUMNS, key);

const SELECT = Object.entries(COLUMNS)
  .map(([key, column]) => (key === column ? column : `${column} AS "${key}"`))
  .join(', ');
const SELECT_C = Object.entries(COLUMNS)
  .map(([key, column]) => `c.${column} AS "${key}"`)
  .join(', ');

interface SnapshotColumns {
  snapshotOf: string | null;
  snapshotScore: number | null;
  snapshotStatus: string | null;
  snapshotComputedAt: Date | null;
  snapshotTrend7d: number | null;
  snapshotTrend30d: number | null;
  snapshotWeakestDimension: string | null;
  snapshotDimensions: unknown;
}

/** The orders a page can be read in (the customers query's sort fields). */
const SORT_COLUMNS = { createdAt: 'created_at', name: 'name', healthScore: 'health_score', churnProbability: 'churn_probability' } as const;
export type PageSortField = keyof typeof SORT_COLUMNS;

export interface PageRequest {
  tenantId: string;
  riskLevel?: string | null;
  healthStatus?: string | null;
  sort: { field: PageSortField; direction: 'asc' | 'desc'; nullable?: boolean };
  /** The last row of the previous page, from its cursor (already checked). */
  after?: { value: Date | string | number | null; id: string } | null;
  /** Rows to read (the page size plus one, to know whether another page follows). */
  take: number;
}

export type PageRow = { [K in PageColumn]: unknown } & { id: string };
/** One customer, with its health where asked: the snapshot's fields as healthView reads them. */
export type CustomerWithHealth = PageRow & { healthSnapshot?: Record<string, unknown> | null; tenant?: { scoringWeights: unknown } };

/** The filters of a page, as SQL with its values from $1. */
function filtersOf(r: Pick<PageRequest, 'tenantId' | 'riskLevel' | 'healthStatus'>, values: unknown[]): string[] {
  values.push(r.tenantId);
  const where = ['tenant_id = $1'];
  if (r.riskLevel) where.push(`churn_risk_level = $${values.push(r.riskLevel)}::"RiskLevel"`);
  if (r.healthStatus) where.push(`health_status = $${values.push(r.healthStatus)}::"HealthStatus"`);
  return where;
}

export function createCustomerReads(pool: pg.Pool) {
  const sql = onPg(pool);
  return {
    /** One page in the sort's order, then the id's; nulls last either way, as the Prisma path orders them. */
    async page(r: PageRequest): Promise<PageRow[]> {
      const values: unknown[] = [];
      const where = filtersOf(r, values);
      const column = SORT_COLUMNS[r.sort.field];
      const beyond = r.sort.direction === 'desc' ? '<' : '>';
      if (r.after) {
        const id = `$${values.push(r.after.id)}::uuid`;
        if (r.after.value === null) where.push(`${column} IS NULL AND id ${beyond} ${id}`);
        else {
          const v = `$${values.push(r.after.value)}`;
          where.push(
            `(${column} ${beyond} ${v} OR (${column} = ${v} AND id ${beyond} ${id})${r.sort.nullable ? ` OR ${column} IS NULL` : ''})`,
          );
        }
      }
      const nulls = r.sort.nullable ? ' NULLS LAST' : '';
      return sql.query<PageRow>(
        `SELECT ${SELECT} FROM customers WHERE ${where.join(' AND ')}
         ORDER BY ${column} ${r.sort.direction.toUpperCase()}${nulls}, id ${r.sort.direction.toUpperCase()} LIMIT $${values.push(r.take)}`,
        values,
      );
    },
    /**
     * One customer of the tenant, or null; with `health`, also its current snapshot (`healthSnapshot`, null
     * before the first computation) and the tenant's weights (`tenant.scoringWeights`), as Prisma would include them.
     */
    async one(tenantId: string, id: string, opts: { health: boolean }): Promise<CustomerWithHealth | null> {
      if (!opts.health) {
        const [row] = await sql.query<PageRow>(`SELECT ${SELECT} FROM customers WHERE id = $1 AND tenant_id = $2`, [id, tenantId]);
        return row ?? null;
      }
      const [row] = await sql.query<PageRow & SnapshotColumns & { scoringWeights: unknown }>(
        `SELECT ${SELECT_C}, t.scoring_weights AS "scoringWeights", s.customer_id AS "snapshotOf", s.score AS "snapshotScore",
                s.status::text AS "snapshotStatus", s.computed_at AS "snapshotComputedAt", s.trend_7d AS "snapshotTrend7d",
                s.trend_30d AS "snapshotTrend30d", s.weakest_dimension AS "snapshotWeakestDimension", s.dimensions AS "snapshotDimensions"
         FROM customers c JOIN tenants t ON t.id = c.tenant_id LEFT JOIN health_snapshots s ON s.customer_id = c.id
         WHERE c.id = $1 AND c.tenant_id = $2`,
        [id, tenantId],
      );
      if (!row) return null;
      const customer = Object.fromEntries(Object.keys(COLUMNS).map((key) => [key, row[key as PageColumn]])) as PageRow;
      const snapshot = row.snapshotOf
        ? {
            score: row.snapshotScore,
            status: row.snapshotStatus,
            computedAt: row.snapshotComputedAt,
            trend7d: row.snapshotTrend7d,
            trend30d: row.snapshotTrend30d,
            weakestDimension: row.snapshotWeakestDimension,
            dimensions: row.snapshotDimensions,
          }
        : null;
      return { ...customer, tenant: { scoringWeights: row.scoringWeights }, healthSnapshot: snapshot };
    },
    async count(r: Pick<PageRequest, 'tenantId' | 'riskLevel' | 'healthStatus'>): Promise<number> {
      const values: unknown[] = [];
      const [row] = await sql.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM customers WHERE ${filtersOf(r, values).join(' AND ')}`,
        values,
      );
      return row!.n;
    },
  };
}

export type CustomerReads = ReturnType<typeof createCustomerReads>;
