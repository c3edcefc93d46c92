import { operator } from '../../src/services/audit.ts';
import { beforeAll, describe, expect, it } from 'vitest';
import { createInboundSecretStore } from '../../src/services/integrations.ts';
import { appWithWorker, testSecretBox } from '../support/app.ts';
import { tenantWithKey } from '../support/factories.ts';
import { fixtureNames, readFixture, replayHeaders, type RecordedRequest } from '../support/provider-fixtures.ts';
import * as p from '../support/providers.ts';

// Stripe deliveries recorded in the shapes of three API versions (test/fixtures/providers/stripe), each
// re-signed at send time with Stripe's own library (Stripe refuses signatures older than 300 s) and sent
// with the headers Stripe sends, then checked for what it changed.

const t = appWithWorker();

async function stripeTenant() {
  const { tenantId } = await tenantWithKey(t.prisma);
  const { secret } = await createInboundSecretStore(t.prisma, testSecretBox(), { cacheMs: 0 }).put({ tenantId, provider: 'stripe' }, operator(tenantId));
  return { tenantId, secret };
}

/** Sends a recorded request as Stripe would now: same headers and bytes, a fresh SDK signature. */
async function replay(tenantId: string, secret: string, r: RecordedRequest) {
  const signed = p.stripeSdkSigned(secret, r.body.toString('utf8'));
  const res = await t.app.inject({
    method: 'POST',
    url: `/api/v1/webhooks/in/stripe/${tenantId}`,
    headers: replayHeaders(r, { 'stripe-signature': signed.headers['stripe-signature']! }),
    payload: r.body,
  });
  await expect
    .poll(() => t.prisma.inboxEvent.count({ where: { tenantId, status: 'received' } }), { timeout: 10_000, interval: 50 })
    .toBe(0);
  return res;
}

const outbox = (tenantId: string, type: string) =>
  t.prisma.outboxEvent
    .findMany({ where: { tenantId, type }, orderBy: { createdAt: 'asc' } })
    .then((rows) => rows.map((r) => r.payload as any));
const signalsOf = (tenantId: string, kind: string) => t.prisma.signal.findMany({ where: { tenantId, kind } });
const theInvoice = (tenantId: string) => t.prisma.invoice.findFirstOrThrow({ where: { tenantId } });
const theCustomer = (tenantId: string) => t.prisma.customer.findFirstOrThrow({ where: { tenantId } });

const VERSIONS = [
  // [API version, the shape's era, the payment payment.failed names]
  { version: '2020-08-27', suffix: 'Lg2020', failedPayment: 'pi_3Lg2020', refundReason: 'requested_by_customer' },
  // From 2022-11-15 the reason comes from the refund.created recorded before charge.refunded.
  { version: '2024-06-20', suffix: 'Pb2024', failedPayment: 'pi_3Pb2024', refundReason: 'requested_by_customer' },
  // Since 2025-03-31 a failed invoice names no payment, and none was paid before: the invoice is the reference.
  { version: '2025-09-30.clover', suffix: 'Cl2025', failedPayment: 'in_1Cl2025', refundReason: 'requested_by_customer' },
];

