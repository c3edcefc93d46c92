import type { InvoiceStatus } from '../contract/enums.ts';
import { eventOf, invoiceEvent, paymentEvent } from '../outbox/events/payloads.ts';
import { recordSignals, type SignalInput } from '../scoring/signals.ts';
import type { SignalKind } from '../scoring/signal-kinds.ts';
import { churnOutcomeRows } from './churn.ts';
import { customerForProviderAccount } from './customers.ts';
import { resolveCustomer } from './customer-match.ts';
import { canMove, EVENT_FOR_STATUS } from './invoice-state.ts';
import { invoiceOfPayment, latestPaymentOf, type PaymentOfInvoice, rememberPayments } from './invoice-payments.ts';
import { findOrCreateInvoices, type FoundInvoice, invoiceIdOf, type InvoiceInput, type InvoiceRow, moveInvoices } from './invoices.ts';
import { saveSubscription, type SubscriptionFacts, subscriptionOf } from './subscriptions.ts';
import type { ApplyContext, Outcome } from './inbound-context.ts';
import { type AppliedTogether, appliedTogether, waves } from '../runtime/applied-together.ts';

// The billing facts a payment processor's events state (a normalizer reads them; src/ingest/normalizers/stripe.ts),
// applied to our invoices, payments, subscriptions and customers, with the signals and outbound events they make.
// The provider is the event's: every statement here keys rows by it.

/** A provider's customer account, created or updated: our customer for it (matched by identity, then email domain, else created). */
export interface AccountSeen {
  kind: 'account.seen';
  account: string;
  name: string;
  email: string | null;
  domain: string | null;
}

/** An invoice event: the invoice it names moves to `target` (the state machine in invoice-state.ts allowing). */
export interface InvoiceTransition {
  kind: 'invoice.transition';
  target: InvoiceStatus;
  /** Enough to create our row for it in state `target`, if it is new. */
  input: InvoiceInput;
  /** The total it now states, in minor units; null keeps the stored one. */
  total: bigint | null;
  dueAt: Date | null;
  /** When the provider says it happened. */
  at: Date;
  /** The payments it names, its own first. */
  payments: string[];
}

/** The one event that ties a payment to its invoice (a payment processor's newer API versions). */
export interface InvoicePaymentPaid {
  kind: 'invoice.payment_paid';
  invoiceExternalId: string;
  paymentId: string;
}

export interface InvoicePaymentFailed {
  kind: 'invoice.payment_failed';
  input: InvoiceInput;
  payments: string[];
  amountMinor: bigint;
  reason: string;
  attemptCount: unknown;
  /** The provider's id of the event: one announcement per event. */
  eventKey: string;
  at: Date;
}

export interface ChargeRefunded {
  kind: 'charge.refunded';
  chargeId: string;
  account: string | null;
  emailDomain: string | null;
  /** The invoice the charge names (older API versions); otherwise found through its payments. */
  invoiceExternalId: string | null;
  /** The payment intent and the charge: the payments an invoice may have been paid by. */
  paymentIds: string[];
  currency: string;
  refundedMinor: bigint;
  /** The reason the event carries, or one the provider's refund events stored beside it give. */
  reason: string | null;
  at: Date;
}

export interface SubscriptionChanged {
  kind: 'subscription.changed';
  externalId: string;
  account: string | null;
  facts: SubscriptionFacts;
  /** A creation event: never newer than what is stored at the same second. */
  created: boolean;
  deleted: boolean;
  eventKey: string;
  at: Date;
}

export type BillingCommand =
  AccountSeen | InvoiceTransition | InvoicePaymentPaid | InvoicePaymentFailed | ChargeRefunded | SubscriptionChanged;

export const isInvoiceTransition = (c: { kind: string }): c is InvoiceTransition => c.kind === 'invoice.transition';

/**
 * Whether a command may be applied in its turn inside an invoice segment while the segment's transitions
 * are applied at its first: a subscription change reads and writes only its subscription, looks customers up
 * without creating any, and adds signals and churn outcomes, none of which an invoice transition reads (nor
 * does it read what they write).
 */
