import { currencyCode, isCurrencyCode } from '../../contract/money.ts';
import type { InvoiceStatus } from '../../contract/enums.ts';
import type { InboundCommand } from '../../services/inbound-commands.ts';
import type { BillingCommand, ChargeRefunded } from '../../services/billing-commands.ts';
import { customerKeys } from '../../services/customers.ts';
import type { InvoiceInput } from '../../services/invoices.ts';
import type { SubscriptionFacts } from '../../services/subscriptions.ts';
import type { Sql } from '../../db/sql.ts';
import { companyDomain } from '../email-domain.ts';
import type { FieldError } from '../../errors.ts';
import { MAX_AMOUNT, MAX_COUNT, RangeCheck } from './ranges.ts';
import { fromUnix, type Normalizer, type StoredEvent, str } from './types.ts';

// Stripe's events, read into billing commands (services/billing-commands.ts applies them). Reading only:
// every field of every API version we accept is found here, and nothing here touches the database but
// `completeStripe`, which reads the refund events stored beside a refunded charge.

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
/** The provider's id of the event, which its replays share. */
const eventKeyOf = (event: StoredEvent): string => String(event.body?.id ?? event.id);
const minor = (v: unknown, fallback: string | number = 0) => BigInt(Math.trunc(Number(v ?? fallback)) || 0);

/** Stripe customers become our customers (matched by identity, then email domain, else created). */
function accountSeen(o: any): BillingCommand[] {
  const account = str(o?.id);
  if (!account) return [];
  return [
    {
      kind: 'account.seen',
      account,
      name: str(o.name) ?? str(o.email) ?? account,
      email: str(o.email)?.toLowerCase() ?? null,
      domain: companyDomain(o.email),
    },
  ];
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

/** `invoice_payment.paid` (API 2025-03-31 and later): the one event that ties a payment to its invoice. */
function invoicePaymentPaid(_: StoredEvent, o: any): BillingCommand[] {
  const invoiceExternalId = idOf(o?.invoice);
  const paymentId = paymentOfInvoicePayment(o);
  if (!invoiceExternalId || !paymentId) return [];
  return [{ kind: 'invoice.payment_paid', invoiceExternalId, paymentId }];
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

/** An invoice event (INVOICE_EVENTS) naming an invoice: that invoice moves to the event's status. */
function invoiceTransition(event: StoredEvent, o: any): BillingCommand[] {
  const target = INVOICE_EVENTS[String(event.body?.type ?? '')];
  if (!target || !str(o?.id)) return [];
  return [
    {
      kind: 'invoice.transition',
      target,
      input: invoiceInput(event.tenantId, o, target),
      total: o?.total == null ? null : minor(o.total),
      dueAt: fromUnix(o?.due_date),
      at: eventTimeOf(event),
      payments: paymentsOfInvoice(o),
    },
  ];
}

function paymentFailed(event: StoredEvent, o: any): BillingCommand[] {
  if (!str(o?.id)) return [];
  const initial = (['draft', 'open', 'paid', 'void', 'uncollectible'].includes(o?.status) ? o.status : 'open') as InvoiceStatus;
  return [
    {
      kind: 'invoice.payment_failed',
      input: invoiceInput(event.tenantId, o, initial),
      payments: paymentsOfInvoice(o),
      amountMinor: minor(o?.amount_due ?? o?.total),
      reason: str(o?.last_finalization_error?.message) ?? str(o?.last_payment_error?.message) ?? 'payment_failed',
      attemptCount: o?.attempt_count ?? null,
      eventKey: eventKeyOf(event),
      at: eventTimeOf(event),
    },
  ];
}

function refunded(event: StoredEvent, o: any): BillingCommand[] {
  const chargeId = str(o?.id);
  if (!chargeId) return [];
  return [
    {
      kind: 'charge.refunded',
      chargeId,
      account: accountOf(o),
      emailDomain: companyDomain(o?.billing_details?.email ?? o?.receipt_email),
      // Before API version 2025-03-31 a charge names its invoice; since then only its payment intent ties it to one.
      invoiceExternalId: idOf(o?.invoice),
      paymentIds: [idOf(o?.payment_intent), chargeId].filter((id): id is string => id !== null),
      currency: currencyCode(o?.currency ?? 'usd'),
      refundedMinor: minor(o?.amount_refunded ?? o?.amount),
      reason: str(o?.refunds?.data?.[0]?.reason),
      at: eventTimeOf(event),
    },
  ];
}

const REFUND_EVENTS = ['refund.created', 'refund.updated', 'charge.refund.updated'];

/**
 * A charge lists its refunds only in API versions before 2022-11-15; later, a refund's reason travels in
 * the `refund.*` events Stripe sends alongside `charge.refunded`: a refund command without a reason takes
 * one from those stored in the day before. Reads the inbox, writes nothing.
 */
export async function completeStripe(sql: Sql, event: StoredEvent, commands: InboundCommand[]): Promise<InboundCommand[]> {
  const missing = commands.filter((c): c is ChargeRefunded => c.kind === 'charge.refunded' && c.reason === null);
  if (missing.length === 0) return commands;
  const since = new Date(event.receivedAt.getTime() - 86_400_000);
  const reasons = new Map<string, string | null>();
  for (const { chargeId } of missing) {
    const rows = await sql.query<{ body: string }>(
      `SELECT body FROM inbox_events WHERE tenant_id = $1 AND provider = $2 AND received_at > $3
         AND event_type = ANY($4::text[]) AND strpos(body, $5) > 0 ORDER BY received_at DESC LIMIT 10`,
      [event.tenantId, PROVIDER, since, REFUND_EVENTS, chargeId],
    );
    reasons.set(chargeId, refundReasonIn(rows, chargeId));
  }
  return commands.map((c) => (c.kind === 'charge.refunded' && c.reason === null ? { ...c, reason: reasons.get(c.chargeId) ?? null } : c));
}

function refundReasonIn(rows: { body: string }[], chargeId: string): string | null {
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

function subscriptionChanged(event: StoredEvent, o: any, deleted: boolean): BillingCommand[] {
  const externalId = str(o?.id);
  if (!externalId) return [];
  const facts = subscriptionFacts(o);
  if (deleted) facts.status = 'canceled';
  return [
    {
      kind: 'subscription.changed',
      externalId,
      account: accountOf(o),
      facts,
      created: event.body?.type === 'customer.subscription.created',
      deleted,
      eventKey: eventKeyOf(event),
      at: eventTimeOf(event),
    },
  ];
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

/** What a Stripe event of this type asks; nothing for the types kept but not used. */
function commandsOf(type: string): ((event: StoredEvent, o: any) => BillingCommand[]) | undefined {
  if (type === 'customer.created' || type === 'customer.updated') return (_, o) => accountSeen(o);
  // Own keys only: `in` would also find `constructor` and the other members of Object.prototype.
  if (Object.hasOwn(INVOICE_EVENTS, type)) return invoiceTransition;
  if (type === 'invoice.payment_failed') return paymentFailed;
  if (type === 'invoice_payment.paid') return invoicePaymentPaid;
  if (type === 'charge.refunded') return refunded;
  if (type.startsWith('customer.subscription.'))
    return (event, o) => subscriptionChanged(event, o, type === 'customer.subscription.deleted');
  return undefined;
}

export const normalizeStripe: Normalizer = (event) => commandsOf(String(event.body?.type ?? ''))?.(event, event.body?.data?.object) ?? [];
