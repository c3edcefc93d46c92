import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { processInboxBatch, processInboxEvent } from '../../src/ingest/processor.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { tenantWithKey } from '../support/factories.ts';
import { holdInvoice, lockWaiters, storeGroup } from '../support/inbox.ts';
import * as p from '../support/providers.ts';
import { fixtureNames, readFixture } from '../support/provider-fixtures.ts';

// A batch applies consecutive Stripe invoice events together, a statement per step for all the events of
// a wave (normalizers/stripe.ts InvoiceSegment). What it must not change: the outcome of applying the same
// events one at a time, in order. No worker runs here, so nothing but the test applies the stored events.

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());
afterEach(() => t.pool.query('DROP TRIGGER IF EXISTS test_count_invoice_inserts ON invoices'));

const rid = () => randomUUID().slice(0, 8);

/**
 * One tenant's Stripe traffic, as Stripe sends it: a customer, then invoices of it and of others in every
 * state, one invoice going draft → open → paid within the batch, an invoice stored before, a payment
 * failure, an invoice going overdue, a customer known only by the email domain of its invoice, an event
 * kept but not used and a subscription in the middle, and a payment two invoices name (the first to name it keeps it: here
 * one whose event comes in a later wave than the other's).
 */
function traffic(existing: string) {
  const [a, b, c, d, f] = ['a', 'b', 'c', 'd', 'f'].map((n) => `in_${n}`) as [string, string, string, string, string];
  const paid = (id: string, total: number, payment: string) =>
    p.stripeEvent('invoice.paid', p.stripeInvoice(id, 'cus_acme', total, { status: 'paid', payment_intent: payment }));
  return [
    p.stripeEvent('invoice.created', p.stripeInvoice('in_early', 'cus_acme', 500)),
    p.stripeEvent('customer.created', p.stripeCustomer('cus_acme', 'billing@acme.example', 'Acme')),
    p.stripeEvent('invoice.created', p.stripeInvoice(a, 'cus_acme', 1000)),
    p.stripeEvent('invoice.created', p.stripeInvoice(b, 'cus_other', 2000, { customer_email: 'ap@acme.example' })),
    p.stripeEvent('invoice.updated', p.stripeInvoice(a, 'cus_acme', 1000)),
    p.stripeEvent('invoice.finalized', p.stripeInvoice(existing, 'cus_acme', 3000, { status: 'open' })),
    paid(c, 4000, 'pi_c'),
    p.stripeEvent('invoice.finalized', p.stripeInvoice(a, 'cus_acme', 1100, { status: 'open' })),
    p.stripeEvent('customer.subscription.created', p.stripeSubscription('sub_acme', 'cus_acme', null)),
    paid(a, 1100, 'pi_shared'),
    paid(f, 6000, 'pi_shared'),
    p.stripeEvent('invoice.payment_failed', p.stripeInvoice(d, 'cus_nobody', 5000, { status: 'open', attempt_count: 1 })),
    p.stripeEvent('invoice.overdue', p.stripeInvoice(d, 'cus_nobody', 5000, { status: 'open' })),
    p.stripeEvent('invoice.voided', p.stripeInvoice(b, 'cus_other', 2000, { status: 'void' })),
    p.stripeEvent('invoice.created', p.stripeInvoice(existing, 'cus_acme', 3000)),
  ];
}

/**
 * Each event's outcome, the invoices, their payments, outbox events and signals of a tenant whose traffic
 * was stored as `ids`, with its own ids replaced by what they name (an inbox event by its place in the traffic).
 */
