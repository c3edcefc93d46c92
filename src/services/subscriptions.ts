import type { Sql } from '../db/sql.ts';

// The one module that writes `subscriptions`: the provider subscriptions we keep, as their latest event
// described them. Callers hold the subscription's object lock first (docs/concurrency.md).

export interface SubscriptionRow {
  id: string;
  customer_id: string | null;
  status: string;
  trial_end: Date | null;
  seats: number | null;
  mrr_minor: string | null;
  last_event_at: Date;
}

/** What an event says a subscription now is. */
export interface SubscriptionFacts {
  status: string;
  trialEnd: Date | null;
  seats: number | null;
  planId: string | null;
  mrrMinor: bigint | null;
  currency: string | null;
  canceledAt: Date | null;
}

export interface SubscriptionKey {
  tenantId: string;
  provider: string;
  externalId: string;
}

export async function subscriptionOf(sql: Sql, key: SubscriptionKey): Promise<SubscriptionRow | undefined> {
  const [row] = await sql.query<SubscriptionRow>(
    'SELECT id, customer_id, status, trial_end, seats, mrr_minor, last_event_at FROM subscriptions WHERE tenant_id = $1 AND provider = $2 AND external_id = $3',
    [key.tenantId, key.provider, key.externalId],
  );
  return row;
}

/**
 * Writes what an event at `at` says of a subscription: over the stored row (`existing`, read by
 * subscriptionOf under the same lock) or as a new one, created now or at `createdAt` (kept history that no
 * event brings, as the demo workspace's). Answers its id and customer.
 */
export async function saveSubscription(
  sql: Sql,
  key: SubscriptionKey & { account: string | null },
  existing: SubscriptionRow | undefined,
  facts: SubscriptionFacts,
  customerId: string | null,
  at: Date,
  createdAt?: Date,
): Promise<{ id: string; customer_id: string | null }> {
  const values = [
    facts.status,
    facts.trialEnd,
    facts.seats,
    facts.planId,
    facts.mrrMinor?.toString() ?? null,
    facts.currency,
    facts.canceledAt,
    customerId,
    at,
  ];
  const [row] = existing
    ? await sql.query<{ id: string; customer_id: string | null }>(
        `UPDATE subscriptions SET status = $1, trial_end = $2, seats = $3, plan_id = $4, mrr_minor = $5, currency = $6, canceled_at = $7,
           customer_id = $8, last_event_at = $9, updated_at = now() WHERE id = $10 RETURNING id, customer_id`,
        [...values, existing.id],
      )
    : await sql.query<{ id: string; customer_id: string | null }>(
        `INSERT INTO subscriptions (id, status, trial_end, seats, plan_id, mrr_minor, currency, canceled_at, customer_id, last_event_at, tenant_id, provider, external_id, account_id, created_at, updated_at)
         VALUES (gen_random_uuid(), $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, COALESCE($14, now()), now()) RETURNING id, customer_id`,
        [...values, key.tenantId, key.provider, key.externalId, key.account, createdAt ?? null],
      );
  return row!;
}

/**
 * Gives a customer the subscriptions kept without one that its new identity names. `skipLocked` passes by
 * the rows a transaction applying events holds (attribution's first pass, docs/concurrency.md).
 */
export async function attributeSubscriptions(
  sql: Sql,
  to: { tenantId: string; customerId: string },
  identity: { provider: string; externalId: string },
  opts: { skipLocked: boolean },
): Promise<void> {
  await sql.query(
    `UPDATE subscriptions SET customer_id = $1 WHERE id IN (
       SELECT id FROM subscriptions WHERE tenant_id = $2 AND customer_id IS NULL AND provider = $3 AND account_id = $4
       ${opts.skipLocked ? 'FOR UPDATE SKIP LOCKED' : ''})`,
    [to.customerId, to.tenantId, identity.provider, identity.externalId],
  );
}

/** Unlinks an erased customer's subscriptions: the revenue facts stay, without the customer or the provider's account id. */
export async function detachSubscriptionsOf(sql: Sql, tenantId: string, customerId: string, accountIds: string[]): Promise<void> {
  await sql.query(
    `UPDATE subscriptions SET customer_id = NULL, account_id = NULL
     WHERE tenant_id = $1 AND (customer_id = $2 OR account_id = ANY($3::text[]))`,
    [tenantId, customerId, accountIds],
  );
}
