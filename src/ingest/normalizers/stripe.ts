import { currencyCode, formatAmount, isCurrencyCode } from '../../contract/money.ts';
import { eventOf, invoiceEvent } from '../../outbox/events/payloads.ts';
import { churnOutcomeRows } from '../../services/churn.ts';
import { customerForProviderAccount, customerKeys } from '../../services/customers.ts';
import { resolveCustomer } from '../../services/customer-match.ts';
import { companyDomain } from '../email-domain.ts';
import { canMove, EVENT_FOR_STATUS, type InvoiceStatus } from '../invoice-state.ts';
import { recordSignals, type SignalInput } from '../../scoring/signals.ts';
import {
  invoiceOfPayment,
  latestPaymentOf,
  type PaymentOfInvoice,
  rememberPayments as rememberPaymentsOf,
} from '../../services/invoice-payments.ts';
import type { Sql } from '../../db/sql.ts';
import {
  findOrCreateInvoices,
  type FoundInvoice,
  invoiceIdOf,
  type InvoiceInput,
  type InvoiceRow,
  moveInvoices,
} from '../../services/invoices.ts';
import { saveSubscription, type SubscriptionFacts, subscriptionOf } from '../../services/subscriptions.ts';
import type { FieldError } from '../../errors.ts';
import { MAX_AMOUNT, MAX_COUNT, RangeCheck } from './ranges.ts';
import type { OutboxInput } from '../../outbox/events/enqueue.ts';
import { fromUnix, type NormalizeContext, type Normalizer, type Outcome, type StoredEvent, str } from './types.ts';

const PROVIDER = 'stripe';

const INVOICE_EVENTS: Record<string, InvoiceStatus> = {
  'invoice.created': 'draft',
  'invoice.finalized': 'open',
  'invoice.sent': 'sent',
  'invoice.paid': 'paid',
  'invoice.payment_succeeded': 'paid',
  'invoice.overdue': 'overdue',
  'invoice.voided': 'void',
  'invoice.marked_uncollectible': 'uncollectible',
};

/** The id of a reference Stripe sends either as an id or, when expanded, as the object. */
const idOf = (v: any): string | null => str(v && typeof v === 'object' ? v.id : v);
/** The account id of an object's customer, whether expanded or not. */
const accountOf = (o: any): string | null => idOf(o?.customer);
const eventTimeOf = (event: StoredEvent) => fromUnix(event.body?.created) ?? event.receivedAt;
const minor = (v: unknown, fallback: string | number = 0) => BigInt(Math.trunc(Number(v ?? fallback)) || 0);

const customerFor = (ctx: NormalizeContext, account: string | null, email?: unknown) =>
  resolveCustomer(ctx.sql, ctx.event.tenantId, { provider: PROVIDER, accountIds: [account], emailDomain: companyDomain(email) });

/** Stripe customers become our customers (matched by identity, then email domain, else created). */
async function upsertCustomer(ctx: NormalizeContext, o: any): Promise<Outcome> {
  const { sql } = ctx;
  const tenantId = ctx.event.tenantId;
  const account = str(o?.id);
  if (!account) return 'ignored';
  await customerForProviderAccount(sql, tenantId, {
    provider: PROVIDER,
    externalId: account,
    name: str(o.name) ?? str(o.email) ?? account,
    email: str(o.email)?.toLowerCase() ?? null,
    domain: companyDomain(o.email),
  });
  return 'processed';
}

/**
 * The payments an invoice names, the one it calls its own first, then its InvoicePayments newest first.
 * Before API version 2025-03-31 an invoice carries its
 * `payment_intent` and `charge`; since then it carries neither, and only `payments` (InvoicePayment
 * objects, present when expanded) says which PaymentIntent or Charge paid it.
 */
function paymentsOfInvoice(o: any): string[] {
  const listed: any[] = Array.isArray(o?.payments?.data) ? o.payments.data : [];
  const fromList = [...listed].sort((a, b) => Number(b?.created ?? 0) - Number(a?.created ?? 0)).map((ip) => paymentOfInvoicePayment(ip));
  return [idOf(o?.payment_intent), idOf(o?.charge), ...fromList].filter((id): id is string => id !== null);
}

