import type pg from 'pg';
import { inTransaction, onPg, type Sql } from '../db/sql.ts';
import { DomainError, notFound } from '../errors.ts';
import { enqueueEvents } from '../outbox/events/enqueue.ts';
import { customerCreated } from '../outbox/events/payloads.ts';
import type { Db } from '../db/prisma.ts';
import type { Actor } from './audit.ts';
import { exclusivelyForTenant, lockObjects, lockTenants } from '../db/locks.ts';
import { announceErasure, eraseCustomer, type EmptyInboundBodies } from './customer-erasure.ts';
import { customerRows, identityRows, type CustomerChanges, type Identity, type NewCustomer } from './customer-rows.ts';
import { resolveCustomer } from './customer-match.ts';
import { attributeInvoices } from './invoices.ts';
import { attributeSignals } from '../scoring/signals.ts';
import { attributeSubscriptions } from './subscriptions.ts';
import { PG, pgCode } from '../db/pg-errors.ts';
import { createCustomerTallies, type CustomerTallies, type Tally } from './customer-tallies.ts';

/** What a customer was given that events kept without a customer may match: identities, a domain. */
export interface AttributionKeys {
  identities: Identity[];
  domain?: string | null;
}

/**
 * Events kept without a customer are attributed to it once it is given a matching identity or domain:
 * signals, invoices and subscriptions alike. Two passes (docs/concurrency.md, "Attribution"): the transaction
 * that gives the identity or domain attributes at once every such row no one else holds (`skipLocked`: rows a
 * transaction applying events holds are passed by, so this never waits on one) and appends a request; the
 * worker then completes the request holding the tenant's lock exclusively (attributeRequested), once every
 * transaction applying the tenant's events that was under way has ended: their rows are visible to it, and
 * those that begin after the commit see the customer themselves.
 */
export async function attributePending(
  sql: Sql,
  tenantId: string,
  customerId: string,
  by: AttributionKeys,
  opts: { skipLocked: boolean },
): Promise<void> {
  const to = { tenantId, customerId };
  for (const identity of by.identities) {
    await attributeSignals(sql, to, { identity }, opts);
    await attributeInvoices(sql, to, identity, opts);
    await attributeSubscriptions(sql, to, identity, opts);
  }
  if (by.domain) await attributeSignals(sql, to, { domain: by.domain }, opts);
}

/**
 * The keys of the objects (db/locks.ts `lockObjects`, within a tenant) a customer is known by: each identity,
 * and its domain. Whoever gives a customer one of them, or creates a customer found by one (a Stripe customer
 * event), holds its lock first, so two of them never both find no customer and both create one.
 */
export const customerKeys = (by: AttributionKeys): string[] => [
  ...by.identities.map((i) => `${i.provider}:${i.externalId}`),
  ...(by.domain ? [`domain:${by.domain}`] : []),
];

/** Attributes what it can now and asks the worker to complete it (attributePending). Runs in the caller's transaction. */
export async function attributeToCustomer(sql: Sql, tenantId: string, customerId: string, by: AttributionKeys): Promise<void> {
  if (by.identities.length === 0 && !by.domain) return;
  await attributePending(sql, tenantId, customerId, by, { skipLocked: true });
  await sql.query(
    `INSERT INTO attribution_requests (tenant_id, customer_id, providers, external_ids, domain) VALUES ($1, $2, $3::text[], $4::text[], $5)`,
    [tenantId, customerId, by.identities.map((i) => i.provider), by.identities.map((i) => i.externalId), by.domain ?? null],
  );
}

/** Drops the requests to attribute events to a customer being erased. Runs in the erasure's transaction. */
export async function dropAttributionRequests(sql: Sql, tenantId: string, customerId: string): Promise<void> {
  await sql.query('DELETE FROM attribution_requests WHERE tenant_id = $1 AND customer_id = $2', [tenantId, customerId]);
}