async function outcome(tenantId: string, ids: string[]) {
  const names = new Map<string, string>([[tenantId, 'tenant'], ...ids.map((id, i): [string, string] => [id, `event ${i}`])]);
  const { rows: customers } = await t.pool.query<{ id: string; name: string; domain: string | null }>(
    'SELECT id, name, domain FROM customers WHERE tenant_id = $1 ORDER BY name',
    [tenantId],
  );
  for (const c of customers) names.set(c.id, `customer ${c.name}`);
  const { rows: invoices } = await t.pool.query(
    `SELECT id, external_id, status::text AS status, total_minor::text AS total, currency, customer_id, account_id, due_at,
            paid_at, overdue_at
     FROM invoices WHERE tenant_id = $1 ORDER BY external_id`,
    [tenantId],
  );
  for (const i of invoices) names.set(i.id, `invoice ${i.external_id}`);
  const { rows: subscriptions } = await t.pool.query(
    'SELECT id, external_id, status, seats, mrr_minor::text AS mrr, customer_id FROM subscriptions WHERE tenant_id = $1 ORDER BY external_id',
    [tenantId],
  );
  for (const sub of subscriptions) names.set(sub.id, `subscription ${sub.external_id}`);
  // Row times differ between the two tenants' runs; everything else must not.
  const named = (v: unknown) =>
    JSON.parse(JSON.stringify(v), (k, x) =>
      k === 'created_at' || k === 'updated_at' ? undefined : typeof x === 'string' && names.has(x) ? names.get(x) : x,
    );
  const { rows: outbox } = await t.pool.query('SELECT type, subject, payload FROM outbox_events WHERE tenant_id = $1', [tenantId]);
  const { rows: signals } = await t.pool.query(
    'SELECT kind, value, customer_id, account_id, attributes, inbox_event_id, occurred_at FROM signals WHERE tenant_id = $1',
    [tenantId],
  );
  const sorted = (rows: unknown[]) => named(rows).sort((x: unknown, y: unknown) => JSON.stringify(x).localeCompare(JSON.stringify(y)));
  const { rows: payments } = await t.pool.query(
    'SELECT payment_id, invoice_external_id FROM invoice_payments WHERE tenant_id = $1 ORDER BY payment_id',
    [tenantId],
  );
  const { rows: statuses } = await t.pool.query<{ id: string; status: string }>(
    'SELECT id, status::text AS status FROM inbox_events WHERE id = ANY($1::uuid[])',
    [ids],
  );

  return {
    outcomes: ids.map((id) => statuses.find((r) => r.id === id)?.status),
    subscriptions: named(subscriptions.map(({ id: _, ...sub }) => sub)),
    payments,
    customers: named(customers.map(({ id: _, ...c }) => c)),
    invoices: named(invoices.map(({ id: _, ...i }) => i)),
    outbox: sorted(outbox),
    signals: sorted(signals),
  };
}

/** A tenant with one invoice already stored, and its Stripe traffic stored as one accepting group. */
async function tenantWithTraffic(events: ReturnType<typeof traffic>) {
  const { tenantId } = await tenantWithKey(t.prisma);
  await t.pool.query(
    `INSERT INTO invoices (id, tenant_id, provider, external_id, status, total_minor, currency, created_at, updated_at)
     VALUES (gen_random_uuid(), $1, 'stripe', 'in_stored', 'draft', 3000, 'usd', now(), now())`,
    [tenantId],
  );
  return { tenantId, ids: await storeGroup(t.pool, tenantId, events) };
}

/** Counts the statements that insert invoices for a tenant, from now on. */
async function countInvoiceInserts(tenantId: string) {
  await t.pool.query('CREATE TABLE IF NOT EXISTS test_invoice_inserts (tenant_id uuid, rows int)');
  await t.pool.query(`CREATE OR REPLACE FUNCTION test_count_invoice_inserts() RETURNS trigger AS $$
    BEGIN INSERT INTO test_invoice_inserts SELECT tenant_id, count(*) FROM inserted GROUP BY tenant_id; RETURN NULL; END $$ LANGUAGE plpgsql`);
  await t.pool.query(`CREATE TRIGGER test_count_invoice_inserts AFTER INSERT ON invoices REFERENCING NEW TABLE AS inserted
    FOR EACH STATEMENT EXECUTE FUNCTION test_count_invoice_inserts()`);
  return async () =>
    (await t.pool.query<{ rows: number }>('SELECT rows FROM test_invoice_inserts WHERE tenant_id = $1', [tenantId])).rows.map(
      (r) => r.rows,
    );
}

