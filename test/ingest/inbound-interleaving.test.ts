// Batches of inbound events applied side by side (src/ingest/processor.ts). A batch stays open while it
// applies its other events, so what it does is invisible to the batches beside it until it commits: the
// events of one group's message are applied in the order they were accepted (docs/inbound-webhooks.md),
// and attribution completed by the worker under the tenant's lock (services/customers.ts) leaves no event
// kept without a customer that a customer was given meanwhile.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MAX_BATCH } from '../../src/ingest/processor.ts';
import { operator } from '../../src/services/audit.ts';
import { createInboundSecretStore } from '../../src/services/integrations.ts';
import { appWithWorker, testSecretBox } from '../support/app.ts';
import { tenantWithKey } from '../support/factories.ts';
import { groupMessage, holdInvoice, lockWaiters, storeGroup } from '../support/inbox.ts';
import * as p from '../support/providers.ts';

const t = appWithWorker();

async function stripeTenantWithKey() {
  const k = await tenantWithKey(t.prisma);
  await createInboundSecretStore(t.prisma, testSecretBox(), { cacheMs: 0 }).put(
    { tenantId: k.tenantId, provider: 'stripe' },
    operator(k.tenantId),
  );
  return k;
}
const stripeTenant = async () => (await stripeTenantWithKey()).tenantId;

const suffix = () => randomUUID().slice(0, 8);

const statusOf = async (id: string) =>
  (await t.pool.query<{ status: string }>('SELECT status::text AS status FROM inbox_events WHERE id = $1', [id])).rows[0]?.status;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The customer of an invoice, and of the tenant's invoice_paid signals. */
async function ownersOf(tenantId: string, invoiceId: string) {
  const invoice = await t.prisma.invoice.findFirstOrThrow({ where: { tenantId, externalId: invoiceId } });
  const signals = await t.prisma.signal.findMany({ where: { tenantId, kind: 'billing.invoice_paid' }, select: { customerId: true } });
  return { invoice: invoice.customerId, signals: signals.map((s) => s.customerId) };
}

const invoiceCreated = (invoiceId: string, cus = `cus_${invoiceId}`) =>
  p.stripeEvent('invoice.created', p.stripeInvoice(invoiceId, cus, 1000));
const invoicePaid = (invoiceId: string, cus = `cus_${invoiceId}`) =>
  p.stripeEvent('invoice.paid', p.stripeInvoice(invoiceId, cus, 1000, { status: 'paid' }));