/** The PaymentIntent, Charge or PaymentRecord an InvoicePayment object stands for. */
const paymentOfInvoicePayment = (ip: any): string | null =>
  idOf(ip?.payment?.payment_intent) ?? idOf(ip?.payment?.charge) ?? idOf(ip?.payment?.payment_record);

const paymentsOf = (tenantId: string, invoiceExternalId: string, paymentIds: string[]): PaymentOfInvoice[] =>
  paymentIds.map((paymentId) => ({ tenantId, invoiceExternalId, paymentId }));

const rememberPayments = (sql: Sql, payments: PaymentOfInvoice[]) => rememberPaymentsOf(sql, PROVIDER, payments);

/** `invoice_payment.paid` (API 2025-03-31 and later): the one event that ties a payment to its invoice. */
async function invoicePaymentPaid(ctx: NormalizeContext, o: any): Promise<Outcome> {
  const invoiceExternalId = idOf(o?.invoice);
  const paymentId = paymentOfInvoicePayment(o);
  if (!invoiceExternalId || !paymentId) return 'ignored';
  await rememberPayments(ctx.sql, paymentsOf(ctx.event.tenantId, invoiceExternalId, [paymentId]));
  return 'processed';
}

/** What a new invoice is made of, from the event's invoice object and the status it is created in. */
function invoiceInput(tenantId: string, o: any, initial: InvoiceStatus): InvoiceInput {
  return {
    tenantId,
    externalId: str(o?.id)!,
    account: accountOf(o),
    initial,
    total: minor(o?.total ?? o?.amount_due).toString(),
    currency: currencyCode(o?.currency ?? 'usd'),
    dueAt: fromUnix(o?.due_date),
    emailDomain: companyDomain(o?.customer_email),
  };
}

/** An invoice event (INVOICE_EVENTS): the invoice it names moves to `target`. */
interface Transition {
  event: StoredEvent;
  o: any;
  target: InvoiceStatus;
  input: InvoiceInput;
}

/** The transition an event asks for, if it is an invoice event naming an invoice. */
function transitionOf(event: StoredEvent): Transition | null {
  const type = String(event.body?.type ?? '');
  const o = event.body?.data?.object;
  if (event.provider !== PROVIDER || !Object.hasOwn(INVOICE_EVENTS, type) || !str(o?.id)) return null;
  const target = INVOICE_EVENTS[type]!;
  return { event, o, target, input: invoiceInput(event.tenantId, o, target) };
}

/**
 * Applies invoice events that name different invoices, with one statement for each step of them all: find
 * or create the invoices, move those whose state machine allows it, record the signals. Each event's
 * outcome is what it would be applied alone. Their payments are the caller's (InvoiceSegment).
 */
async function applyTransitions(sql: Sql, outbox: OutboxInput[], wave: Transition[]): Promise<Map<string, Outcome>> {
  const found = await findOrCreateInvoices(
    sql,
    PROVIDER,
    wave.map((t) => t.input),
  );
  const outcomes = new Map<string, Outcome>();
  const moves: { t: Transition; invoice: InvoiceRow; created: boolean; update: boolean }[] = [];
  for (const [n, t] of wave.entries()) {
    const { invoice, created } = found[n]!;
    if (!created && !canMove(invoice.status, t.target)) outcomes.set(t.event.id, 'ignored');
    // A row just created already has the target status; only the event time of paid/overdue remains to set.
    else moves.push({ t, invoice, created, update: !created || t.target === 'paid' || t.target === 'overdue' });
  }
  const moved = await moveInvoices(
    sql,
    moves
      .filter((m) => m.update)
      .map(({ t, invoice }) => ({
        id: invoice.id,
        status: t.target,
        total: minor(t.o?.total, invoice.total_minor).toString(),
        dueAt: fromUnix(t.o?.due_date),
        at: eventTimeOf(t.event),
      })),
  );
  const signals: SignalInput[] = [];
  for (const { t, invoice, created, update } of moves) {
    const current = update ? moved.get(invoice.id)! : invoice;
    // invoice.created announces every invoice once, when it comes into being here, whatever event made it:
    // one first heard of as paid is announced created (its payload as it now is: paid), then paid. The
    // provider's invoice.created arriving after that changes nothing and announces nothing again.
    if (created) outbox.push(invoiceEvent('invoice.created', current));
    const type = EVENT_FOR_STATUS[t.target];
    if (type && t.target !== 'draft') outbox.push(invoiceEvent(type, current));
    if (t.target === 'paid' || t.target === 'overdue')
      signals.push({
        tenantId: t.event.tenantId,
        customerId: current.customer_id,
        inboxEventId: t.event.id,
        source: PROVIDER,
        kind: t.target === 'paid' ? 'billing.invoice_paid' : 'billing.invoice_overdue',
        occurredAt: eventTimeOf(t.event),
        value: Number(current.total_minor),
        accountId: current.account_id,
        attributes: { invoice_id: current.id, currency: current.currency },
      });
    outcomes.set(t.event.id, 'processed');
  }
  await recordSignals(sql, signals);
  return outcomes;
}

