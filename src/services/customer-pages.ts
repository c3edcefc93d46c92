import type pg from 'pg';
import { onPg } from '../db/sql.ts';

// The customer list's hot read in plain SQL: one statement per page, rows named as the Customer model
// names its fields, so the GraphQL type resolves them as it resolves Prisma's. Selections that reach
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

/** The filters of a page, as SQL with its values from $1. */
function filtersOf(r: Pick<PageRequest, 'tenantId' | 'riskLevel' | 'healthStatus'>, values: unknown[]): string[] {
  values.push(r.tenantId);
  const where = ['tenant_id = $1'];
  if (r.riskLevel) where.push(`churn_risk_level = $${values.push(r.riskLevel)}::"RiskLevel"`);
  if (r.healthStatus) where.push(`health_status = $${values.push(r.healthStatus)}::"HealthStatus"`);
  return where;
}

export function createCustomerPages(pool: pg.Pool) {
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

export type CustomerPages = ReturnType<typeof createCustomerPages>;