/**
 * The worker's half of attribution: for each tenant with requests, oldest first, in a transaction holding its
 * lock exclusively, attributes what each request names to its customer (if it still exists) and removes the
 * requests. A tenant another worker is completing now is left to it (a lock only tried, never waited for).
 * Answers how many requests were completed; a tenant whose transaction fails is tried again next time.
 */
export async function attributeRequested(pool: pg.Pool, log?: { error: (o: object, m: string) => void }, limit = 100): Promise<number> {
  const tenants = await onPg(pool).query<{ tenant_id: string }>(
    'SELECT tenant_id FROM attribution_requests GROUP BY tenant_id ORDER BY min(id) LIMIT $1',
    [limit],
  );
  let done = 0;
  for (const { tenant_id: tenantId } of tenants) {
    try {
      done += await inTransaction(pool, async (sql) => {
        const [mine] = await sql.query<{ mine: boolean }>('SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS mine', [
          `attribution:${tenantId}`,
        ]);
        if (!mine!.mine) return 0;
        await lockTenants(sql, [{ tenantId, exclusive: true }]);
        const requests = await sql.query<{
          id: string;
          customer_id: string;
          providers: string[];
          external_ids: string[];
          domain: string | null;
        }>('SELECT id, customer_id, providers, external_ids, domain FROM attribution_requests WHERE tenant_id = $1 ORDER BY id LIMIT $2', [
          tenantId,
          limit,
        ]);
        const present = new Set(
          (
            await sql.query<{ id: string }>('SELECT id FROM customers WHERE id = ANY($1::uuid[])', [requests.map((r) => r.customer_id)])
          ).map((r) => r.id),
        );
        for (const r of requests) {
          if (!present.has(r.customer_id)) continue;
          const identities = r.providers.map((provider, i) => ({ provider, externalId: r.external_ids[i]! }));
          await attributePending(sql, tenantId, r.customer_id, { identities, domain: r.domain }, { skipLocked: false });
        }
        await sql.query('DELETE FROM attribution_requests WHERE id = ANY($1::bigint[])', [requests.map((r) => r.id)]);
        return requests.length;
      });
    } catch (err) {
      log?.error({ err, tenantId }, 'attributing kept events failed; it will be tried again');
    }
  }
  return done;
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
  const identity = { provider: account.provider, externalId: account.externalId };
  const resolve = () =>
    resolveCustomer(sql, tenantId, { provider: account.provider, accountIds: [account.externalId], emailDomain: account.domain });
  // The caller holds the locks of the account and its domain (customerKeys), as does the API giving either.
  let customerId = await resolve();
  if (!customerId) {
    const c = await customerRows.insert(sql, { tenantId, name: account.name, email: account.email, domain: account.domain });
    customerId = c.id;
    // Before the inbound transaction's other writes, unlike every other enqueueEvents (docs/concurrency.md,
    // step 15): the one sequence counter this takes is the new customer's, which no other transaction can
    // know of, let alone wait for, before this one commits.
    await enqueueEvents(sql, [customerCreated(c)]);
  }
  // Kept events are attributed only when the identity is new to the customer.
  if (await identityRows.insert(sql, tenantId, customerId, [identity], { ignoreTaken: true }))
    await attributeToCustomer(sql, tenantId, customerId, { identities: [identity] });
  return customerId;
}

/** Unique violations become 409s that name the clashing field instead of a 500. */
function rethrowConflict(e: unknown, what: string): never {
  if (pgCode(e) === PG.uniqueViolation) throw new DomainError('conflict', `${what} already exists in this tenant.`);
  throw e;
}