/**
 * Consecutive invoice events of a batch, applied together when the first of them is reached: their
 * payments remembered in their order, then in waves — the first event about each invoice in the first,
 * the second in the second, and so on — each wave by applyTransitions. That is the outcome of applying them
 * one after the other: the events about one invoice keep their order; an invoice event reads and changes
 * only its invoice (its payments are written in the events' order, and nothing in a segment reads them)
 * and creates no customer, so events about different invoices cannot see each other. Any other event ends
 * the segment, since what it does may change what a later invoice event finds (its customer, say), unless
 * nothing it reads or writes meets an invoice event's (besideInvoices). Per event, a
 * statement of its own cost a worker and PostgreSQL more than the rows it writes. An invoice event
 * applied on its own is a segment of one.
 */
class InvoiceSegment {
  readonly transitions: Transition[] = [];
  private outcomes?: Map<string, Outcome>;

  static of(t: Transition): InvoiceSegment {
    const segment = new InvoiceSegment();
    segment.transitions.push(t);
    return segment;
  }

  async outcomeOf(ctx: NormalizeContext): Promise<Outcome> {
    if (!this.outcomes) {
      // The batch applies its events in order, so the segment's first event comes first.
      if (this.transitions[0]?.event.id !== ctx.event.id) throw new Error('an invoice segment was entered after its first event');
      const { sql } = ctx;
      this.outcomes = new Map();
      await rememberPayments(
        sql,
        this.transitions.flatMap((t) => paymentsOf(t.event.tenantId, t.input.externalId, paymentsOfInvoice(t.o))),
      );
      for (const wave of waves(this.transitions))
        for (const [id, outcome] of await applyTransitions(sql, ctx.outbox, wave)) this.outcomes.set(id, outcome);
    }
    return this.outcomes.get(ctx.event.id)!;
  }
}

/** Transitions split into waves: the n-th event about an invoice goes to the n-th wave, in their order. */
function waves(transitions: Transition[]): Transition[][] {
  const seen = new Map<string, number>();
  const out: Transition[][] = [];
  for (const t of transitions) {
    const key = `${t.event.tenantId}:${t.input.externalId}`;
    const n = seen.get(key) ?? 0;
    seen.set(key, n + 1);
    (out[n] ??= []).push(t);
  }
  return out;
}

/**
 * Whether an event may sit inside an invoice segment, applied in its turn while the segment's events are
 * applied at the segment's first: a Stripe event kept but not used, which touches nothing, or a
 * subscription event, which reads and writes only its subscription, looks customers up without creating
 * any, and adds signals and churn outcomes, none of which an invoice event reads (nor does it read what
 * they write).
 */
function besideInvoices(event: StoredEvent): boolean {
  const type = String(event.body?.type ?? '');
  return event.provider === PROVIDER && (!handlerOf(type) || type.startsWith('customer.subscription.'));
}