/** What each recorded event must have done, checked right after it was processed. */
const EFFECTS: Record<string, (tenantId: string, v: (typeof VERSIONS)[number]) => Promise<void>> = {
  'customer.created': async (tenantId, v) => {
    const c = await theCustomer(tenantId);
    expect(c).toMatchObject({ name: 'Initech', email: 'billing@initech.example', domain: 'initech.example' });
    expect(await t.prisma.customerIdentity.count({ where: { tenantId, provider: 'stripe', externalId: `cus_${v.suffix}` } })).toBe(1);
    expect(await outbox(tenantId, 'customer.created')).toEqual([expect.objectContaining({ id: c.id, name: 'Initech' })]);
  },
  'customer.subscription.created': async (tenantId) => {
    const sub = await t.prisma.subscription.findFirstOrThrow({ where: { tenantId } });
    expect(sub).toMatchObject({ status: 'trialing', seats: 5, planId: 'price_pro', customerId: (await theCustomer(tenantId)).id });
  },
  'invoice.created': async (tenantId) => {
    const inv = await theInvoice(tenantId);
    expect(inv).toMatchObject({ status: 'draft', totalMinor: 4900n, currency: 'usd', customerId: (await theCustomer(tenantId)).id });
    expect(await outbox(tenantId, 'invoice.created')).toEqual([
      expect.objectContaining({ invoice_id: inv.id, total: '49.00', status: 'draft' }),
    ]);
  },
  'invoice.finalized': async (tenantId) => {
    expect((await theInvoice(tenantId)).status).toBe('open');
  },
  'invoice.payment_failed': async (tenantId, v) => {
    const inv = await theInvoice(tenantId);
    expect(inv.status).toBe('open');
    expect(await outbox(tenantId, 'payment.failed')).toEqual([
      {
        tenant_id: tenantId,
        payment_id: v.failedPayment,
        invoice_id: inv.id,
        customer_id: inv.customerId,
        amount: '49.00',
        currency: 'usd',
        reason: 'payment_failed',
      },
    ]);
    expect(await signalsOf(tenantId, 'billing.payment_failed')).toHaveLength(1);
  },
  'invoice_payment.paid': async (tenantId, v) => {
    const link = await t.prisma.invoicePayment.findFirstOrThrow({ where: { tenantId, paymentId: `pi_3${v.suffix}` } });
    expect(link.invoiceExternalId).toBe(`in_1${v.suffix}`);
  },
  'invoice.paid': async (tenantId) => {
    const inv = await theInvoice(tenantId);
    expect(inv.status).toBe('paid');
    expect(await outbox(tenantId, 'invoice.paid')).toEqual([
      expect.objectContaining({ invoice_id: inv.id, status: 'paid', total: '49.00' }),
    ]);
    expect(await signalsOf(tenantId, 'billing.invoice_paid')).toHaveLength(1);
  },
  'refund.created': async (tenantId) => {
    expect(await t.prisma.inboxEvent.findFirstOrThrow({ where: { tenantId, eventType: 'refund.created' } })).toMatchObject({
      status: 'ignored',
    });
    expect(await outbox(tenantId, 'payment.refunded')).toEqual([]);
  },
  'charge.refunded': async (tenantId, v) => {
    const inv = await theInvoice(tenantId);
    expect(await outbox(tenantId, 'payment.refunded')).toEqual([
      {
        tenant_id: tenantId,
        payment_id: `ch_3${v.suffix}`,
        invoice_id: inv.id,
        customer_id: inv.customerId,
        amount: '49.00',
        currency: 'usd',
        reason: v.refundReason,
      },
    ]);
    expect(await signalsOf(tenantId, 'billing.refund')).toHaveLength(1);
  },
  'customer.subscription.updated': async (tenantId) => {
    const [extended] = await outbox(tenantId, 'subscription.trial_extended');
    expect(extended).toMatchObject({ previous_trial_end: '2025-12-06T08:26:40.000Z', trial_end: '2025-12-20T08:26:40.000Z' });
    expect(await signalsOf(tenantId, 'billing.trial_extended')).toEqual([expect.objectContaining({ value: 14 })]);
  },
  'customer.subscription.deleted': async (tenantId) => {
    expect((await t.prisma.subscription.findFirstOrThrow({ where: { tenantId } })).status).toBe('canceled');
    expect(await t.prisma.churnOutcome.findMany({ where: { tenantId } })).toEqual([
      expect.objectContaining({ customerId: (await theCustomer(tenantId)).id, churned: true, source: 'stripe' }),
    ]);
  },
};