/** What the API does with customers: create and change them, and count them for the portfolio. */
export function createCustomerService(deps: {
  pool: pg.Pool;
  prisma: Db;
  tallies?: CustomerTallies;
  emptyInboundBodies: EmptyInboundBodies;
}) {
  const { pool, prisma } = deps;
  const tallies = deps.tallies ?? createCustomerTallies({ pool });
  return {
    /** The new customer's id; events kept without a customer are attributed to it (attributeToCustomer). */
    async create(tenantId: string, input: Omit<NewCustomer, 'tenantId'> & { identities?: Identity[] | null }): Promise<string> {
      const identities = input.identities ?? [];
      const seen = new Set(identities.map((i) => `${i.provider}:${i.externalId}`));
      if (seen.size !== identities.length) throw new DomainError('conflict', 'The same identity is listed twice.');
      try {
        return await inTransaction(pool, async (sql) => {
          // The locks of what it will be known by, as a Stripe customer event takes them (customerKeys).
          await lockObjects(
            sql,
            customerKeys({ identities, domain: input.domain }).map((k) => `${tenantId}:${k}`),
          );
          const c = await customerRows.insert(sql, { ...input, tenantId });
          await identityRows.insert(sql, tenantId, c.id, identities);
          await attributeToCustomer(sql, tenantId, c.id, { identities, domain: input.domain });
          await enqueueEvents(sql, [customerCreated(c)]);
          return c.id;
        });
      } catch (e) {
        rethrowConflict(e, 'A customer with this external_id or one of these identities');
      }
    },
    async update(tenantId: string, id: string, changes: CustomerChanges): Promise<void> {
      try {
        await inTransaction(pool, async (sql) => {
          if (changes.domain)
            await lockObjects(
              sql,
              customerKeys({ identities: [], domain: changes.domain }).map((k) => `${tenantId}:${k}`),
            );
          const c = await customerRows.update(sql, tenantId, id, changes);
          if (!c) throw notFound(`Customer ${id}`);
          if (changes.domain) await attributeToCustomer(sql, tenantId, id, { identities: [], domain: changes.domain });
        });
      } catch (e) {
        if (e instanceof DomainError) throw e;
        rethrowConflict(e, 'A customer with this external_id');
      }
    },
    /** Removes the customer and every trace of it (src/services/customer-erasure.ts), in one transaction. */
    async erase(actor: Actor, id: string) {
      return exclusivelyForTenant(pool, actor.tenantId, async (sql) => {
        const erased = await eraseCustomer(sql, actor, id, deps.emptyInboundBodies);
        await dropAttributionRequests(sql, actor.tenantId, id);
        await announceErasure(sql, actor.tenantId, erased);
        return erased;
      });
    },
    async requireExists(tenantId: string, id: string): Promise<void> {
      if (!(await customerRows.exists(onPg(pool), tenantId, id))) throw notFound(`Customer ${id}`);
    },
    /** The tenant's customers and alerts at a glance: the customers from its tallies (src/services/customer-tallies.ts). */
    async portfolio(tenantId: string) {
      const [groups, alerts] = await Promise.all([
        tallies.of(tenantId),
        prisma.alert.groupBy({
          by: ['severity'],
          where: { tenantId, status: { in: ['open', 'acknowledged'] } },
          _count: { _all: true },
        }),
      ]);
      const sum = (pick: (t: Tally) => number, which: (t: Tally) => boolean = () => true) =>
        groups.filter(which).reduce((n, t) => n + pick(t), 0);
      const status = (s: 'healthy' | 'neutral' | 'at_risk' | null) =>
        sum(
          (t) => t.customers,
          (t) => t.healthStatus === s,
        );
      const scored = sum((t) => t.scored);
      return {
        customers: sum((t) => t.customers),
        healthy: status('healthy'),
        neutral: status('neutral'),
        atRisk: status('at_risk'),
        unscored: status(null),
        highRisk: sum(
          (t) => t.customers,
          (t) => t.churnRiskLevel === 'high' || t.churnRiskLevel === 'critical',
        ),
        averageScore: scored === 0 ? null : Math.round((sum((t) => t.scoreSum) / scored) * 10) / 10,
        openAlerts: alerts.reduce((n, r) => n + r._count._all, 0),
        criticalAlerts: alerts.find((r) => r.severity === 'critical')?._count._all ?? 0,
      };
    },
  };
}

export type CustomerService = ReturnType<typeof createCustomerService>;
