import type pg from 'pg';
import { inTransaction, onPg, type Sql } from '../db/sql.ts';
import { DomainError, notFound } from '../errors.ts';
import type { RowOf } from '../contract/serialize.ts';
import { columnsOf } from '../db/columns.ts';
import { enqueueEvents } from '../outbox/events/enqueue.ts';
import { customerCreated } from '../outbox/events/payloads.ts';
import { EVENTS, type PayloadOf } from '../outbox/events/registry.ts';
import type { Db } from '../db/prisma.ts';
import type { Actor } from './audit.ts';
import { exclusivelyForTenant } from '../db/locks.ts';
import { eraseCustomer } from './customer-erasure.ts';
import { PG, pgCode } from '../db/pg-errors.ts';

// The one home of the customers and customer_identities rows. Plain SQL over `Sql`: the API writes them in
// its own transaction and the worker inside an inbound event's transaction, so one repository serves both.
// The scoring pipeline's set-based update of the derived columns (health_score, health_status,
// churn_probability, churn_risk_level) stays in src/scoring/recompute.ts: it is one statement over a whole
// batch, computed from the snapshots it writes in the same transaction.

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
type CustomerRow = RowOf<PayloadOf<'customer.created'>>;
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
  async exists(sql: Sql, tenantId: string, id: string): Promise<boolean> {
    const rows = await sql.query('SELECT 1 FROM customers WHERE id = $1 AND tenant_id = $2', [id, tenantId]);
    return rows.length > 0;
  },
};

/** The customer_identities table's statements. */
export const identityRows = {
  /** Inserts in the order given; with `ignoreTaken`, an identity another customer holds is left to it. */
  async insert(sql: Sql, tenantId: string, customerId: string, identities: Identity[], opts: { ignoreTaken?: boolean } = {}) {
    if (identities.length === 0) return;
    await sql.query(
      `INSERT INTO customer_identities (id, tenant_id, customer_id, provider, external_id, created_at)
       SELECT gen_random_uuid(), $1, $2, i.provider, i.external_id, now()
       FROM unnest($3::text[], $4::text[]) WITH ORDINALITY AS i(provider, external_id, n) ORDER BY i.n
       ${opts.ignoreTaken ? 'ON CONFLICT (tenant_id, provider, external_id) DO NOTHING' : ''}`,
      [tenantId, customerId, identities.map((i) => i.provider), identities.map((i) => i.externalId)],
    );
  },
};

/**
 * Which customer an event is about (docs/decisions.md §4), as an SQL expression over four parameters of the
 * statement it is part of: first by the provider's own account ids (a text[]) against the customer's
 * identities, then by the email domain in the payload against the customer's domain; null for neither.
 * A statement that writes what it finds (an invoice) resolves its customer itself, in the same round trip.
 */
export function customerOf(p: { tenant: string; provider: string; accountIds: string; emailDomain: string }): string {
  return `COALESCE(
    (SELECT customer_id FROM customer_identities WHERE tenant_id = ${p.tenant} AND provider = ${p.provider} AND external_id = ANY(${p.accountIds}) LIMIT 1),
    (SELECT id FROM customers WHERE tenant_id = ${p.tenant} AND domain = ${p.emailDomain} ORDER BY created_at LIMIT 1))`;
}

/** The account ids of a lookup that can match, for customerOf's text[] parameter. */
const accountIdsOf = (ids: (string | null | undefined)[]) => ids.filter((x): x is string => typeof x === 'string' && x.length > 0);

/** Which customer an event is about (customerOf), in one statement. */
export async function resolveCustomer(
  sql: Sql,
  tenantId: string,
  by: { provider: string; accountIds: (string | null | undefined)[]; emailDomain?: string | null },
): Promise<string | null> {
  const [row] = await sql.query<{ customer_id: string | null }>(
    `SELECT ${customerOf({ tenant: '$1::uuid', provider: '$2', accountIds: '$3::text[]', emailDomain: '$4' })} AS customer_id`,
    [tenantId, by.provider, accountIdsOf(by.accountIds), by.emailDomain ?? null],
  );
  return row?.customer_id ?? null;
}

/**
 * Events kept without a customer are attributed once the matching identity or domain is added:
 * signals, invoices and subscriptions alike. Runs in the caller's transaction, which holds the tenant's
 * lock exclusively (db/locks.ts): no event of the tenant is being applied meanwhile,
 * so every event applied before is seen here, every one applied after sees the customer, and none of
 * the rows changed here is held by anyone else.
 */
export async function attributePending(
  sql: Sql,
  tenantId: string,
  customerId: string,
  by: { identities: { provider: string; externalId: string }[]; domain?: string | null },
): Promise<void> {
  for (const { provider, externalId } of by.identities) {
    await sql.query(
      `UPDATE signals SET customer_id = $1
       WHERE tenant_id = $2 AND customer_id IS NULL AND source = $3 AND (account_id = $4 OR alt_account_id = $4)`,
      [customerId, tenantId, provider, externalId],
    );
    for (const table of ['invoices', 'subscriptions']) {
      await sql.query(
        `UPDATE ${table} SET customer_id = $1 WHERE tenant_id = $2 AND customer_id IS NULL AND provider = $3 AND account_id = $4`,
        [customerId, tenantId, provider, externalId],
      );
    }
  }
  if (by.domain) {
    await sql.query('UPDATE signals SET customer_id = $1 WHERE tenant_id = $2 AND customer_id IS NULL AND email_domain = $3', [
      customerId,
      tenantId,
      by.domain,
    ]);
  }
}

