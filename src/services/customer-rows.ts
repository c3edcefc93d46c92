import type { Sql } from '../db/sql.ts';
import type { RowOf } from '../contract/serialize.ts';
import { columnsOf } from '../db/columns.ts';
import { EVENTS, type PayloadOf } from '../outbox/events/registry.ts';
import type { CustomerScore } from '../scoring/recompute.ts';

// The one home of the customers and customer_identities rows. Plain SQL over `Sql`: the API writes them in
// its own transaction, the worker inside an inbound event's transaction or a scoring batch's, the erasure in
// its own, so one repository serves all. The scorer reaches `saveScores` through the composition root, as
// scoring does not import services.

export interface Identity {
  provider: string;
  externalId: string;
}

export interface NewCustomer {
  tenantId: string;
  name: string;
  externalId?: string | null;
  email?: string | null;
  domain?: string | null;
  /** Back-dated creation (the demo seed); default now. */
  createdAt?: Date;
}

export interface CustomerChanges {
  name?: string;
  externalId?: string | null;
  email?: string | null;
  domain?: string | null;
}

/** A customer row as its events carry it (src/outbox/events/registry.ts), fields as the domain names them. */
export type CustomerRow = RowOf<PayloadOf<'customer.created'>>;
const COLUMNS = columnsOf(EVENTS['customer.created'].payload);

/** The customers table's statements; every function runs in the caller's transaction. */
export const customerRows = {
  async insert(sql: Sql, c: NewCustomer): Promise<CustomerRow> {
    const [row] = await sql.query<CustomerRow>(
      `INSERT INTO customers (id, tenant_id, name, external_id, email, domain, created_at, updated_at)
       VALUES (gen_random_uuid(), $1, $2, $3, $4, $5, coalesce($6, now()), now()) RETURNING ${COLUMNS}`,
      [c.tenantId, c.name, c.externalId ?? null, c.email ?? null, c.domain ?? null, c.createdAt ?? null],
    );
    return row!;
  },
  /** The changed row, or null when the tenant has no such customer. */
  async update(sql: Sql, tenantId: string, id: string, changes: CustomerChanges): Promise<CustomerRow | null> {
    const columns = { name: 'name', externalId: 'external_id', email: 'email', domain: 'domain' } as const;
    const set: string[] = [];
    const values: unknown[] = [id, tenantId];
    for (const [key, column] of Object.entries(columns) as [keyof CustomerChanges, string][]) {
      if (changes[key] === undefined) continue;
      values.push(changes[key]);
      set.push(`${column} = $${values.length}`);
    }
    const [row] = await sql.query<CustomerRow>(
      `UPDATE customers SET ${[...set, 'updated_at = now()'].join(', ')} WHERE id = $1 AND tenant_id = $2 RETURNING ${COLUMNS}`,
      values,
    );
    return row ?? null;
  },
  /** Ids and external ids of the tenant's customers among those given, in one statement (the events API's hot path). */
  byIdsOrExternalIds(sql: Sql, tenantId: string, ids: string[], externalIds: string[]) {
    return sql.query<{ id: string; external_id: string | null }>(
      'SELECT id, external_id FROM customers WHERE tenant_id = $1 AND (id = ANY($2::uuid[]) OR external_id = ANY($3::text[]))',
      [tenantId, ids, externalIds],
    );
  },
  /** The list fields a scoring batch computed, only where they changed (the scorer holds the rows' locks). */
  async saveScores(sql: Sql, scores: CustomerScore[]): Promise<void> {
    await sql.query(
      `UPDATE customers c SET health_score = t.score, health_status = t.status::"HealthStatus",
         churn_probability = t.probability, churn_risk_level = t.risk::"RiskLevel"
       FROM unnest($1::uuid[], $2::int[], $3::text[], $4::float8[], $5::text[]) AS t(id, score, status, probability, risk)
       WHERE c.id = t.id AND (c.health_score IS DISTINCT FROM t.score OR c.health_status::text IS DISTINCT FROM t.status
         OR c.churn_probability IS DISTINCT FROM t.probability OR c.churn_risk_level::text IS DISTINCT FROM t.risk)`,
      [
        scores.map((c) => c.id),
        scores.map((c) => c.score),
        scores.map((c) => c.status),
        scores.map((c) => c.probability),
        scores.map((c) => c.risk),
      ],
    );
  },
  /** Removes the row; the erasure has removed or detached everything that referred to it. */
  async remove(sql: Sql, tenantId: string, id: string): Promise<void> {
    await sql.query('DELETE FROM customers WHERE tenant_id = $1 AND id = $2', [tenantId, id]);
  },
  async exists(sql: Sql, tenantId: string, id: string): Promise<boolean> {
    const rows = await sql.query('SELECT 1 FROM customers WHERE id = $1 AND tenant_id = $2', [id, tenantId]);
    return rows.length > 0;
  },
};

/** The customer_identities table's statements. */
export const identityRows = {
  /**
   * Inserts in the order given; with `ignoreTaken`, an identity another customer holds is left to it.
   * Answers how many were inserted.
   */
  async insert(sql: Sql, tenantId: string, customerId: string, identities: Identity[], opts: { ignoreTaken?: boolean } = {}) {
    if (identities.length === 0) return 0;
    const rows = await sql.query(
      `INSERT INTO customer_identities (id, tenant_id, customer_id, provider, external_id, created_at)
       SELECT gen_random_uuid(), $1, $2, i.provider, i.external_id, now()
       FROM unnest($3::text[], $4::text[]) WITH ORDINALITY AS i(provider, external_id, n) ORDER BY i.n
       ${opts.ignoreTaken ? 'ON CONFLICT (tenant_id, provider, external_id) DO NOTHING' : ''} RETURNING 1`,
      [tenantId, customerId, identities.map((i) => i.provider), identities.map((i) => i.externalId)],
    );
    return rows.length;
  },
};
