import type pg from 'pg';
import { onPg } from '../db/sql.ts';
import { CUSTOMER_FIELDS, type CustomerFieldName, sqlOf } from '../contract/customer-fields.ts';
import { type Camel, camelCase } from '../contract/serialize.ts';
import { SILENT_PROVIDERS_SQL, type SilentProvider } from '../scoring/freshness.ts';
import { countOf, createCustomerTallies, type CustomerTallies } from './customer-tallies.ts';

// The hot reads of customers in plain SQL, one statement each: a page of the list, and one customer with
// its health. Rows are named as the Customer model names its fields (and its health as the model's
// relations), so the GraphQL type resolves them as it resolves Prisma's. Selections that reach other
// relations, and searches, keep Prisma's planned query (src/schema/customer.ts decides). The service runs
// them through customer-read-batches.ts, where requests reading at the same moment share a statement built
// here from the same text (batchedOneStatement, pageShape and batchedPageStatement).

/** The columns a list page can show: a customer's own fields (the contract's list) and its tenant, keyed as the model names them. */
const COLUMNS: Record<string, string> = {
  tenantId: 'tenant_id',
  ...Object.fromEntries((Object.keys(CUSTOMER_FIELDS) as CustomerFieldName[]).map((name) => [camelCase(name), sqlOf(name)])),
};
export type PageColumn = 'tenantId' | Camel<CustomerFieldName>;
export const isPageColumn = (key: string): key is PageColumn => Object.hasOwn(COLUMNS, key);

const SELECT = Object.entries(COLUMNS)
  .map(([key, sql]) => (key === sql ? key : `${sql} AS "${key}"`))
  .join(', ');
const SELECT_C = Object.entries(COLUMNS)
  .map(([key, sql]) => `c.${sql} AS "${key}"`)
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
export type CustomerWithHealth = PageRow & {
  healthSnapshot?: Record<string, unknown> | null;
  tenant?: { scoringWeights: unknown; integrationFreshness: SilentProvider[] };
};

/** Where a statement reads a value: `ref(value, its SQL type)` gives the expression that stands for it. */
type Ref = (value: unknown, type: string) => string;

/** The filters of a page, each value taken through `ref`. */
function filtersOf(r: Pick<PageRequest, 'tenantId' | 'riskLevel' | 'healthStatus'>, ref: Ref): string[] {
  const where = [`tenant_id = ${ref(r.tenantId, 'uuid')}`];
  if (r.riskLevel) where.push(`churn_risk_level = ${ref(r.riskLevel, 'text')}::"RiskLevel"`);
  if (r.healthStatus) where.push(`health_status = ${ref(r.healthStatus, 'text')}::"HealthStatus"`);
  return where;
}

/** The SQL type each sort field's cursor value is bound as, where a statement names it. */
const SORT_TYPES = { createdAt: 'timestamptz', name: 'text', healthScore: 'int4', churnProbability: 'float8' } as const;

/** A page's statement, its values taken through `ref`: one text per shape of request (filters, order, cursor). */
function pageQuery(r: PageRequest, ref: Ref): string {
  const where = filtersOf(r, ref);
  const column = SORT_COLUMNS[r.sort.field];
  const beyond = r.sort.direction === 'desc' ? '<' : '>';
  if (r.after) {
    const id = `${ref(r.after.id, 'uuid')}::uuid`;
    if (r.after.value === null) where.push(`${column} IS NULL AND id ${beyond} ${id}`);
    else {
      const v = ref(r.after.value, SORT_TYPES[r.sort.field]);
      where.push(
        `(${column} ${beyond} ${v} OR (${column} = ${v} AND id ${beyond} ${id})${r.sort.nullable ? ` OR ${column} IS NULL` : ''})`,
      );
    }
  }
  return `SELECT ${SELECT} FROM customers WHERE ${where.join(' AND ')}
         ORDER BY ${orderOf(r.sort, column)} LIMIT ${ref(r.take, 'int4')}`;
}

const orderOf = (sort: PageRequest['sort'], column: string, id = 'id') => {
  const direction = sort.direction.toUpperCase();
  return `${column} ${direction}${sort.nullable ? ' NULLS LAST' : ''}, ${id} ${direction}`;
};

/** A page request as one row of a batch: the shape its statement has, and its values in order with their types. */
export interface PageShape {
  /** The same for every request of the same shape, and only for those. */
  key: string;
  types: string[];
  values: unknown[];
  sort: PageRequest['sort'];
}