/** The invoice segments of a batch's events (its received events, in order, every provider's): each event of a segment, with its segment. */
export function prepareStripe(events: StoredEvent[]): Map<string, InvoiceSegment> {
  const prepared = new Map<string, InvoiceSegment>();
  let segment = new InvoiceSegment();
  const end = () => {
    for (const { event } of segment.transitions) prepared.set(event.id, segment);
    segment = new InvoiceSegment();
  };
  for (const event of events) {
    // One out of range is refused by its normalizer (stripeRangeErrors), alone: it ends the segment.
    const t = stripeRangeErrors(event.body).length === 0 ? transitionOf(event) : null;
    if (t) segment.transitions.push(t);
    else if (!besideInvoices(event)) end();
  }
  end();
  return prepared;
}

async function paymentFailed(ctx: NormalizeContext, o: any): Promise<Outcome> {
  const tenantId = ctx.event.tenantId;
  if (!str(o?.id)) return 'ignored';
  const initial = (['draft', 'open', 'paid', 'void', 'uncollectible'].includes(o?.status) ? o.status : 'open') as InvoiceStatus;
  const [{ invoice, created }] = (await findOrCreateInvoices(ctx.sql, PROVIDER, [invoiceInput(tenantId, o, initial)])) as [FoundInvoice];
  // First heard of by its failed payment: announced created before the failure (applyTransitions).
  if (created) ctx.outbox.push(invoiceEvent('invoice.created', invoice));
  const named = paymentsOfInvoice(o);
  await rememberPayments(ctx.sql, paymentsOf(tenantId, str(o.id)!, named));
  // A current-version invoice names no payment; one paid before (invoice_payment.paid) may be remembered.
  // Failing that, the Stripe invoice id is the one reference the event gives to the failed attempt.
  const paymentId = named[0] ?? (await latestPaymentOf(ctx.sql, tenantId, PROVIDER, str(o.id)!)) ?? str(o.id)!;
  const amountMinor = minor(o?.amount_due ?? o?.total);
  ctx.outbox.push({
    tenantId,
    type: 'payment.failed' as const,
    subject: invoice.id,
    dedupKey: `payment.failed:${ctx.event.body?.id ?? ctx.event.id}`,
    payload: {
      tenant_id: tenantId,
      payment_id: paymentId,
      invoice_id: invoice.id,
      customer_id: invoice.customer_id,
      amount: formatAmount(amountMinor, invoice.currency),
      currency: invoice.currency,
      reason: str(o?.last_finalization_error?.message) ?? str(o?.last_payment_error?.message) ?? 'payment_failed',
    },
  });
  await recordSignals(ctx.sql, [
    {
      tenantId,
      customerId: invoice.customer_id,
      inboxEventId: ctx.event.id,
      source: PROVIDER,
      kind: 'billing.payment_failed',
      occurredAt: eventTimeOf(ctx.event),
      value: Number(amountMinor),
      accountId: invoice.account_id,
      attributes: { invoice_id: invoice.id, attempt_count: o?.attempt_count ?? null },
    },
  ]);
  return 'processed';
}

const REFUND_EVENTS = ['refund.created', 'refund.updated', 'charge.refund.updated'];

/**
 * A charge lists its refunds only in API versions before 2022-11-15; later, a refund's reason travels in
 * the `refund.*` events Stripe sends alongside `charge.refunded`. Uses one already stored for this charge.
 */
async function storedRefundReason(ctx: NormalizeContext, chargeId: string): Promise<string | null> {
  const since = new Date(ctx.event.receivedAt.getTime() - 86_400_000);
  const rows = await ctx.sql.query<{ body: string }>(
    `SELECT body FROM inbox_events WHERE tenant_id = $1 AND provider = $2 AND received_at > $3
       AND event_type = ANY($4::text[]) AND strpos(body, $5) > 0 ORDER BY received_at DESC LIMIT 10`,
    [ctx.event.tenantId, PROVIDER, since, REFUND_EVENTS, chargeId],
  );
  for (const { body } of rows) {
    try {
      const refund = JSON.parse(body)?.data?.object;
      if (idOf(refund?.charge) === chargeId && str(refund?.reason)) return str(refund.reason);
    } catch {
      // A stored body that does not parse says nothing about this refund.
    }
  }
  return null;
}