describe('a customer created by a batch', () => {
  it(
    'gets the invoices of events accepted after its customer.created, applied while that batch is still open',
    { timeout: 60_000 },
    async () => {
      const tenantId = await stripeTenant();
      const cus = `cus_${suffix()}`;
      const filler = `in_fill_${suffix()}`;
      const y = `in_y_${suffix()}`;
      // Stripe's customer.created, then (another group) invoice.paid for that customer's invoice.
      const first = await storeGroup(t.pool, tenantId, [
        p.stripeEvent('customer.created', p.stripeCustomer(cus, 'ap@globex.example', 'Globex')),
        invoiceCreated(filler),
      ]);
      const release = await holdInvoice(t.pool, tenantId, filler);
      let second: string[] = [];
      try {
        // The first batch creates the customer, then waits on the filler's invoice, its transaction open.
        await t.queue.publish('inbound.events', groupMessage(first));
        await expect.poll(() => lockWaiters(t.pool), { timeout: 10_000 }).toBeGreaterThan(0);
        second = await storeGroup(t.pool, tenantId, [invoicePaid(y, cus)]);
        await t.queue.publish('inbound.events', groupMessage(second));
        // Whichever way the worker orders them, the invoice.paid must end up attributed; give it time to run.
        await sleep(1500);
      } finally {
        await release();
      }
      for (const id of [...first, ...second]) await expect.poll(() => statusOf(id), { timeout: 20_000 }).toBe('processed');

      const customer = await t.prisma.customerIdentity.findFirstOrThrow({ where: { tenantId, provider: 'stripe', externalId: cus } });
      // Applied before the customer was committed, the invoice is attributed by the worker once both batches ended.
      await expect
        .poll(() => ownersOf(tenantId, y), { timeout: 10_000 })
        .toEqual({ invoice: customer.customerId, signals: [customer.customerId] });
    },
  );

  it('created over the API gets the invoice of an event applied while the request ran', { timeout: 60_000 }, async () => {
    const { tenantId, apiKey } = await stripeTenantWithKey();
    const cus = `cus_${suffix()}`;
    const y = `in_y_${suffix()}`;
    const filler = `in_fill_${suffix()}`;
    // The batch applies invoice.paid for an account no customer has yet, then waits on the filler's invoice.
    const ids = await storeGroup(t.pool, tenantId, [invoicePaid(y, cus), invoiceCreated(filler)]);
    const release = await holdInvoice(t.pool, tenantId, filler);
    let created: Promise<Response>;
    try {
      await t.queue.publish('inbound.events', groupMessage(ids));
      await expect.poll(() => lockWaiters(t.pool), { timeout: 10_000 }).toBeGreaterThan(0);
      created = t.app
        .inject({
          method: 'POST',
          url: '/api/v1/customers',
          headers: { 'x-api-key': apiKey },
          payload: { name: 'Initech', identities: [{ provider: 'stripe', external_id: cus }] },
        })
        .then((r) => new Response(r.body, { status: r.statusCode }));
      await sleep(500);
    } finally {
      await release();
    }
    const answer = await created!;
    expect(answer.status).toBe(201);
    const { id } = (await answer.json()) as { id: string };
    for (const e of ids) await expect.poll(() => statusOf(e), { timeout: 20_000 }).toBe('processed');
    // Kept without a customer by the batch open while the customer was created: the worker attributes it
    // once that batch has ended.
    await expect.poll(() => ownersOf(tenantId, y), { timeout: 10_000 }).toEqual({ invoice: id, signals: [id] });
  });
});

describe("the events of one group's message", () => {
  it('are applied in the order they were accepted even when the message is larger than a batch', { timeout: 60_000 }, async () => {
    const tenantId = await stripeTenant();
    const fillers = Array.from({ length: MAX_BATCH - 1 }, (_, i) => `in_fill_${i}_${suffix()}`);
    const x = `in_x_${suffix()}`;
    // One group (up to 200 events) accepted in this order: invoice.created of x is the 128th event and
    // invoice.paid of x, sent right after it, the 129th.
    const events = [...fillers.map((f) => invoiceCreated(f)), invoiceCreated(x), invoicePaid(x)];
    const ids = await storeGroup(t.pool, tenantId, events);
    // The first filler's invoice is busy a moment elsewhere (another event of it being applied): what is
    // applied before invoice.created of x waits for it.
    const release = await holdInvoice(t.pool, tenantId, fillers[0]!);
    try {
      await t.queue.publish('inbound.events', groupMessage(ids));
      await expect.poll(() => lockWaiters(t.pool), { timeout: 10_000 }).toBeGreaterThan(0);
      // Give anything not held back by that event time to run.
      await sleep(1500);
    } finally {
      await release();
    }
    for (const id of ids) await expect.poll(() => statusOf(id), { timeout: 20_000 }).not.toBe('received');

    const invoice = await t.prisma.invoice.findFirstOrThrow({ where: { tenantId, externalId: x } });
    const announced = await t.prisma.outboxEvent.findMany({ where: { tenantId, subject: invoice.id }, select: { type: true } });
    // invoice.created before invoice.paid: both applied, both announced (docs/inbound-webhooks.md).
    expect({ created: await statusOf(ids.at(-2)!), paid: await statusOf(ids.at(-1)!) }).toEqual({
      created: 'processed',
      paid: 'processed',
    });
    expect(announced.map((e) => e.type).sort()).toEqual(['invoice.created', 'invoice.paid']);
  });
});
