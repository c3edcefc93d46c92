import { currencyCode, formatAmount } from '../../contract/money.ts';
import { eventOf, invoiceEvent, type InvoiceRecord } from '../../outbox/events/payloads.ts';
import { churnOutcomeRows } from '../../services/churn.ts';
import { accountIdsOf, customerForProviderAccount, customerOf, resolveCustomer } from '../../services/customers.ts';
import { companyDomain } from '../email-domain.ts';
import { canMove, EVENT_FOR_STATUS, type InvoiceStatus } from '../invoice-state.ts';
import { lockObject } from '../locks.ts';
import { recordSignals } from '../../services/signals.ts';
import type { Sql } from '../../db/sql.ts';
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

interface InvoiceRow extends InvoiceRecord {
  total_minor: string;
  account_id: string | null;
}
const INVOICE_COLUMNS = 'id, tenant_id, status::text AS status, total_minor, currency, customer_id, account_id, due_at';

/** The id of a reference Stripe sends either as an id or, when expanded, as the object. */
const idOf = (v: any): string | null => str(v && typeof v === 'object' ? v.id : v);
/** The account id of an object's customer, whether expanded or not. */
const accountOf = (o: any): string | null => idOf(o?.customer);
const eventTime = (ctx: NormalizeContext) => fromUnix(ctx.event.body?.created) ?? ctx.event.receivedAt;
const minor = (v: unknown, fallback: string | number = 0) => BigInt(Math.trunc(Number(v ?? fallback)) || 0);

const customerFor = (ctx: NormalizeContext, account: string | null, email?: unknown) =>
  resolveCustomer(ctx.sql, ctx.event.tenantId, { provider: PROVIDER, accountIds: [account], emailDomain: companyDomain(email) });

