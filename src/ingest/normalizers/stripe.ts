import { attributePending, resolveCustomer } from '../attribution.ts';
import { companyDomain } from '../email-domain.ts';
import { lockObject } from '../locks.ts';
import { canMove, EVENT_FOR_STATUS, type InvoiceStatus } from '../invoice-state.ts';
import { recordSignals } from '../signals.ts';
import { enqueueEvents } from '../../outbox/enqueue.ts';
import { formatAmount } from '../../outbox/money.ts';
import { fromUnix, type NormalizeContext, type Normalizer, type Outcome, str } from './types.ts';

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

/** The account id of an object's customer, whether expanded or not. */
const accountOf = (o: any): string | null => str(typeof o?.customer === 'object' ? o.customer?.id : o?.customer);
const eventTime = (ctx: NormalizeContext) => fromUnix(ctx.event.body?.created) ?? ctx.event.receivedAt;

async function customerFor(ctx: NormalizeContext, account: string | null, email?: unknown) {
  return resolveCustomer(ctx.tx, ctx.event.tenantId, { provider: PROVIDER, accountIds: [account], emailDomain: companyDomain(email) });
}

/** Stripe customers become our customers (matched by identity, then email domain, else created). */
async function upsertCustomer(ctx: NormalizeContext, o: any): Promise<Outcome> {
  const { tx } = ctx;
  const tenantId = ctx.event.tenantId;
  const account = str(o?.id);
  if (!account) return 'ignored';
  await lockObject(tx, tenantId, PROVIDER, account);
  const domain = companyDomain(o.email);
  const existing = await resolveCustomer(tx, tenantId, { provider: PROVIDER, accountIds: [account], emailDomain: domain });
  let customerId = existing;
  if (!customerId) {
    const created = await tx.customer.create({
      data: { tenantId, name: str(o.name) ?? str(o.email) ?? account, email: str(o.email)?.toLowerCase() ?? null, domain },
    });
    customerId = created.id;
    await enqueueEvents(tx, [
      {
        tenantId,
        type: 'customer.created',
        subject: customerId,
        dedupKey: `customer.created:${customerId}`,
        payload: {
          tenant_id: tenantId,
          id: customerId,
          external_id: null,
          name: created.name,
          email: created.email,
          domain,
          health_score: null,
          health_status: null,
          churn_risk_level: null,
          created_at: created.createdAt.toISOString(),
          updated_at: created.updatedAt.toISOString(),
        },
      },
    ]);
  }
  await tx.customerIdentity.createMany({ data: [{ tenantId, customerId, provider: PROVIDER, externalId: account }], skipDuplicates: true });
  await attributePending(tx, tenantId, customerId, { identities: [{ provider: PROVIDER, externalId: account }] });
  return 'processed';
}

function invoicePayload(
  tenantId: string,
  inv: { id: string; status: string; totalMinor: bigint; currency: string; customerId: string | null; dueAt: Date | null },
) {
  return {
    tenant_id: tenantId,
    invoice_id: inv.id,
    status: inv.status,
    total: formatAmount(inv.totalMinor, inv.currency),
    currency: inv.currency,
    customer_id: inv.customerId,
    due_at: inv.dueAt?.toISOString() ?? null,
  };
}

/** Finds or creates our invoice for a Stripe invoice object, without changing its status. */
async function invoiceRow(ctx: NormalizeContext, o: any, initial: InvoiceStatus) {
  const tenantId = ctx.event.tenantId;
  const externalId = str(o?.id)!;
  await lockObject(ctx.tx, tenantId, PROVIDER, externalId);
  const found = await ctx.tx.invoice.findUnique({ where: { tenantId_provider_externalId: { tenantId, provider: PROVIDER, externalId } } });
  if (found) return { invoice: found, created: false };
  const account = accountOf(o);
  const invoice = await ctx.tx.invoice.create({
    data: {
      tenantId,
      provider: PROVIDER,
      externalId,
      accountId: account,
      customerId: await customerFor(ctx, account, o?.customer_email),
      status: initial,
      totalMinor: BigInt(Math.trunc(Number(o?.total ?? o?.amount_due ?? 0))),
      currency: String(o?.currency ?? 'usd').toLowerCase(),
      dueAt: fromUnix(o?.due_date),
    },
  });
  return { invoice, created: true };
}