async function refunded(ctx: NormalizeContext, o: any): Promise<Outcome> {
  const tenantId = ctx.event.tenantId;
  const chargeId = str(o?.id);
  if (!chargeId) return 'ignored';
  const account = accountOf(o);
  const customerId = await customerFor(ctx, account, o?.billing_details?.email ?? o?.receipt_email);
  // Before API version 2025-03-31 a charge names its invoice; since then only its payment intent ties it to one.
  const named = idOf(o?.invoice);
  if (named)
    await rememberPayments(
      ctx.sql,
      paymentsOf(
        tenantId,
        named,
        [idOf(o?.payment_intent), chargeId].filter((id): id is string => id !== null),
      ),
    );
  const invoiceExternal =
    named ??
    (await invoiceOfPayment(
      ctx.sql,
      tenantId,
      PROVIDER,
      [idOf(o?.payment_intent), chargeId].filter((id): id is string => id !== null),
    ));
  const invoiceId = invoiceExternal ? await invoiceIdOf(ctx.sql, tenantId, PROVIDER, invoiceExternal) : null;
  const currency = currencyCode(o?.currency ?? 'usd');
  const refundedMinor = minor(o?.amount_refunded ?? o?.amount);
  ctx.outbox.push({
    tenantId,
    type: 'payment.refunded' as const,
    subject: chargeId,
    dedupKey: `payment.refunded:${chargeId}:${refundedMinor}`,
    payload: {
      tenant_id: tenantId,
      payment_id: chargeId,
      invoice_id: invoiceId,
      customer_id: customerId,
      amount: formatAmount(refundedMinor, currency),
      currency,
      reason: str(o?.refunds?.data?.[0]?.reason) ?? (await storedRefundReason(ctx, chargeId)),
    },
  });
  await recordSignals(ctx.sql, [
    {
      tenantId,
      customerId,
      inboxEventId: ctx.event.id,
      source: PROVIDER,
      kind: 'billing.refund',
      occurredAt: eventTimeOf(ctx.event),
      value: Number(refundedMinor),
      accountId: account,
      attributes: { charge_id: chargeId, currency },
    },
  ]);
  return 'processed';
}

function subscriptionFacts(o: any): SubscriptionFacts {
  const items: any[] = Array.isArray(o?.items?.data) ? o.items.data : [];
  const seats = items.reduce((s, i) => s + (Number(i?.quantity) || 0), 0) || null;
  const price = items[0]?.price ?? items[0]?.plan;
  const monthly = items.reduce((sum, i) => {
    const p = i?.price ?? i?.plan ?? {};
    const unit = Number(p.unit_amount ?? p.amount ?? 0);
    const interval = p.recurring?.interval ?? p.interval ?? 'month';
    const count = Number(p.recurring?.interval_count ?? p.interval_count ?? 1) || 1;
    const perMonth = interval === 'year' ? 1 / 12 : interval === 'week' ? 52 / 12 : interval === 'day' ? 365 / 12 : 1;
    return sum + (unit * (Number(i?.quantity) || 1) * perMonth) / count;
  }, 0);
  return {
    status: String(o?.status ?? 'active'),
    trialEnd: fromUnix(o?.trial_end),
    seats: seats as number | null,
    planId: str(price?.id),
    mrrMinor: items.length ? BigInt(Math.round(monthly)) : null,
    currency: str(o?.currency)?.toLowerCase() ?? str(price?.currency)?.toLowerCase() ?? null,
    canceledAt: fromUnix(o?.canceled_at) ?? fromUnix(o?.ended_at),
  };
}