export const touchesNoInvoice = (c: { kind: string }): boolean => c.kind === 'subscription.changed';

/** The payments an invoice names, as they are remembered for it. */
const paymentsOf = (tenantId: string, invoiceExternalId: string, paymentIds: string[]): PaymentOfInvoice[] =>
  paymentIds.map((paymentId) => ({ tenantId, invoiceExternalId, paymentId }));

/** A billing command other than an invoice transition (those go through their segment: inbound-commands.ts). */
export async function applyBilling(ctx: ApplyContext, command: Exclude<BillingCommand, InvoiceTransition>): Promise<Outcome> {
  switch (command.kind) {
    case 'account.seen':
      await customerForProviderAccount(ctx.sql, ctx.event.tenantId, {
        provider: ctx.event.provider,
        externalId: command.account,
        name: command.name,
        email: command.email,
        domain: command.domain,
      });
      return 'processed';
    case 'invoice.payment_paid':
      await rememberPayments(ctx.sql, ctx.event.provider, paymentsOf(ctx.event.tenantId, command.invoiceExternalId, [command.paymentId]));
      return 'processed';
    case 'invoice.payment_failed':
      return paymentFailed(ctx, command);
    case 'charge.refunded':
      return refunded(ctx, command);
    case 'subscription.changed':
      return subscriptionChanged(ctx, command);
  }
}

/**
 * Applies invoice transitions that name different invoices, with one statement for each step of them all:
 * find or create the invoices, move those whose state machine allows it, record the signals. Each event's
 * outcome is what it would be applied alone. Their payments are the segment's.
 */
async function applyTransitions(ctx: ApplyContext, wave: { id: string; item: InvoiceTransition }[]): Promise<Map<string, Outcome>> {
  const { sql, outbox } = ctx;
  const provider = ctx.event.provider;
  const found = await findOrCreateInvoices(
    sql,
    provider,
    wave.map(({ item }) => item.input),
  );
  const outcomes = new Map<string, Outcome>();
  const moves: { eventId: string; t: InvoiceTransition; invoice: InvoiceRow; created: boolean; update: boolean }[] = [];
  for (const [n, { id: eventId, item: t }] of wave.entries()) {
    const { invoice, created } = found[n]!;
    if (!created && !canMove(invoice.status, t.target)) outcomes.set(eventId, 'ignored');
    // A row just created already has the target status; only the event time of paid/overdue remains to set.
    else moves.push({ eventId, t, invoice, created, update: !created || t.target === 'paid' || t.target === 'overdue' });
  }
  const moved = await moveInvoices(
    sql,
    moves
      .filter((m) => m.update)
      .map(({ t, invoice }) => ({
        id: invoice.id,
        status: t.target,
        total: (t.total ?? BigInt(invoice.total_minor)).toString(),
        dueAt: t.dueAt,
        at: t.at,
      })),
  );
  const signals: SignalInput[] = [];
  for (const { eventId, t, invoice, created, update } of moves) {
    const current = update ? moved.get(invoice.id)! : invoice;
    // invoice.created announces every invoice once, when it comes into being here, whatever event made it:
    // one first heard of as paid is announced created (its payload as it now is: paid), then paid. The
    // provider's invoice.created arriving after that changes nothing and announces nothing again.
    if (created) outbox.push(invoiceEvent('invoice.created', current));
    const type = EVENT_FOR_STATUS[t.target];
    if (type && t.target !== 'draft') outbox.push(invoiceEvent(type, current));
    if (t.target === 'paid' || t.target === 'overdue')
      signals.push({
        tenantId: t.input.tenantId,
        customerId: current.customer_id,
        inboxEventId: eventId,
        source: provider,
        kind: t.target === 'paid' ? 'billing.invoice_paid' : 'billing.invoice_overdue',
        occurredAt: t.at,
        value: Number(current.total_minor),
        accountId: current.account_id,
        attributes: { invoice_id: current.id, currency: current.currency },
      });
    outcomes.set(eventId, 'processed');
  }
  await recordSignals(sql, signals);
  return outcomes;
}