/** Stripe customers become our customers (matched by identity, then email domain, else created). */
async function upsertCustomer(ctx: NormalizeContext, o: any): Promise<Outcome> {
  const { sql } = ctx;
  const tenantId = ctx.event.tenantId;
  const account = str(o?.id);
  if (!account) return 'ignored';
  await lockObject(sql, tenantId, PROVIDER, account);
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

/** Remembers which invoice these payments belong to, for events that name only the payment. */
async function rememberPayments(ctx: NormalizeContext, invoiceExternalId: string, paymentIds: string[]) {
  if (paymentIds.length === 0) return;
  await ctx.sql.query(
    `INSERT INTO invoice_payments (id, tenant_id, provider, payment_id, invoice_external_id)
     SELECT gen_random_uuid(), $1, $2, p, $3 FROM unnest($4::text[]) AS p
     ON CONFLICT (tenant_id, provider, payment_id) DO NOTHING`,
    [ctx.event.tenantId, PROVIDER, invoiceExternalId, [...new Set(paymentIds)]],
  );
}

/** The invoice a payment belongs to, as remembered from earlier events. */
async function invoiceOfPayment(ctx: NormalizeContext, paymentIds: (string | null)[]): Promise<string | null> {
  const ids = paymentIds.filter((id): id is string => id !== null);
  if (ids.length === 0) return null;
  const [row] = await ctx.sql.query<{ invoice_external_id: string }>(
    `SELECT invoice_external_id FROM invoice_payments WHERE tenant_id = $1 AND provider = $2 AND payment_id = ANY($3::text[])
     ORDER BY array_position($3::text[], payment_id) LIMIT 1`,
    [ctx.event.tenantId, PROVIDER, ids],
  );
  return row?.invoice_external_id ?? null;
}

/** The newest payment remembered for an invoice. */
async function latestPaymentOf(ctx: NormalizeContext, invoiceExternalId: string): Promise<string | null> {
  const [row] = await ctx.sql.query<{ payment_id: string }>(
    `SELECT payment_id FROM invoice_payments WHERE tenant_id = $1 AND provider = $2 AND invoice_external_id = $3
     ORDER BY created_at DESC, payment_id DESC LIMIT 1`,
    [ctx.event.tenantId, PROVIDER, invoiceExternalId],
  );
  return row?.payment_id ?? null;
}

/** `invoice_payment.paid` (API 2025-03-31 and later): the one event that ties a payment to its invoice. */
async function invoicePaymentPaid(ctx: NormalizeContext, o: any): Promise<Outcome> {
  const invoiceExternalId = idOf(o?.invoice);
  const paymentId = paymentOfInvoicePayment(o);
  if (!invoiceExternalId || !paymentId) return 'ignored';
  await rememberPayments(ctx, invoiceExternalId, [paymentId]);
  return 'processed';
}

/** What a new invoice is made of, from the event's invoice object and the status it is created in. */
function invoiceInput(o: any, initial: InvoiceStatus) {
  return {
    externalId: str(o?.id)!,
    account: accountOf(o),
    initial,
    total: minor(o?.total ?? o?.amount_due).toString(),
    currency: currencyCode(o?.currency ?? 'usd'),
    dueAt: fromUnix(o?.due_date),
    emailDomain: companyDomain(o?.customer_email),
  };
}
type InvoiceInput = ReturnType<typeof invoiceInput>;
type FoundInvoice = { invoice: InvoiceRow; created: boolean };

/**
 * Finds or creates our invoice for a Stripe invoice object, locked for this transaction, without changing
 * its status, in one statement. A stored invoice is locked by its row (a transaction changing it holds the
 * row until it ends, and this one then reads what it committed); a new one is created with its customer
 * resolved in the same statement. Two transactions creating the same invoice meet on its unique key: the
 * later waits for the earlier to end, creates nothing, and then finds its row. The event's run, if it is in
 * one, finds or creates it with the others' (prepareStripe).
 */
async function invoiceRow(ctx: NormalizeContext, o: any, initial: InvoiceStatus): Promise<FoundInvoice> {
  const prepared = ctx.prepared instanceof InvoiceRun ? await ctx.prepared.invoiceOf(ctx.sql, ctx.event.id) : undefined;
  if (prepared) return prepared;
  const { sql } = ctx;
  const tenantId = ctx.event.tenantId;
  const input = invoiceInput(o, initial);
  const customer = customerOf({ tenant: '$1::uuid', provider: '$2', accountIds: '$9::text[]', emailDomain: '$10' });
  const [row] = await sql.query<InvoiceRow & { created: boolean }>(
    `WITH found AS (
       SELECT ${INVOICE_COLUMNS} FROM invoices WHERE tenant_id = $1 AND provider = $2 AND external_id = $3 FOR UPDATE
     ), made AS (
       INSERT INTO invoices (id, tenant_id, provider, external_id, account_id, customer_id, status, total_minor, currency, due_at, created_at, updated_at)
       SELECT gen_random_uuid(), $1, $2, $3, $4, ${customer}, $5::"InvoiceStatus", $6, $7, $8, now(), now()
       WHERE NOT EXISTS (SELECT 1 FROM found)
       ON CONFLICT (tenant_id, provider, external_id) DO NOTHING
       RETURNING ${INVOICE_COLUMNS}
     )
     SELECT *, false AS created FROM found UNION ALL SELECT *, true AS created FROM made`,
    [
      tenantId,
      PROVIDER,
      input.externalId,
      input.account,
      input.initial,
      input.total,
      input.currency,
      input.dueAt,
      accountIdsOf([input.account]),
      input.emailDomain,
    ],
  );
  if (row) {
    const { created, ...invoice } = row;
    return { invoice, created };
  }
  // Created meanwhile by a transaction that has committed since (it made this one wait): a new statement sees it.
  const [found] = await sql.query<InvoiceRow>(
    `SELECT ${INVOICE_COLUMNS} FROM invoices WHERE tenant_id = $1 AND provider = $2 AND external_id = $3 FOR UPDATE`,
    [tenantId, PROVIDER, input.externalId],
  );
  return { invoice: found!, created: false };
}

/** The status an event's invoice is created in if it is new, for the events that find or create one; else null. */
function createdStatus(type: string, o: any): InvoiceStatus | null {
  if (Object.hasOwn(INVOICE_EVENTS, type)) return INVOICE_EVENTS[type]!;
  if (type === 'invoice.payment_failed')
    return (['draft', 'open', 'paid', 'void', 'uncollectible'].includes(o?.status) ? o.status : 'open') as InvoiceStatus;
  return null;
}

/**
 * Consecutive Stripe invoice events of a batch that name different invoices: the first of them to need its
 * invoice finds or creates its own and those of the rest of the run in one statement (invoiceRows), as each
 * event's invoiceRow would one after the other. Nothing the run's events write changes what another's
 * invoiceRow finds (they are about other invoices, and none of them creates customers); an event of any
 * other kind, or a second event about an invoice of the run, ends it, and the statement runs only once
 * every event before the run was applied. Per event, a statement of its own cost a worker and PostgreSQL
 * more than the row it writes.
 */
class InvoiceRun {
  readonly events: { event: StoredEvent; input: InvoiceInput }[] = [];
  private found?: Map<string, FoundInvoice>;

  /** The invoice of an event of the run, or undefined when the statement could not find or create it (another transaction created it meanwhile). */
  async invoiceOf(sql: Sql, eventId: string): Promise<FoundInvoice | undefined> {
    if (!this.found) {
      const from = this.events.findIndex((e) => e.event.id === eventId);
      this.found = await invoiceRows(sql, this.events.slice(Math.max(from, 0)));
    }
    return this.found.get(eventId);
  }
}

/** The runs of a batch's events (its received events, in order, every provider's): each event of a run of two or more, with its run. */
export function prepareStripe(events: StoredEvent[]): Map<string, InvoiceRun> {
  const prepared = new Map<string, InvoiceRun>();
  let run = new InvoiceRun();
  const end = () => {
    if (run.events.length > 1) for (const { event } of run.events) prepared.set(event.id, run);
    run = new InvoiceRun();
  };
  for (const event of events) {
    const o = event.body?.data?.object;
    const status = event.provider === PROVIDER ? createdStatus(String(event.body?.type ?? ''), o) : null;
    // An object that is not usable (an invalid currency) throws here as its own normalizer would: the batch fails.
    const input = status && str(o?.id) ? invoiceInput(o, status) : null;
    if (!input) {
      end();
      continue;
    }
    if (run.events.some((r) => r.event.tenantId === event.tenantId && r.input.externalId === input.externalId)) end();
    run.events.push({ event, input });
  }
  end();
  return prepared;
}

async function invoiceRows(sql: Sql, run: { event: StoredEvent; input: InvoiceInput }[]): Promise<Map<string, FoundInvoice>> {
  const customer = customerOf({
    tenant: 'i.tenant_id',
    provider: `'${PROVIDER}'`,
    accountIds: 'ARRAY[i.account_id]',
    emailDomain: 'i.email_domain',
  });
  const rows = await sql.query<InvoiceRow & { n: number; created: boolean }>(
    `WITH input AS (
       SELECT * FROM unnest($1::int[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::text[], $8::timestamptz[], $9::text[])
         AS i(n, tenant_id, external_id, account_id, status, total_minor, currency, due_at, email_domain)
     ), found AS (
       SELECT i.n, v.id, v.tenant_id, v.status::text AS status, v.total_minor, v.currency, v.customer_id, v.account_id, v.due_at
       FROM input i JOIN invoices v ON v.tenant_id = i.tenant_id AND v.provider = '${PROVIDER}' AND v.external_id = i.external_id
       ORDER BY i.n FOR UPDATE OF v
     ), made AS (
       INSERT INTO invoices (id, tenant_id, provider, external_id, account_id, customer_id, status, total_minor, currency, due_at, created_at, updated_at)
       SELECT gen_random_uuid(), i.tenant_id, '${PROVIDER}', i.external_id, i.account_id, ${customer}, i.status::"InvoiceStatus",
              i.total_minor, i.currency, i.due_at, now(), now()
       FROM input i WHERE NOT EXISTS (SELECT 1 FROM found f WHERE f.n = i.n) ORDER BY i.n
       ON CONFLICT (tenant_id, provider, external_id) DO NOTHING
       RETURNING external_id, ${INVOICE_COLUMNS}
     )
     SELECT *, false AS created FROM found
     UNION ALL
     SELECT i.n, m.id, m.tenant_id, m.status, m.total_minor, m.currency, m.customer_id, m.account_id, m.due_at, true AS created
     FROM made m JOIN input i ON i.tenant_id = m.tenant_id AND i.external_id = m.external_id`,
    [
      run.map((_, n) => n),
      run.map((r) => r.event.tenantId),
      run.map((r) => r.input.externalId),
      run.map((r) => r.input.account),
      run.map((r) => r.input.initial),
      run.map((r) => r.input.total),
      run.map((r) => r.input.currency),
      run.map((r) => r.input.dueAt),
      run.map((r) => r.input.emailDomain),
    ],
  );
  return new Map(rows.map(({ n, created, ...invoice }) => [run[n]!.event.id, { invoice, created }]));
}

async function invoiceTransition(ctx: NormalizeContext, o: any, target: InvoiceStatus): Promise<Outcome> {
  const { sql } = ctx;
  const tenantId = ctx.event.tenantId;
  if (!str(o?.id)) return 'ignored';
  const { invoice, created } = await invoiceRow(ctx, o, target);
  await rememberPayments(ctx, str(o.id)!, paymentsOfInvoice(o));
  if (!created && !canMove(invoice.status, target)) return 'ignored';
  // A row just created already has the target status; only the event time of paid/overdue remains to set.
  const [current] =
    created && target !== 'paid' && target !== 'overdue'
      ? [invoice]
      : await sql.query<InvoiceRow>(
          `UPDATE invoices SET status = $2::"InvoiceStatus", total_minor = $3, due_at = COALESCE($4, due_at),
             paid_at = CASE WHEN $2 = 'paid' THEN $5 ELSE paid_at END,
             overdue_at = CASE WHEN $2 = 'overdue' THEN $5 ELSE overdue_at END, updated_at = now()
           WHERE id = $1 RETURNING ${INVOICE_COLUMNS}`,
          [invoice.id, target, minor(o?.total, invoice.total_minor).toString(), fromUnix(o?.due_date), eventTime(ctx)],
        );
  // invoice.created announces a draft that came into being here; later statuses announce themselves.
  const type = EVENT_FOR_STATUS[target];
  if (type && (target !== 'draft' || created)) {
    ctx.outbox.push(invoiceEvent(type, current!));
  }
  if (target === 'paid' || target === 'overdue') {
    await recordSignals(sql, [
      {
        tenantId,
        customerId: current!.customer_id,
        inboxEventId: ctx.event.id,
        source: PROVIDER,
        kind: target === 'paid' ? 'billing.invoice_paid' : 'billing.invoice_overdue',
        occurredAt: eventTime(ctx),
        value: Number(current!.total_minor),
        accountId: current!.account_id,
        attributes: { invoice_id: current!.id, currency: current!.currency },
      },
    ]);
  }
  return 'processed';
}

async function paymentFailed(ctx: NormalizeContext, o: any): Promise<Outcome> {
  const tenantId = ctx.event.tenantId;
  if (!str(o?.id)) return 'ignored';
  const { invoice } = await invoiceRow(ctx, o, createdStatus('invoice.payment_failed', o)!);
  const named = paymentsOfInvoice(o);
  await rememberPayments(ctx, str(o.id)!, named);
  // A current-version invoice names no payment; one paid before (invoice_payment.paid) may be remembered.
  // Failing that, the Stripe invoice id is the one reference the event gives to the failed attempt.
  const paymentId = named[0] ?? (await latestPaymentOf(ctx, str(o.id)!)) ?? str(o.id)!;
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
      occurredAt: eventTime(ctx),
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
      ctx,
      named,
      [idOf(o?.payment_intent), chargeId].filter((id): id is string => id !== null),
    );
  const invoiceExternal = named ?? (await invoiceOfPayment(ctx, [idOf(o?.payment_intent), chargeId]));
  const [invoice] = invoiceExternal
    ? await ctx.sql.query<{ id: string }>('SELECT id FROM invoices WHERE tenant_id = $1 AND provider = $2 AND external_id = $3', [
        tenantId,
        PROVIDER,
        invoiceExternal,
      ])
    : [];
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
      invoice_id: invoice?.id ?? null,
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
      occurredAt: eventTime(ctx),
      value: Number(refundedMinor),
      accountId: account,
      attributes: { charge_id: chargeId, currency },
    },
  ]);
  return 'processed';
}