async function subscriptionChanged(ctx: NormalizeContext, o: any, deleted: boolean): Promise<Outcome> {
  const { sql } = ctx;
  const tenantId = ctx.event.tenantId;
  const externalId = str(o?.id);
  if (!externalId) return 'ignored';
  const at = eventTimeOf(ctx.event);
  const facts = subscriptionFacts(o);
  if (deleted) facts.status = 'canceled';
  const account = accountOf(o);
  const key = { tenantId, provider: PROVIDER, externalId };
  const existing = await subscriptionOf(sql, key);
  // An older event never overwrites what a newer one already said. Stripe's event times are whole seconds, so
  // a creation and an update often share one: a creation is never newer than what is stored, nor is an update
  // newer than the deletion of that second.
  const sameSecond = existing !== undefined && existing.last_event_at.getTime() === at.getTime();
  const created = ctx.event.body?.type === 'customer.subscription.created';
  if (existing && (existing.last_event_at > at || (sameSecond && (created || (existing.status === 'canceled' && !deleted))))) {
    return 'ignored';
  }
  const customerId = existing?.customer_id ?? (await customerFor(ctx, account));
  const sub = await saveSubscription(sql, { ...key, account }, existing, facts, customerId, at);

  const signals: { kind: string; value: number; attributes?: Record<string, unknown> }[] = [];
  // The trial rule (docs/decisions.md §5): only a later trial_end on a subscription that already had one is an extension.
  if (existing?.trial_end && facts.trialEnd && facts.trialEnd > existing.trial_end) {
    ctx.outbox.push(
      eventOf(
        'subscription.trial_extended',
        { tenantId, subscriptionId: sub.id, customerId: sub.customer_id, previousTrialEnd: existing.trial_end, trialEnd: facts.trialEnd },
        // One announcement per provider event: a trial moved later, back, then later again is extended twice.
        { subject: sub.id, dedupKey: `subscription.trial_extended:${ctx.event.body?.id ?? ctx.event.id}` },
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
      inboxEventId: ctx.event.id,
      source: PROVIDER,
      occurredAt: at,
      accountId: account,
      ...s,
    })),
  );

  if (facts.status === 'canceled' && existing?.status !== 'canceled' && sub.customer_id) {
    await churnOutcomeRows.insert(sql, {
      tenantId,
      customerId: sub.customer_id,
      churned: true,
      at: facts.canceledAt ?? at,
      source: PROVIDER,
    });
  }
  return 'processed';
}

/**
 * The objects whose rows an event's handler may write (the provider's objectsOf): a customer account, and
 * the customer its email's domain stands for (customerKeys), which may be created; a subscription; an
 * invoice, with the payments it names; a charge, with the invoice it names. Stripe's ids carry their kind
 * (cus_, sub_, in_, ch_). A payment is remembered only under the lock of an invoice that names it.
 */
export function objectsOfStripeEvent(event: StoredEvent): string[] {
  const type = String(event.body?.type ?? '');
  const o = event.body?.data?.object;
  const key = (id: string | null) => (id === null ? [] : [`${PROVIDER}:${id}`]);
  if (type === 'customer.created' || type === 'customer.updated') {
    const account = str(o?.id);
    return account ? customerKeys({ identities: [{ provider: PROVIDER, externalId: account }], domain: companyDomain(o?.email) }) : [];
  }
  if (type.startsWith('customer.subscription.')) return key(str(o?.id));
  if (Object.hasOwn(INVOICE_EVENTS, type) || type === 'invoice.payment_failed') return key(str(o?.id));
  if (type === 'invoice_payment.paid') return key(idOf(o?.invoice));
  if (type === 'charge.refunded') return [...key(str(o?.id)), ...key(idOf(o?.invoice))];
  return [];
}

/**
 * The object whose events are applied in the order they were accepted (the provider's orderKeyOf): the
 * invoice of an invoice, payment or refund event (else the charge), the subscription, the customer account.
 */
export function orderKeyOfStripeEvent(body: any): string | null {
  const type = String(body?.type ?? '');
  const o = body?.data?.object;
  if (type === 'customer.created' || type === 'customer.updated' || type === 'customer.deleted') return str(o?.id);
  if (type.startsWith('customer.subscription.')) return str(o?.id);
  if (Object.hasOwn(INVOICE_EVENTS, type) || type === 'invoice.payment_failed') return str(o?.id);
  if (type === 'invoice_payment.paid') return idOf(o?.invoice);
  if (type === 'charge.refunded') return idOf(o?.invoice) ?? str(o?.id);
  return null;
}

/**
 * The numbers and codes of a Stripe event that its handler would write, out of range (ranges.ts): the
 * event's time; an invoice's amounts, due date and currency; a refunded charge's amounts and currency; a
 * subscription's times, quantities, prices and the seats and monthly amount they make.
 */