/**
 * Consecutive invoice transitions of a batch, applied together when the first of them is reached
 * (runtime/applied-together.ts): their payments remembered in their order, then in waves — the first
 * transition of each invoice in the first, the second in the second, and so on — each wave by
 * applyTransitions. That is the outcome of applying them one after the other: the transitions of one invoice
 * keep their order; a transition reads and changes only its invoice (its payments are written in the events'
 * order, and nothing in a segment reads them) and creates no customer, so transitions of different invoices
 * cannot see each other. Any other command ends the segment, since what it does may change what a later
 * transition finds (its customer, say), unless nothing it reads or writes meets a transition's
 * (`touchesNoInvoice`). Per event, a statement of its own cost a worker and PostgreSQL more than the rows it
 * writes. A transition applied on its own is a segment of one.
 */
export type InvoiceSegment = AppliedTogether<InvoiceTransition, Outcome, ApplyContext>;

export const invoiceSegment = (): InvoiceSegment =>
  appliedTogether(async (entries, ctx: ApplyContext) => {
    await rememberPayments(
      ctx.sql,
      ctx.event.provider,
      entries.flatMap(({ item: t }) => paymentsOf(t.input.tenantId, t.input.externalId, t.payments)),
    );
    const outcomes = new Map<string, Outcome>();
    for (const wave of waves(entries, ({ item: t }) => `${t.input.tenantId}:${t.input.externalId}`))
      for (const [id, outcome] of await applyTransitions(ctx, wave)) outcomes.set(id, outcome);
    return outcomes;
  });

async function paymentFailed(ctx: ApplyContext, c: InvoicePaymentFailed): Promise<Outcome> {
  const { sql, event } = ctx;
  const tenantId = c.input.tenantId;
  const [{ invoice, created }] = (await findOrCreateInvoices(sql, event.provider, [c.input])) as [FoundInvoice];
  // First heard of by its failed payment: announced created before the failure (applyTransitions).
  if (created) ctx.outbox.push(invoiceEvent('invoice.created', invoice));
  await rememberPayments(sql, event.provider, paymentsOf(tenantId, c.input.externalId, c.payments));
  // A current-version invoice names no payment; one paid before (invoice_payment.paid) may be remembered.
  // Failing that, the provider's invoice id is the one reference the event gives to the failed attempt.
  const paymentId = c.payments[0] ?? (await latestPaymentOf(sql, tenantId, event.provider, c.input.externalId)) ?? c.input.externalId;
  ctx.outbox.push(
    paymentEvent(
      'payment.failed',
      {
        tenantId,
        paymentId,
        invoiceId: invoice.id,
        customerId: invoice.customer_id,
        amountMinor: c.amountMinor,
        currency: invoice.currency,
        reason: c.reason,
      },
      { subject: invoice.id, dedupKey: `payment.failed:${c.eventKey}` },
    ),
  );
  await recordSignals(sql, [
    {
      tenantId,
      customerId: invoice.customer_id,
      inboxEventId: event.id,
      source: event.provider,
      kind: 'billing.payment_failed',
      occurredAt: c.at,
      value: Number(c.amountMinor),
      accountId: invoice.account_id,
      attributes: { invoice_id: invoice.id, attempt_count: c.attemptCount ?? null },
    },
  ]);
  return 'processed';
}

