import type { Sql } from '../db/sql.ts';
import { notFound } from '../errors.ts';
import { sequenceSubject } from '../contract/sequence-subject.ts';
import { enqueueEvents } from '../outbox/events/enqueue.ts';
import { forgetEventsAbout, forgetSequences } from '../outbox/events/enqueue.ts';
import { forgetDeliveriesAbout } from '../outbox/sender/delivery-store.ts';
import { recordAudit, type Actor } from './audit.ts';
import { customerRows } from './customer-rows.ts';
import { dequeueCustomer } from '../scoring/scoring-queue.ts';
import { forgetPaymentsOf } from './invoice-payments.ts';
import { forgetAnswersNaming } from './idempotency-keys.ts';
import { detachInvoicesOf } from './invoices.ts';
import { eraseSignalsOf } from '../scoring/signals.ts';
import { detachSubscriptionsOf } from './subscriptions.ts';

// Erasure of one customer (docs/data-lifecycle.md): everything that names or describes the customer goes,
// in one transaction, so a failure leaves the customer whole and a success leaves nothing behind.
// Rows of the customer's own tables are removed by the foreign keys' ON DELETE CASCADE (identities,
// snapshot, history, the health changes' explanations, prediction, alerts, outcomes); the rest is done here because those
// rows outlive a customer or hold the customer's data in text.

/** Identifiers shorter than this are not searched for in raw bodies: they would match unrelated text. */
const MIN_TERM_LENGTH = 4;

export interface Erased {
  id: string;
  externalId: string | null;
  signals: number;
  inboundBodies: number;
  outboxEvents: number;
  deliveries: number;
  payments: number;
}

/** What names a customer in raw inbound bodies, lower-cased: any text of it, and its own values as JSON strings. */
export interface BodiesAbout {
  tenantId: string;
  customerId: string;
  terms: string[];
  ownValues: string[];
}

/**
 * Empties the raw inbound bodies about a customer, in the erasure's transaction; answers how many. The
 * inbox's rows are the inbound pipeline's to change, and services do not import it: the composition root
 * hands this in.
 */
export type EmptyInboundBodies = (sql: Sql, about: BodiesAbout) => Promise<number>;

export async function eraseCustomer(sql: Sql, actor: Actor, customerId: string, emptyInboundBodies: EmptyInboundBodies): Promise<Erased> {
  const tenantId = actor.tenantId;
  // The caller holds the tenant's lock exclusively (db/locks.ts): no event of the tenant is being applied,
  // and those that begin wait, holding no lock but on their inbox rows still to apply, which the bodies'
  // update below passes by. Then the customer's row, before any row that depends on it (docs/concurrency.md).
  const [c] = await sql.query<{ external_id: string | null; name: string; email: string | null; domain: string | null }>(
    'SELECT external_id, name, email, domain FROM customers WHERE tenant_id = $1 AND id = $2 FOR UPDATE',
    [tenantId, customerId],
  );
  if (!c) throw notFound(`Customer ${customerId}`);
  const identities = await sql.query<{ provider: string; external_id: string }>(
    'SELECT provider, external_id FROM customer_identities WHERE tenant_id = $1 AND customer_id = $2',
    [tenantId, customerId],
  );
  const accountIds = identities.map((i) => i.external_id);
  // Searched in any case: a provider may write a name or an address capitalised differently.
  const searchable = (values: (string | null)[]) =>
    values.filter((t): t is string => typeof t === 'string' && t.length >= MIN_TERM_LENGTH).map((t) => t.toLowerCase());
  // The domain names people through their addresses there ("@initech.example"); alone it is in URLs of
  // anything ("stripe.com" in every Stripe invoice's link).
  const terms = searchable([customerId, c.email, c.name, c.domain && `@${c.domain}`, ...accountIds]);
  // The values that name this customer and no other, as a provider writes them: a whole JSON string. The
  // external id is the tenant's and often short ("2024", "4711"): it is looked for only whole, not in dates.
  const ownValues = searchable([customerId, c.external_id, c.email, ...accountIds]).map((t) => JSON.stringify(t));

  // Raw inbound bodies: those that produced the customer's signals and any that mention it. The row stays
  // (provider, type, dedup key, times) so a redelivery is still recognised as a duplicate. Its last error
  // goes too: it may quote the body; and the object it was about (a provider id read from the body).
  // An event not yet processed has not been applied to anyone: it is set aside (`ignored`, its body gone)
  // only when one of its values is one of the customer's own ids or its email. Any text in it would take
  // other customers' events with it, unapplied: a name is any word ("Invoice" is in every Stripe invoice
  // event), a domain is in URLs ("stripe.com" in each invoice's link), an external id "2024" in every date.
  // Events not yet applied that a batch holds, waiting for the lock above, are passed by: they are applied
  // after the erasure, as if they had arrived after it.
  const bodies = await emptyInboundBodies(sql, { tenantId, customerId, terms, ownValues });
  // Signals: the customer's, and those kept without a customer that would be attributed to it.
  const signals = await eraseSignalsOf(sql, tenantId, { customerId, accountIds, domain: c.domain });
  // Revenue facts stay, without the link or the provider's account id; the payments remembered for the
  // customer's invoices go: a payment id is the provider's reference to the person's payment.
  const invoices = await detachInvoicesOf(sql, tenantId, customerId, accountIds);
  const payments = await forgetPaymentsOf(sql, tenantId, invoices);
  await detachSubscriptionsOf(sql, tenantId, customerId, accountIds);
  // Outbound events about the customer and their deliveries (with their attempts' response excerpts).
  const outbox = await forgetEventsAbout(sql, tenantId, customerId);
  const deliveries = await forgetDeliveriesAbout(sql, tenantId, outbox, customerId);
  // Stored answers of idempotent requests that returned the customer.
  await forgetAnswersNaming(sql, tenantId, customerId);
  await customerRows.remove(sql, tenantId, customerId);
  await dequeueCustomer(sql, customerId);

  const erased: Erased = {
    id: customerId,
    externalId: c.external_id,
    signals: signals.length,
    inboundBodies: bodies,
    outboxEvents: outbox.length,
    deliveries,
    payments,
  };
  // The record of the erasure names only the id and counts: nothing that identifies the person.
  await recordAudit(sql, actor, {
    action: 'customer.erased',
    targetType: 'customer',
    targetId: customerId,
    changes: {
      signals: erased.signals,
      inbound_bodies: erased.inboundBodies,
      outbox_events: erased.outboxEvents,
      deliveries: erased.deliveries,
      payments: erased.payments,
    },
  });
  return erased;
}

/**
 * Announces an erasure with customer.deleted, at the end of the erasing transaction: the outbox's sequence
 * counters are the last lock a transaction takes (docs/concurrency.md). The event takes the customer's next
 * number, the one after every event its receivers saw; then the counter goes with the customer, whose id no
 * event will name again.
 */
export async function announceErasure(sql: Sql, tenantId: string, erased: Pick<Erased, 'id' | 'externalId'>): Promise<void> {
  await enqueueEvents(sql, [
    {
      tenantId,
      type: 'customer.deleted',
      subject: erased.id,
      dedupKey: `customer.deleted:${erased.id}`,
      payload: { tenant_id: tenantId, id: erased.id, external_id: erased.externalId },
    },
  ]);
  await forgetSequences(sql, tenantId, [sequenceSubject('customer', erased.id)]);
}