async function invoiceTransition(ctx: NormalizeContext, o: any, target: InvoiceStatus): Promise<Outcome> {
  const tenantId = ctx.event.tenantId;
  if (!str(o?.id)) return 'ignored';
  const { invoice, created } = await invoiceRow(ctx, o, target);
  let current = invoice;
  if (!created) {
    if (!canMove(invoice.status as InvoiceStatus, target)) return 'ignored';
    current = await ctx.tx.invoice.update({
      where: { id: invoice.id },
      data: {
        status: target,
        totalMinor: BigInt(Math.trunc(Number(o?.total ?? invoice.totalMinor))),
        dueAt: fromUnix(o?.due_date) ?? invoice.dueAt,
        ...(target === 'paid' ? { paidAt: eventTime(ctx) } : {}),
        ...(target === 'overdue' ? { overdueAt: eventTime(ctx) } : {}),
      },
    });
  } else if (target === 'paid' || target === 'overdue') {
    current = await ctx.tx.invoice.update({
      where: { id: invoice.id },
      data: target === 'paid' ? { paidAt: eventTime(ctx) } : { overdueAt: eventTime(ctx) },
    });
  }
  // invoice.created announces a draft that came into being here; later statuses announce themselves.
  const type = EVENT_FOR_STATUS[target];
  if (type && (target !== 'draft' || created)) {
    await enqueueEvents(ctx.tx, [
      { tenantId, type, subject: current.id, dedupKey: `${type}:${current.id}`, payload: invoicePayload(tenantId, current) },
    ]);
  }
  if (target === 'paid' || target === 'overdue') {
    await recordSignals(ctx.tx, [
      {
        tenantId,
        customerId: current.customerId,
        inboxEventId: ctx.event.id,
        source: PROVIDER,
        kind: target === 'paid' ? 'billing.invoice_paid' : 'billing.invoice_overdue',
        occurredAt: eventTime(ctx),
        value: Number(current.totalMinor),
        accountId: current.accountId,
        attributes: { invoice_id: current.id, currency: current.currency },
      },
    ]);
  }
  return 'processed';
}

async function paymentFailed(ctx: NormalizeContext, o: any): Promise<Outcome> {
  const tenantId = ctx.event.tenantId;
  if (!str(o?.id)) return 'ignored';
  const initial = (['draft', 'open', 'paid', 'void', 'uncollectible'].includes(o?.status) ? o.status : 'open') as InvoiceStatus;
  const { invoice } = await invoiceRow(ctx, o, initial);
  const amountMinor = Math.trunc(Number(o?.amount_due ?? o?.total ?? 0));
  await enqueueEvents(ctx.tx, [
    {
      tenantId,
      type: 'payment.failed',
      subject: invoice.id,
      dedupKey: `payment.failed:${ctx.event.body?.id ?? ctx.event.id}`,
      payload: {
        tenant_id: tenantId,
        payment_id: str(o?.payment_intent) ?? str(o?.charge),
        invoice_id: invoice.id,
        customer_id: invoice.customerId,
        amount: formatAmount(amountMinor, invoice.currency),
        currency: invoice.currency,
        reason: str(o?.last_finalization_error?.message) ?? str(o?.last_payment_error?.message) ?? 'payment_failed',
      },
    },
  ]);
  await recordSignals(ctx.tx, [
    {
      tenantId,
      customerId: invoice.customerId,
      inboxEventId: ctx.event.id,
      source: PROVIDER,
      kind: 'billing.payment_failed',
      occurredAt: eventTime(ctx),
      value: amountMinor,
      accountId: invoice.accountId,
      attributes: { invoice_id: invoice.id, attempt_count: o?.attempt_count ?? null },
    },
  ]);
  return 'processed';
}