function subscriptionFacts(o: any) {
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

interface SubscriptionRow {
  id: string;
  customer_id: string | null;
  status: string;
  trial_end: Date | null;
  seats: number | null;
  mrr_minor: string | null;
  last_event_at: Date;
}

async function subscriptionChanged(ctx: NormalizeContext, o: any, deleted: boolean): Promise<Outcome> {
  const { sql } = ctx;
  const tenantId = ctx.event.tenantId;
  const externalId = str(o?.id);
  if (!externalId) return 'ignored';
  await lockObject(sql, tenantId, PROVIDER, externalId);
  const at = eventTime(ctx);
  const facts = subscriptionFacts(o);
  if (deleted) facts.status = 'canceled';
  const account = accountOf(o);
  const [existing] = await sql.query<SubscriptionRow>(
    'SELECT id, customer_id, status, trial_end, seats, mrr_minor, last_event_at FROM subscriptions WHERE tenant_id = $1 AND provider = $2 AND external_id = $3',
    [tenantId, PROVIDER, externalId],
  );
  // An older event never overwrites what a newer one already said. Stripe's event times are whole seconds, so
  // a creation and an update often share one: a creation is never newer than what is stored, nor is an update
  // newer than the deletion of that second.
  const sameSecond = existing !== undefined && existing.last_event_at.getTime() === at.getTime();
  const created = ctx.event.body?.type === 'customer.subscription.created';
  if (existing && (existing.last_event_at > at || (sameSecond && (created || (existing.status === 'canceled' && !deleted))))) {
    return 'ignored';
  }
  const customerId = existing?.customer_id ?? (await customerFor(ctx, account));
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
  const [sub] = existing
    ? await sql.query<{ id: string; customer_id: string | null }>(
        `UPDATE subscriptions SET status = $1, trial_end = $2, seats = $3, plan_id = $4, mrr_minor = $5, currency = $6, canceled_at = $7,
           customer_id = $8, last_event_at = $9, updated_at = now() WHERE id = $10 RETURNING id, customer_id`,
        [...values, existing.id],
      )
    : await sql.query<{ id: string; customer_id: string | null }>(
        `INSERT INTO subscriptions (id, status, trial_end, seats, plan_id, mrr_minor, currency, canceled_at, customer_id, last_event_at, tenant_id, provider, external_id, account_id, created_at, updated_at)
         VALUES (gen_random_uuid(), $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, now(), now()) RETURNING id, customer_id`,
        [...values, tenantId, PROVIDER, externalId, account],
      );

  const signals: { kind: string; value: number; attributes?: Record<string, unknown> }[] = [];
  // The trial rule (docs/decisions.md §5): only a later trial_end on a subscription that already had one is an extension.
  if (existing?.trial_end && facts.trialEnd && facts.trialEnd > existing.trial_end) {
    ctx.outbox.push(
      eventOf(
        'subscription.trial_extended',
        { tenantId, subscriptionId: sub!.id, customerId: sub!.customer_id, previousTrialEnd: existing.trial_end, trialEnd: facts.trialEnd },
        // One announcement per provider event: a trial moved later, back, then later again is extended twice.
        { subject: sub!.id, dedupKey: `subscription.trial_extended:${ctx.event.body?.id ?? ctx.event.id}` },
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
      customerId: sub!.customer_id,
      inboxEventId: ctx.event.id,
      source: PROVIDER,
      occurredAt: at,
      accountId: account,
      ...s,
    })),
  );

  if (facts.status === 'canceled' && existing?.status !== 'canceled' && sub!.customer_id) {
    await churnOutcomeRows.insert(sql, {
      tenantId,
      customerId: sub!.customer_id,
      churned: true,
      at: facts.canceledAt ?? at,
      source: PROVIDER,
    });
  }
  return 'processed';
}

export const normalizeStripe: Normalizer = async (ctx) => {
  const type = String(ctx.event.body?.type ?? '');
  const o = ctx.event.body?.data?.object;
  if (type === 'customer.created' || type === 'customer.updated') return upsertCustomer(ctx, o);
  // Own keys only: `in` would also find `constructor` and the other members of Object.prototype.
  if (Object.hasOwn(INVOICE_EVENTS, type)) return invoiceTransition(ctx, o, INVOICE_EVENTS[type]!);
  if (type === 'invoice.payment_failed') return paymentFailed(ctx, o);
  if (type === 'invoice_payment.paid') return invoicePaymentPaid(ctx, o);
  if (type === 'charge.refunded') return refunded(ctx, o);
  if (type.startsWith('customer.subscription.')) return subscriptionChanged(ctx, o, type === 'customer.subscription.deleted');
  return 'ignored';
};