describe.each(VERSIONS)('Stripe API $version, replayed as recorded', (v) => {
  let tenant: { tenantId: string; secret: string };
  beforeAll(async () => {
    tenant = await stripeTenant();
  });
  const names = fixtureNames('stripe', `${v.version}.`);

  it('has a recording of every event this version sends for the story', () => {
    expect(names.length).toBeGreaterThanOrEqual(9);
  });

  it.each(names)('%s is accepted and takes effect', async (name) => {
    const recorded = readFixture('stripe', name);
    expect(recorded.headers['content-type']).toBe('application/json; charset=utf-8');
    const res = await replay(tenant.tenantId, tenant.secret, recorded);
    expect(res.statusCode).toBe(202);
    const type = JSON.parse(recorded.body.toString('utf8')).type as string;
    await EFFECTS[type]!(tenant.tenantId, v);
  });
});

describe('Stripe API 2025-03-31 and later', () => {
  it('names the payment in payment.failed when an earlier invoice_payment.paid tied it to the invoice', async () => {
    const { tenantId, secret } = await stripeTenant();
    await replay(tenantId, secret, readFixture('stripe', '2025-09-30.clover.06.invoice_payment.paid'));
    await replay(tenantId, secret, readFixture('stripe', '2025-09-30.clover.05.invoice.payment_failed'));
    expect((await outbox(tenantId, 'payment.failed'))[0]).toMatchObject({
      payment_id: 'pi_3Cl2025',
      invoice_id: (await theInvoice(tenantId)).id,
    });
  });

  it('names the payment of an invoice whose payments list is expanded, newest first', async () => {
    const { tenantId, secret } = await stripeTenant();
    const payment = (id: string, pi: string, created: number) => ({
      id,
      object: 'invoice_payment',
      invoice: 'in_exp',
      created,
      status: 'open',
      payment: { type: 'payment_intent', payment_intent: pi },
    });
    const invoice = p.stripeInvoice('in_exp', 'cus_exp', 2500, {
      status: 'open',
      payments: { object: 'list', has_more: false, data: [payment('inpay_old', 'pi_old', 100), payment('inpay_new', 'pi_new', 200)] },
    });
    const event = { ...p.stripeEvent('invoice.payment_failed', invoice), api_version: '2025-09-30.clover' };
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/v1/webhooks/in/stripe/${tenantId}`,
      ...(({ headers, body }) => ({ headers, payload: body }))(p.stripeSdkSigned(secret, JSON.stringify(event))),
    });
    expect(res.statusCode).toBe(202);
    await expect
      .poll(() => outbox(tenantId, 'payment.failed'), { timeout: 10_000 })
      .toEqual([expect.objectContaining({ payment_id: 'pi_new' })]);
  });

  it('finds the invoice of a refunded charge through its payment intent', async () => {
    const { tenantId, secret } = await stripeTenant();
    for (const n of ['03.invoice.created', '06.invoice_payment.paid', '09.charge.refunded']) {
      await replay(tenantId, secret, readFixture('stripe', `2025-09-30.clover.${n}`));
    }
    const [refund] = await outbox(tenantId, 'payment.refunded');
    expect(refund).toMatchObject({ payment_id: 'ch_3Cl2025', invoice_id: (await theInvoice(tenantId)).id });
  });
});

describe('signed by the stripe package', () => {
  it('accepts an event sent as application/json; charset=utf-8 with Stripe’s headers, and applies it', async () => {
    const { tenantId, secret } = await stripeTenant();
    const payload = JSON.stringify(
      p.stripeEvent('customer.created', p.stripeCustomer('cus_sdk', 'ops@umbrella.example', 'Umbrella')),
      null,
      2,
    );
    const signed = p.stripeSdkSigned(secret, payload);
    const res = await t.app.inject({ method: 'POST', url: `/api/v1/webhooks/in/stripe/${tenantId}`, headers: signed.headers, payload });
    expect(res.statusCode).toBe(202);
    await expect.poll(() => t.prisma.customer.count({ where: { tenantId, name: 'Umbrella' } }), { timeout: 10_000 }).toBe(1);
  });
});