export function pageShape(r: PageRequest): PageShape {
  const types: string[] = [];
  const values: unknown[] = [];
  const key = pageQuery(r, (v, type) => {
    values.push(v);
    return `k.p${types.push(type)}`;
  });
  return { key, types, values, sort: r.sort };
}

/**
 * Pages of one shape for many requests as one statement: each request is a row of `unnest`, its page read
 * beside it (LATERAL) by the statement it would run alone; rows come back by request, in the page's order.
 */
export function batchedPageStatement(shapes: readonly PageShape[]): { text: string; values: unknown[] } {
  const [first] = shapes as [PageShape];
  const arrays = first.types.map((type, i) => `$${i + 1}::${type}[]`);
  const names = first.types.map((_, i) => `p${i + 1}`);
  return {
    text: `SELECT k.n::int AS "batchIndex", p.* FROM unnest(${arrays.join(', ')}) WITH ORDINALITY AS k(${names.join(', ')}, n)
           CROSS JOIN LATERAL (${first.key}) p
           ORDER BY k.n, ${orderOf(first.sort, `p."${first.sort.field}"`, 'p.id')}`,
    values: first.types.map((_, i) => shapes.map((s) => s.values[i])),
  };
}

type HealthRow = PageRow & SnapshotColumns & { scoringWeights: unknown; silentProviders: SilentProvider[] };

/** A customer with its current snapshot and its tenant's weights: the columns, then the joins after `customers c`. */
const SELECT_HEALTH = `${SELECT_C}, t.scoring_weights AS "scoringWeights", s.customer_id AS "snapshotOf", s.score AS "snapshotScore",
  s.status::text AS "snapshotStatus", s.computed_at AS "snapshotComputedAt", s.trend_7d AS "snapshotTrend7d",
  s.trend_30d AS "snapshotTrend30d", s.weakest_dimension AS "snapshotWeakestDimension", s.dimensions AS "snapshotDimensions",
  ${SILENT_PROVIDERS_SQL('c.tenant_id')} AS "silentProviders"`;
const HEALTH_FROM = 'JOIN tenants t ON t.id = c.tenant_id LEFT JOIN health_snapshots s ON s.customer_id = c.id';

/** A row of SELECT_HEALTH as `one` answers it. */
function withHealth(row: HealthRow): CustomerWithHealth {
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
  return { ...customer, tenant: { scoringWeights: row.scoringWeights, integrationFreshness: row.silentProviders }, healthSnapshot: snapshot };
}

/**
 * One customer's reads of many requests as one statement: each request's id and tenant are a row of
 * `unnest`, joined as `one` joins them; a row carries the 1-based index of its request (`batchIndex`).
 */
export function batchedOneStatement(
  asks: readonly { tenantId: string; id: string }[],
  health: boolean,
): { text: string; values: unknown[] } {
  return {
    text: `SELECT k.n::int AS "batchIndex", ${health ? SELECT_HEALTH : SELECT_C}
           FROM unnest($1::uuid[], $2::uuid[]) WITH ORDINALITY AS k(id, tenant_id, n)
           JOIN customers c ON c.id = k.id AND c.tenant_id = k.tenant_id ${health ? HEALTH_FROM : ''}`,
    values: [asks.map((a) => a.id), asks.map((a) => a.tenantId)],
  };
}

/** A row of batchedOneStatement as `one` answers it. */
export const oneOfBatchRow = (row: Record<string, unknown>, health: boolean): CustomerWithHealth =>
  health ? withHealth(row as unknown as HealthRow) : (row as unknown as PageRow);

export type CustomerReads = ReturnType<typeof createCustomerReads>;

export function createCustomerReads(pool: pg.Pool, tallies: CustomerTallies = createCustomerTallies({ pool })) {
  const sql = onPg(pool);
  return {
    /** One page in the sort's order, then the id's; nulls last either way, as the Prisma path orders them. */
    async page(r: PageRequest): Promise<PageRow[]> {
      const values: unknown[] = [];
      return sql.query<PageRow>(
        pageQuery(r, (v) => `$${values.push(v)}`),
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
      const [row] = await sql.query<HealthRow>(
        `SELECT ${SELECT_HEALTH} FROM customers c ${HEALTH_FROM} WHERE c.id = $1 AND c.tenant_id = $2`,
        [id, tenantId],
      );
      return row ? withHealth(row) : null;
    },
    /** How many of the tenant's customers match the filters, from its tallies (src/services/customer-tallies.ts): exact, at any size. */
    async count(r: Pick<PageRequest, 'tenantId' | 'riskLevel' | 'healthStatus'>): Promise<number> {
      return countOf(await tallies.of(r.tenantId), r);
    },
  };
}