async function refunded(ctx: ApplyContext, c: ChargeRefunded): Promise<Outcome> {
  const { sql, event } = ctx;
  const tenantId = event.tenantId;
  const customerId = await resolveCustomer(sql, tenantId, {
    provider: event.provider,
    accountIds: [c.account],
    emailDomain: c.emailDomain,
  });
  if (c.invoiceExternalId) await rememberPayments(sql, event.provider, paymentsOf(tenantId, c.invoiceExternalId, c.paymentIds));
  const invoiceExternal = c.invoiceExternalId ?? (await invoiceOfPayment(sql, tenantId, event.provider, c.paymentIds));
  const invoiceId = invoiceExternal ? await invoiceIdOf(sql, tenantId, event.provider, invoiceExternal) : null;
  ctx.outbox.push(
    paymentEvent(
      'payment.refunded',
      { tenantId, paymentId: c.chargeId, invoiceId, customerId, amountMinor: c.refundedMinor, currency: c.currency, reason: c.reason },
      { subject: c.chargeId, dedupKey: `payment.refunded:${c.chargeId}:${c.refundedMinor}` },
    ),
  );
  await recordSignals(sql, [
    {
      tenantId,
      customerId,
      inboxEventId: event.id,
      source: event.provider,
      kind: 'billing.refund',
      occurredAt: c.at,
      value: Number(c.refundedMinor),
      accountId: c.account,
      attributes: { charge_id: c.chargeId, currency: c.currency },
    },
  ]);
  return 'processed';
}

async function subscriptionChanged(ctx: ApplyContext, c: SubscriptionChanged): Promise<Outcome> {
  const { sql, event } = ctx;
  const tenantId = event.tenantId;
  const { facts, at } = c;
  const key = { tenantId, provider: event.provider, externalId: c.externalId };
  const existing = await subscriptionOf(sql, key);
  // An older event never overwrites what a newer one already said. Event times are whole seconds, so a
  // creation and an update often share one: a creation is never newer than what is stored, nor is an update
  // newer than the deletion of that second.
  const sameSecond = existing !== undefined && existing.last_event_at.getTime() === at.getTime();
  if (existing && (existing.last_event_at > at || (sameSecond && (c.created || (existing.status === 'canceled' && !c.deleted))))) {
    return 'ignored';
  }
  const customerId = existing?.customer_id ?? (await resolveCustomer(sql, tenantId, { provider: event.provider, accountIds: [c.account] }));
  const sub = await saveSubscription(sql, { ...key, account: c.account }, existing, facts, customerId, at);

  const signals: { kind: SignalKind; value: number; attributes?: Record<string, unknown> }[] = [];
  // The trial rule (docs/decisions.md §5): only a later trial_end on a subscription that already had one is an extension.
  if (existing?.trial_end && facts.trialEnd && facts.trialEnd > existing.trial_end) {
    ctx.outbox.push(
      eventOf(
        'subscription.trial_extended',
        { tenantId, subscriptionId: sub.id, customerId: sub.customer_id, previousTrialEnd: existing.trial_end, trialEnd: facts.trialEnd },
        // One announcement per provider event: a trial moved later, back, then later again is extended twice.
        { subject: sub.id, dedupKey: `subscription.trial_extended:${c.eventKey}` },
      ),
    );
    signals.push({ kind: 'billing.trial_extended', value: (facts.trialEnd.getTime() - existing.trial_end.getTime()) / 86_400_000 });
  }
  if (facts.seats !== null && facts.seats !== (existing?.seats ?? null)) {
    signals.push({ kind: 'growth.seats', value: facts.seats, attributes: { previous: existing?.seats ?? null } });
  }
  if (existing?.mrr_minor != null && facts.mrrMinor !== null && facts.mrrMinor !== BigInt(existing.mrr_minor)) {
    signals.push({
      kind: 'growth.mrr_change',
      value: Number(facts.mrrMinor - BigInt(existing.mrr_minor)),
      attributes: { currency: facts.currency },
    });
  }
  if (facts.status !== existing?.status)
    signals.push({
      kind: 'billing.subscription_status',
      value: 1,
      attributes: { status: facts.status, previous: existing?.status ?? null },
    });
  await recordSignals(
    sql,
    signals.map((s) => ({
      tenantId,
      customerId: sub.customer_id,
      inboxEventId: event.id,
      source: event.provider,
      occurredAt: at,
      accountId: c.account,
      ...s,
    })),
  );

  if (facts.status === 'canceled' && existing?.status !== 'canceled' && sub.customer_id) {
    await churnOutcomeRows.insert(sql, {
      tenantId,
      customerId: sub.customer_id,
      churned: true,
      at: facts.canceledAt ?? at,
      source: event.provider,
    });
  }
  return 'processed';
}