describe('a batch of Stripe invoice events', () => {
  it('ends with the same invoices, outbox events, signals and customers as its events applied one at a time', async () => {
    // The same bodies for both tenants: their times (due dates, event times) must not differ by a tick.
    const events = traffic('in_stored');
    const alone = await tenantWithTraffic(events);
    for (const id of alone.ids) await processInboxEvent(t.pool, id);
    const batched = await tenantWithTraffic(events);
    const results = await processInboxBatch(
      t.pool,
      batched.ids.map((id) => ({ id })),
    );
    expect([...results.values()].every((r) => r === 'processed' || r === 'ignored')).toBe(true);

    const expected = await outcome(alone.tenantId, alone.ids);
    // The traffic reaches every path: attribution by identity and by domain, creation, transitions, a refused
    // one, an unused event, a payment two invoices name.
    expect(expected.invoices.map((i: { status: string }) => i.status)).toEqual([
      'paid',
      'void',
      'paid',
      'overdue',
      'draft',
      'paid',
      'open',
    ]);
    expect(expected.invoices.map((i: { customer_id: string | null }) => i.customer_id)).toContain('customer Acme');
    expect(expected.outcomes.filter((o) => o === 'ignored')).toHaveLength(2);
    expect(expected.subscriptions).toEqual([
      { external_id: 'sub_acme', status: 'active', seats: 5, mrr: '25000', customer_id: 'customer Acme' },
    ]);
    expect(expected.payments).toEqual([
      { payment_id: 'pi_c', invoice_external_id: 'in_c' },
      { payment_id: 'pi_shared', invoice_external_id: 'in_a' },
    ]);
    expect(await outcome(batched.tenantId, batched.ids)).toEqual(expected);
  });

  it('creates the invoices of consecutive events about different invoices in one statement', async () => {
    const { tenantId } = await tenantWithKey(t.prisma);
    const inserts = await countInvoiceInserts(tenantId);
    const events = Array.from({ length: 20 }, (_, i) =>
      p.stripeEvent('invoice.created', p.stripeInvoice(`in_${i}_${rid()}`, `cus_${i}`, 100 + i)),
    );
    const ids = await storeGroup(t.pool, tenantId, events);

    await processInboxBatch(
      t.pool,
      ids.map((id) => ({ id })),
    );
    expect(await inserts()).toEqual([20]);
    const { rows } = await t.pool.query('SELECT count(*)::int AS n FROM outbox_events WHERE tenant_id = $1 AND type = $2', [
      tenantId,
      'invoice.created',
    ]);
    expect(rows[0].n).toBe(20);
  });

  it('keeps tenants apart when their events share a wave: each invoice gets its own tenant\u2019s customer', async () => {
    const tenants = [await tenantWithKey(t.prisma), await tenantWithKey(t.prisma)].map((k) => k.tenantId);
    // Each tenant knows a customer by the same Stripe account id, and by the same email domain.
    for (const [n, tenantId] of tenants.entries()) {
      const [id] = await storeGroup(t.pool, tenantId, [
        p.stripeEvent('customer.created', p.stripeCustomer('cus_same', 'billing@same.example', `Customer of tenant ${n}`)),
      ]);
      await processInboxEvent(t.pool, id!);
    }
    const ids: string[] = [];
    for (const tenantId of tenants)
      ids.push(
        ...(await storeGroup(t.pool, tenantId, [
          p.stripeEvent('invoice.created', p.stripeInvoice('in_same', 'cus_same', 100)),
          p.stripeEvent('invoice.created', p.stripeInvoice('in_by_domain', 'cus_unknown', 200, { customer_email: 'ap@same.example' })),
        ])),
      );

    await processInboxBatch(
      t.pool,
      ids.map((id) => ({ id })),
    );
    for (const [n, tenantId] of tenants.entries()) {
      const { rows } = await t.pool.query(
        `SELECT i.external_id, c.name FROM invoices i LEFT JOIN customers c ON c.id = i.customer_id
         WHERE i.tenant_id = $1 ORDER BY i.external_id`,
        [tenantId],
      );
      expect(rows).toEqual([
        { external_id: 'in_by_domain', name: `Customer of tenant ${n}` },
        { external_id: 'in_same', name: `Customer of tenant ${n}` },
      ]);
    }
  });

  it('applies a second event about an invoice in a later wave, which finds what the first left', async () => {
    const { tenantId } = await tenantWithKey(t.prisma);
    const inserts = await countInvoiceInserts(tenantId);
    const [x, y, z] = ['x', 'y', 'z'].map((n) => `in_${n}_${rid()}`) as [string, string, string];
    const ids = await storeGroup(t.pool, tenantId, [
      p.stripeEvent('invoice.created', p.stripeInvoice(x, 'cus_1', 100)),
      p.stripeEvent('invoice.created', p.stripeInvoice(y, 'cus_1', 200)),
      p.stripeEvent('invoice.paid', p.stripeInvoice(x, 'cus_1', 150, { status: 'paid' })),
      // Late: x is paid by now, and a paid invoice never moves back.
      p.stripeEvent('invoice.finalized', p.stripeInvoice(x, 'cus_1', 150, { status: 'open' })),
      p.stripeEvent('invoice.created', p.stripeInvoice(z, 'cus_1', 300)),
    ]);

    const results = await processInboxBatch(
      t.pool,
      ids.map((id) => ({ id })),
    );
    expect(ids.map((id) => results.get(id))).toEqual(['processed', 'processed', 'processed', 'ignored', 'processed']);
    // x, y and z are created together; x is then paid, and its finalisation finds it paid.
    expect(await inserts()).toEqual([3]);
    const { rows } = await t.pool.query(
      'SELECT external_id, status::text AS status, total_minor::int AS total, paid_at IS NOT NULL AS paid FROM invoices WHERE tenant_id = $1 ORDER BY external_id',
      [tenantId],
    );
    expect(rows).toEqual([
      { external_id: x, status: 'paid', total: 150, paid: true },
      { external_id: y, status: 'draft', total: 200, paid: false },
      { external_id: z, status: 'draft', total: 300, paid: false },
    ]);
    // Each announcement carries the invoice as its event left it.
    const { rows: announced } = await t.pool.query(
      `SELECT type, payload->>'status' AS status, payload->>'total' AS total FROM outbox_events
       WHERE tenant_id = $1 AND subject = (SELECT id::text FROM invoices WHERE external_id = $2) ORDER BY type`,
      [tenantId, x],
    );
    expect(announced).toEqual([
      { type: 'invoice.created', status: 'draft', total: '1.00' },
      { type: 'invoice.paid', status: 'paid', total: '1.50' },
    ]);
  });

  it('leaves an invoice another transaction created meanwhile to its event, which then finds it', async () => {
    const { tenantId } = await tenantWithKey(t.prisma);
    const [x, y] = ['x', 'y'].map((n) => `in_${n}_${rid()}`) as [string, string];
    const ids = await storeGroup(t.pool, tenantId, [
      p.stripeEvent('invoice.created', p.stripeInvoice(y, 'cus_1', 200)),
      p.stripeEvent('invoice.paid', p.stripeInvoice(x, 'cus_1', 900, { status: 'paid' })),
    ]);
    const release = await holdInvoice(t.pool, tenantId, x);
    const batch = processInboxBatch(
      t.pool,
      ids.map((id) => ({ id })),
    );
    await expect.poll(() => lockWaiters(t.pool), { timeout: 10_000 }).toBe(1);
    await release('commit');

    expect([...(await batch).values()]).toEqual(['processed', 'processed']);
    const { rows } = await t.pool.query(
      'SELECT external_id, status::text AS status, total_minor::int AS total FROM invoices WHERE tenant_id = $1 ORDER BY external_id',
      [tenantId],
    );
    // The held invoice (a draft of 0) was found and moved to paid with the event's total, not created twice.
    expect(rows).toEqual([
      { external_id: x, status: 'paid', total: 900 },
      { external_id: y, status: 'draft', total: 200 },
    ]);
    const paid = await t.pool.query(`SELECT count(*)::int AS n FROM signals WHERE tenant_id = $1 AND kind = 'billing.invoice_paid'`, [
      tenantId,
    ]);
    expect(paid.rows[0].n).toBe(1);
  });

  // Stripe deliveries recorded in the shapes of three API versions (test/fixtures/providers/stripe): a
  // customer, its subscription, an invoice from creation to payment with a failure between, a refund, the
  // subscription's end. One batch holds them all: segments, the events inside them and the ones that end
  // them, as Stripe's own payloads carry them.
  it.each(['2020-08-27.', '2024-06-20.', '2025-09-30.clover.'])(
    'ends the recorded Stripe story of API %s as its events applied one at a time',
    async (version) => {
      const story = fixtureNames('stripe', version).map((name) => JSON.parse(readFixture('stripe', name).body.toString('utf8')));
      expect(story.length).toBeGreaterThanOrEqual(9);
      const alone = await tenantWithKey(t.prisma);
      const aloneIds = await storeGroup(t.pool, alone.tenantId, story);
      for (const id of aloneIds) await processInboxEvent(t.pool, id);
      const batched = await tenantWithKey(t.prisma);
      const batchedIds = await storeGroup(t.pool, batched.tenantId, story);
      await processInboxBatch(
        t.pool,
        batchedIds.map((id) => ({ id })),
      );

      const expected = await outcome(alone.tenantId, aloneIds);
      expect(expected.invoices.map((i: { status: string }) => i.status)).toEqual(['paid']);
      expect(expected.outbox.map((o: { type: string }) => o.type)).toEqual(
        expect.arrayContaining(['invoice.created', 'invoice.paid', 'payment.failed', 'payment.refunded']),
      );
      expect(await outcome(batched.tenantId, batchedIds)).toEqual(expected);
    },
  );
});