export function stripeRangeErrors(body: any): FieldError[] {
  const type = String(body?.type ?? '');
  const o = body?.data?.object;
  const at = 'data.object';
  const check = new RangeCheck().unix('created', body?.created);
  // The ids it writes or keys objects by, expanded or not, and the customer's name and emails.
  for (const ref of ['id', 'customer', 'invoice', 'payment_intent', 'charge']) check.key(`${at}.${ref}`, idOf(o?.[ref]));
  for (const f of ['name', 'email', 'customer_email', 'receipt_email']) check.key(`${at}.${f}`, o?.[f]);
  check.key(`${at}.billing_details.email`, o?.billing_details?.email);
  const listed: any[] = Array.isArray(o?.payments?.data) ? o.payments.data : [];
  listed.forEach((ip, i) => check.key(`${at}.payments.data.${i}.payment`, paymentOfInvoicePayment(ip)));
  check.key(`${at}.payment`, paymentOfInvoicePayment(o));
  const currency = () => check.rule(`${at}.currency`, o?.currency == null || isCurrencyCode(o.currency), 'is not a currency code');
  if (Object.hasOwn(INVOICE_EVENTS, type) || type === 'invoice.payment_failed') {
    check.amount(`${at}.total`, o?.total).amount(`${at}.amount_due`, o?.amount_due).unix(`${at}.due_date`, o?.due_date);
    currency();
  } else if (type === 'charge.refunded') {
    check.amount(`${at}.amount_refunded`, o?.amount_refunded).amount(`${at}.amount`, o?.amount);
    currency();
  } else if (type.startsWith('customer.subscription.')) {
    for (const f of ['trial_end', 'canceled_at', 'ended_at']) check.unix(`${at}.${f}`, o?.[f]);
    const items: any[] = Array.isArray(o?.items?.data) ? o.items.data : [];
    items.forEach((item, i) => {
      const p = item?.price ? 'price' : 'plan';
      const price = item?.[p] ?? {};
      check
        .count(`${at}.items.data.${i}.quantity`, item?.quantity)
        .amount(`${at}.items.data.${i}.${p}.${price.unit_amount != null ? 'unit_amount' : 'amount'}`, price.unit_amount ?? price.amount)
        .count(`${at}.items.data.${i}.${p}.interval_count`, price.recurring?.interval_count ?? price.interval_count);
    });
    if (check.errors.length === 0) {
      const facts = subscriptionFacts(o);
      check
        .rule(`${at}.items`, (facts.seats ?? 0) <= MAX_COUNT, `holds more than ${MAX_COUNT} seats in all`)
        .rule(
          `${at}.items`,
          facts.mrrMinor === null || (facts.mrrMinor <= BigInt(MAX_AMOUNT) && facts.mrrMinor >= -BigInt(MAX_AMOUNT)),
          `comes to a monthly amount beyond ${MAX_AMOUNT} minor units`,
        );
    }
  }
  return check.errors;
}

/** What applies a Stripe event of this type; none for the types kept but not used, which touch nothing. */
function handlerOf(type: string): ((ctx: NormalizeContext, o: any) => Promise<Outcome>) | undefined {
  if (type === 'customer.created' || type === 'customer.updated') return upsertCustomer;
  // Own keys only: `in` would also find `constructor` and the other members of Object.prototype.
  if (Object.hasOwn(INVOICE_EVENTS, type)) return transition;
  if (type === 'invoice.payment_failed') return paymentFailed;
  if (type === 'invoice_payment.paid') return invoicePaymentPaid;
  if (type === 'charge.refunded') return refunded;
  if (type.startsWith('customer.subscription.')) return (ctx, o) => subscriptionChanged(ctx, o, type === 'customer.subscription.deleted');
  return undefined;
}

/** An invoice event: with the rest of its segment when the batch made one, else as a segment of one. */
async function transition(ctx: NormalizeContext): Promise<Outcome> {
  if (ctx.prepared instanceof InvoiceSegment) return ctx.prepared.outcomeOf(ctx);
  const t = transitionOf(ctx.event);
  return t ? InvoiceSegment.of(t).outcomeOf(ctx) : 'ignored';
}

export const normalizeStripe: Normalizer = async (ctx) => {
  const handler = handlerOf(String(ctx.event.body?.type ?? ''));
  return handler ? handler(ctx, ctx.event.body?.data?.object) : 'ignored';
};