/**
 * A customer that a provider's account stands for (Stripe customers become ours): matched by identity, then
 * email domain, else created with its customer.created event. The identity is added and events kept
 * without a customer are attributed to it. Runs in the inbound event's transaction.
 */
export async function customerForProviderAccount(
  sql: Sql,
  tenantId: string,
  account: { provider: string; externalId: string; name: string; email: string | null; domain: string | null },
): Promise<string> {
  let customerId = await resolveCustomer(sql, tenantId, {
    provider: account.provider,
    accountIds: [account.externalId],
    emailDomain: account.domain,
  });
  if (!customerId) {
    const c = await customerRows.insert(sql, { tenantId, name: account.name, email: account.email, domain: account.domain });
    customerId = c.id;
    await enqueueEvents(sql, [customerCreated(c)]);
  }
  const identity = { provider: account.provider, externalId: account.externalId };
  await identityRows.insert(sql, tenantId, customerId, [identity], { ignoreTaken: true });
  await attributePending(sql, tenantId, customerId, { identities: [identity] });
  return customerId;
}

/** Unique violations become 409s that name the clashing field instead of a 500. */
function rethrowConflict(e: unknown, what: string): never {
  if (pgCode(e) === PG.uniqueViolation) throw new DomainError('conflict', `${what} already exists in this tenant.`);
  throw e;
}

/** What the API does with customers: create and change them, and count them for the portfolio. */
export function createCustomerService(deps: { pool: pg.Pool; prisma: Db }) {
  const { pool, prisma } = deps;
  return {
    /**
     * The new customer's id; events kept without a customer are attributed to it in the same transaction.
     * One that may be given events (identities or a domain) is created holding its tenant's attribution
     * lock exclusively, so it waits for the tenant's inbound events being applied, and those that follow
     * wait for it (attributePending).
     */
    async create(tenantId: string, input: Omit<NewCustomer, 'tenantId'> & { identities?: Identity[] | null }): Promise<string> {
      const identities = input.identities ?? [];
      const seen = new Set(identities.map((i) => `${i.provider}:${i.externalId}`));
      if (seen.size !== identities.length) throw new DomainError('conflict', 'The same identity is listed twice.');
      try {
        const create = async (sql: Sql) => {
          const c = await customerRows.insert(sql, { ...input, tenantId });
          await identityRows.insert(sql, tenantId, c.id, identities);
          await attributePending(sql, tenantId, c.id, { identities, domain: input.domain });
          await enqueueEvents(sql, [customerCreated(c)]);
          return c.id;
        };
        return await (identities.length > 0 || input.domain ? exclusivelyForTenant(pool, tenantId, create) : inTransaction(pool, create));
      } catch (e) {
        rethrowConflict(e, 'A customer with this external_id or one of these identities');
      }
    },
    async update(tenantId: string, id: string, changes: CustomerChanges): Promise<void> {
      try {
        const update = async (sql: Sql) => {
          const c = await customerRows.update(sql, tenantId, id, changes);
          if (!c) throw notFound(`Customer ${id}`);
          if (changes.domain) await attributePending(sql, tenantId, id, { identities: [], domain: changes.domain });
        };
        // A new domain attributes events: as for a new customer, under the tenant's lock.
        await (changes.domain ? exclusivelyForTenant(pool, tenantId, update) : inTransaction(pool, update));
      } catch (e) {
        if (e instanceof DomainError) throw e;
        rethrowConflict(e, 'A customer with this external_id');
      }
    },
    /** Removes the customer and every trace of it (src/services/customer-erasure.ts), in one transaction. */
    async erase(actor: Actor, id: string) {
      return exclusivelyForTenant(pool, actor.tenantId, (sql) => eraseCustomer(sql, actor, id));
    },
    async requireExists(tenantId: string, id: string): Promise<void> {
      if (!(await customerRows.exists(onPg(pool), tenantId, id))) throw notFound(`Customer ${id}`);
    },
    /** The tenant's customers and alerts at a glance. */
    async portfolio(tenantId: string) {
      const [byStatus, risky, average, alerts] = await Promise.all([
        prisma.customer.groupBy({ by: ['healthStatus'], where: { tenantId }, _count: { _all: true } }),
        prisma.customer.count({ where: { tenantId, churnRiskLevel: { in: ['high', 'critical'] } } }),
        prisma.customer.aggregate({ where: { tenantId }, _avg: { healthScore: true } }),
        prisma.alert.groupBy({
          by: ['severity'],
          where: { tenantId, status: { in: ['open', 'acknowledged'] } },
          _count: { _all: true },
        }),
      ]);
      const status = (s: 'healthy' | 'neutral' | 'at_risk' | null) => byStatus.find((r) => r.healthStatus === s)?._count._all ?? 0;
      return {
        customers: byStatus.reduce((n, r) => n + r._count._all, 0),
        healthy: status('healthy'),
        neutral: status('neutral'),
        atRisk: status('at_risk'),
        unscored: status(null),
        highRisk: risky,
        averageScore: average._avg.healthScore === null ? null : Math.round(average._avg.healthScore * 10) / 10,
        openAlerts: alerts.reduce((n, r) => n + r._count._all, 0),
        criticalAlerts: alerts.find((r) => r.severity === 'critical')?._count._all ?? 0,
      };
    },
  };
}

export type CustomerService = ReturnType<typeof createCustomerService>;