async function refunded(ctx: NormalizeContext, o: any): Promise<Outcome> {
  const tenantId = ctx.event.tenantId;
  const chargeId = str(o?.id);
  if (!chargeId) return 'ignored';
  const account = accountOf(o);
  const customerId = await customerFor(ctx, account, o?.billing_details?.email ?? o?.receipt_email);
  const invoiceExternal = str(typeof o?.invoice === 'object' ? o.invoice?.id : o?.invoice);
  const invoice = invoiceExternal
    ? await ctx.tx.invoice.findUnique({
        where: { tenantId_provider_externalId: { tenantId, provider: PROVIDER, externalId: invoiceExternal } },
        select: { id: true },
      })
    : null;
  const currency = String(o?.currency ?? 'usd').toLowerCase();
  const refundedMinor = Math.trunc(Number(o?.amount_refunded ?? o?.amount ?? 0));
  await enqueueEvents(ctx.tx, [
    {
      tenantId,
      type: 'payment.refunded',
      subject: chargeId,
      dedupKey: `payment.refunded:${chargeId}:${refundedMinor}`,
      payload: {
        tenant_id: tenantId,
        payment_id: chargeId,
        invoice_id: invoice?.id ?? null,
        customer_id: customerId,
        amount: formatAmount(refundedMinor, currency),
        currency,
        reason: str(o?.refunds?.data?.[0]?.reason) ?? null,
      },
    },
  ]);
  await recordSignals(ctx.tx, [
    {
      tenantId,
      customerId,
      inboxEventId: ctx.event.id,
      source: PROVIDER,
      kind: 'billing.refund',
      occurredAt: eventTime(ctx),
      value: refundedMinor,
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
    seats,
    planId: str(price?.id),
    mrrMinor: items.length ? BigInt(Math.round(monthly)) : null,
    currency: str(o?.currency)?.toLowerCase() ?? str(price?.currency)?.toLowerCase() ?? null,
    canceledAt: fromUnix(o?.canceled_at) ?? fromUnix(o?.ended_at),
  };
}

async function subscriptionChanged(ctx: NormalizeContext, o: any, deleted: boolean): Promise<Outcome> {
  const { tx } = ctx;
  const tenantId = ctx.event.tenantId;
  const externalId = str(o?.id);
  if (!externalId) return 'ignored';
  const at = eventTime(ctx);
  await lockObject(tx, tenantId, PROVIDER, externalId);
  const facts = subscriptionFacts(o);
  if (deleted) facts.status = 'canceled';
  const account = accountOf(o);
  const existing = await tx.subscription.findUnique({
    where: { tenantId_provider_externalId: { tenantId, provider: PROVIDER, externalId } },
  });
  // An older event never overwrites what a newer one already said.
  if (existing && existing.lastEventAt > at) return 'ignored';
  const customerId = existing?.customerId ?? (await customerFor(ctx, account));
  const sub = existing
    ? await tx.subscription.update({ where: { id: existing.id }, data: { ...facts, customerId, lastEventAt: at } })
    : await tx.subscription.create({
        data: { tenantId, provider: PROVIDER, externalId, accountId: account, customerId, ...facts, lastEventAt: at },
      });

  const signals = [];
  // SEED's trial rule: only a later trial_end on a subscription that already had one is an extension.
  if (existing?.trialEnd && facts.trialEnd && facts.trialEnd > existing.trialEnd) {
    await enqueueEvents(tx, [
      {
        tenantId,
        type: 'subscription.trial_extended',
        subject: sub.id,
        dedupKey: `subscription.trial_extended:${sub.id}:${facts.trialEnd.toISOString()}`,
        payload: {
          tenant_id: tenantId,
          subscription_id: sub.id,
          customer_id: sub.customerId,
          previous_trial_end: existing.trialEnd.toISOString(),
          trial_end: facts.trialEnd.toISOString(),
        },
      },
    ]);
    signals.push({ kind: 'billing.trial_extended', value: (facts.trialEnd.getTime() - existing.trialEnd.getTime()) / 86_400_000 });
  }
  if (facts.seats !== null && facts.seats !== (existing?.seats ?? null)) {
    signals.push({ kind: 'growth.seats', value: facts.seats, attributes: { previous: existing?.seats ?? null } });
  }
  if (existing && facts.mrrMinor !== null && existing.mrrMinor !== null && facts.mrrMinor !== existing.mrrMinor) {
    signals.push({
      kind: 'growth.mrr_change',
      value: Number(facts.mrrMinor - existing.mrrMinor),
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
    tx,
    signals.map((s) => ({
      tenantId,
      customerId: sub.customerId,
      inboxEventId: ctx.event.id,
      source: PROVIDER,
      occurredAt: at,
      accountId: account,
      attributes: {},
      ...s,
    })),
  );

  if (facts.status === 'canceled' && existing?.status !== 'canceled' && sub.customerId) {
    await tx.churnOutcome.create({
      data: { tenantId, customerId: sub.customerId, churned: true, at: facts.canceledAt ?? at, source: PROVIDER },
    });
  }
  return 'processed';
}

export const normalizeStripe: Normalizer = async (ctx) => {
  const type = String(ctx.event.body?.type ?? '');
  const o = ctx.event.body?.data?.object;
  if (type === 'customer.created' || type === 'customer.updated') return upsertCustomer(ctx, o);
  if (type in INVOICE_EVENTS) return invoiceTransition(ctx, o, INVOICE_EVENTS[type]!);
  if (type === 'invoice.payment_failed') return paymentFailed(ctx, o);
  if (type === 'charge.refunded') return refunded(ctx, o);
  if (type.startsWith('customer.subscription.')) return subscriptionChanged(ctx, o, type === 'customer.subscription.deleted');
  return 'ignored';
};
