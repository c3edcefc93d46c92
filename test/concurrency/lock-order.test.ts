// Pairs of writing paths that met on the same customers, run statement by statement in the interleavings a
// generator draws (test/support/interleave.ts): whatever the order their statements go in, neither ends with
// PostgreSQL's deadlock error, and both leave what each would have left alone. A failing interleaving is
// shrunk by fast-check and printed with the statements in the order they went.
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/prisma.ts';
import { markOverdueInvoices } from '../../src/ingest/overdue.ts';
import { processInboxBatch } from '../../src/ingest/processor.ts';
import { operator } from '../../src/services/audit.ts';
import { attributeRequested, createCustomerService } from '../../src/services/customers.ts';
import { recordUsageEvents } from '../../src/services/usage-events.ts';
import { createScorer } from '../../src/scoring/recompute.ts';
import { customerRows } from '../../src/services/customer-rows.ts';
import { claimDue } from '../../src/scoring/scoring-queue.ts';
import { inTransaction, onPg } from '../../src/db/sql.ts';
import { enqueueEvents } from '../../src/outbox/events/enqueue.ts';
import { EVENTS } from '../../src/outbox/events/registry.ts';
import { relayOutbox } from '../../src/outbox/events/relay.ts';
import { createMemoryQueue } from '../../src/queue/memory.ts';
import { customer, tenantWithKey } from '../support/factories.ts';
import { storeGroup } from '../support/inbox.ts';
import { errorCodes, explain, interleave, RUNS, schedules, withFileDatabase } from '../support/interleave.ts';
import * as p from '../support/providers.ts';
import { emptyBodiesAbout } from '../../src/ingest/inbox.ts';

let url: string;
let pool: pg.Pool;
let prisma: Db;
withFileDatabase((db) => ({ url, pool, prisma } = db));

const short = () => randomUUID().slice(0, 8);

/**
 * A tenant with two customers, each known to Stripe by its own account, in id order: `first` sorts before
 * `second`, so a statement touching both locks `first` first.
 */
async function twoCustomers() {
  const { tenantId } = await tenantWithKey(prisma);
  const made = [];
  for (let i = 0; i < 2; i++) {
    const account = `cus_${short()}`;
    const c = await customer(prisma, tenantId, { name: `Customer ${i}` });
    await prisma.customerIdentity.create({ data: { tenantId, customerId: c.id, provider: 'stripe', externalId: account } });
    made.push({ id: c.id, account });
  }
  made.sort((a, b) => (a.id < b.id ? -1 : 1));
  return { tenantId, first: made[0]!, second: made[1]! };
}

/**
 * Stripe events a batch applies touching `second` before `first`, in separate statements: an invoice of
 * `second` paid (a wave: the invoice, then its signal), then a refund of `first`'s charge (its own signal).
 */
async function storedEvents(tenantId: string, c: Awaited<ReturnType<typeof twoCustomers>>) {
  const invoice = `in_${short()}`;
  const ids = await storeGroup(pool, tenantId, [
    p.stripeEvent('invoice.paid', p.stripeInvoice(invoice, c.second.account, 1500, { status: 'paid' })),
    p.stripeEvent('charge.refunded', {
      id: `ch_${short()}`,
      object: 'charge',
      customer: c.first.account,
      amount: 900,
      amount_refunded: 900,
      currency: 'usd',
    }),
    p.stripeEvent('invoice.paid', p.stripeInvoice(`in_${short()}`, c.first.account, 700, { status: 'paid' })),
  ]);
  return ids.map((id) => ({ id }));
}

const statuses = async (ids: { id: string }[]) =>
  (
    await pool.query<{ status: string }>('SELECT status::text AS status FROM inbox_events WHERE id = ANY($1::uuid[])', [
      ids.map((e) => e.id),
    ])
  ).rows
    .map((r) => r.status)
    .sort();

describe('writing paths over the same customers, in every interleaving drawn', () => {
  it('a batch of usage events beside a batch of Stripe events: both commit, nothing twice', async () => {
    await fc.assert(
      fc.asyncProperty(schedules, async (schedule) => {
        const c = await twoCustomers();
        const events = await storedEvents(c.tenantId, c);
        const usage = [c.first.id, c.second.id].map((customerId) => ({ customerId, event: 'report.viewed' }));
        const run = await interleave(
          url,
          {
            worker: (gated) => processInboxBatch(gated, events),
            api: (gated) => recordUsageEvents(gated, c.tenantId, usage, { idempotencyKey: `key-${short()}` }),
          },
          schedule,
        );
        expect(errorCodes(run), explain(run)).toEqual([]);
        expect(await statuses(events)).toEqual(['processed', 'processed', 'processed']);
        const { rows } = await pool.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM signals WHERE tenant_id = $1 AND kind = 'usage.event'`,
          [c.tenantId],
        );
        expect(rows[0]!.n).toBe(2);
      }),
      { numRuns: RUNS },
    );
  });

  it('the scoring loop writing its batch beside a batch of Stripe events about the same customers', async () => {
    await fc.assert(
      fc.asyncProperty(schedules, async (schedule) => {
        const c = await twoCustomers();
        const events = await storedEvents(c.tenantId, c);
        // Both customers claimed by the scoring loop, which meets them in customer order, the batch's the other way round.
        await pool.query(
          `INSERT INTO scoring_queue (customer_id, tenant_id, due_at) SELECT unnest($1::uuid[]), $2, now() - interval '1 hour'
           ON CONFLICT (customer_id) DO UPDATE SET due_at = excluded.due_at, claimed_until = NULL`,
          [[c.second.id, c.first.id], c.tenantId],
        );
        const claims = (await claimDue(onPg(pool), 1000, 60)).filter((k) => k.customerId === c.first.id || k.customerId === c.second.id);
        claims.sort((a) => (a.customerId === c.first.id ? -1 : 1));
        const run = await interleave(
          url,
          {
            worker: (gated) => processInboxBatch(gated, events),
            scorer: (gated) => createScorer(gated, customerRows.saveScores).recompute(claims),
          },
          schedule,
        );
        expect(errorCodes(run), explain(run)).toEqual([]);
        expect(await statuses(events)).toEqual(['processed', 'processed', 'processed']);
        const { rows } = await pool.query('SELECT customer_id FROM health_snapshots WHERE customer_id = ANY($1::uuid[])', [
          [c.first.id, c.second.id],
        ]);
        expect(rows).toHaveLength(2);
      }),
      { numRuns: RUNS },
    );
  });

  it('erasing a customer beside the scoring loop writing its batch', async () => {
    await fc.assert(
      fc.asyncProperty(schedules, async (schedule) => {
        const c = await twoCustomers();
        await pool.query(
          `INSERT INTO signals (id, tenant_id, customer_id, source, kind, occurred_at, value, attributes)
           SELECT gen_random_uuid(), $1, unnest($2::uuid[]), 'api', 'usage.event', now(), 1, '{}'`,
          [c.tenantId, [c.first.id, c.second.id]],
        );
        await pool.query(
          `INSERT INTO scoring_queue (customer_id, tenant_id, due_at) SELECT unnest($1::uuid[]), $2, now() - interval '1 hour'
           ON CONFLICT (customer_id) DO UPDATE SET due_at = excluded.due_at, claimed_until = NULL`,
          [[c.first.id, c.second.id], c.tenantId],
        );
        const claims = (await claimDue(onPg(pool), 1000, 60)).filter((k) => k.customerId === c.first.id || k.customerId === c.second.id);
        const run = await interleave(
          url,
          {
            scorer: (gated) => createScorer(gated, customerRows.saveScores).recompute(claims),
            api: (gated) =>
              createCustomerService({ pool: gated, prisma, emptyInboundBodies: emptyBodiesAbout }).erase(operator(c.tenantId), c.second.id),
          },
          schedule,
        );
        expect(errorCodes(run), explain(run)).toEqual([]);
        // The erased customer has nothing left; the other was scored.
        const left = await pool.query('SELECT 1 FROM health_snapshots WHERE customer_id = $1', [c.second.id]);
        expect(left.rowCount).toBe(0);
        const scored = await pool.query('SELECT 1 FROM health_snapshots WHERE customer_id = $1', [c.first.id]);
        expect(scored.rowCount).toBe(1);
      }),
      { numRuns: RUNS },
    );
  });

  it('the outbox relay beside erasing the customer its events are about', async () => {
    await fc.assert(
      fc.asyncProperty(schedules, async (schedule) => {
        const c = await twoCustomers();
        const endpoint = await prisma.webhookEndpoint.create({
          data: { tenantId: c.tenantId, url: 'https://receiver.example/hooks', events: ['alert.created'], secret: 'whsec_test' },
        });
        const alerts = [c.second.id, c.first.id, c.second.id].map((customerId) => ({
          tenantId: c.tenantId,
          type: 'alert.created' as const,
          payload: { ...EVENTS['alert.created'].example, tenant_id: c.tenantId, id: randomUUID(), customer_id: customerId },
          dedupKey: `alert:${randomUUID()}`,
        }));
        await inTransaction(pool, (sql) => enqueueEvents(sql, alerts));
        const run = await interleave(
          url,
          {
            relay: (gated) => relayOutbox(gated, createMemoryQueue()),
            api: (gated) =>
              createCustomerService({ pool: gated, prisma, emptyInboundBodies: emptyBodiesAbout }).erase(operator(c.tenantId), c.second.id),
          },
          schedule,
        );
        expect(errorCodes(run), explain(run)).toEqual([]);
        // Nothing is left to relay; of the three events only the other customer's remains, delivered once.
        const { rows } = await pool.query<{ customer: string; deliveries: number }>(
          `SELECT o.payload->>'customer_id' AS customer, (SELECT count(*)::int FROM webhook_deliveries d WHERE d.outbox_event_id = o.id) AS deliveries
           FROM outbox_events o WHERE o.tenant_id = $1 AND o.type = 'alert.created'`,
          [c.tenantId],
        );
        const relayedAgain = await relayOutbox(pool, createMemoryQueue());
        expect({ rows, relayedAgain }).toEqual({ rows: [{ customer: c.first.id, deliveries: 1 }], relayedAgain: 0 });
        const pending = await pool.query('SELECT 1 FROM outbox_pending WHERE tenant_id = $1', [c.tenantId]);
        expect(pending.rowCount).toBe(0);
        expect(await prisma.webhookDelivery.count({ where: { endpointId: endpoint.id } })).toBe(1);
      }),
      { numRuns: RUNS },
    );
  });

  it('a customer created with two Stripe accounts beside a batch of Stripe’s customer events for them, the other way round', async () => {
    await fc.assert(
      fc.asyncProperty(schedules, async (schedule) => {
        const { tenantId } = await tenantWithKey(prisma);
        const [a, b] = [`cus_a_${short()}`, `cus_b_${short()}`];
        const ids = await storeGroup(pool, tenantId, [
          p.stripeEvent('customer.created', p.stripeCustomer(b, `ap@${short()}.example`, 'Beta')),
          p.stripeEvent('customer.created', p.stripeCustomer(a, `ap@${short()}.example`, 'Alpha')),
        ]);
        const run = await interleave(
          url,
          {
            worker: (gated) =>
              processInboxBatch(
                gated,
                ids.map((id) => ({ id })),
              ),
            api: (gated) =>
              createCustomerService({ pool: gated, prisma, emptyInboundBodies: emptyBodiesAbout })
                .create(tenantId, {
                  name: 'Both',
                  identities: [
                    { provider: 'stripe', externalId: a },
                    { provider: 'stripe', externalId: b },
                  ],
                })
                .catch((e: { code?: string }) => (e.code === 'conflict' ? 'taken' : Promise.reject(e))),
          },
          schedule,
        );
        expect(errorCodes(run), explain(run)).toEqual([]);
        // Each account belongs to one customer, whichever claimed it first.
        const { rows } = await pool.query('SELECT external_id FROM customer_identities WHERE tenant_id = $1', [tenantId]);
        expect(rows.map((r) => r.external_id).sort()).toEqual([a, b].sort());
      }),
      { numRuns: RUNS },
    );
  });

  it('two batches each applying Stripe’s customer.created for accounts of one company make one customer', async () => {
    await fc.assert(
      fc.asyncProperty(schedules, async (schedule) => {
        const { tenantId } = await tenantWithKey(prisma);
        const domain = `${short()}.example`;
        const [first, second] = [
          await storeGroup(pool, tenantId, [
            p.stripeEvent('customer.created', p.stripeCustomer(`cus_${short()}`, `ap@${domain}`, 'Initech')),
          ]),
          await storeGroup(pool, tenantId, [
            p.stripeEvent('customer.created', p.stripeCustomer(`cus_${short()}`, `it@${domain}`, 'Initech')),
          ]),
        ];
        const run = await interleave(
          url,
          {
            one: (gated) =>
              processInboxBatch(
                gated,
                first.map((id) => ({ id })),
              ),
            other: (gated) =>
              processInboxBatch(
                gated,
                second.map((id) => ({ id })),
              ),
          },
          schedule,
        );
        expect(errorCodes(run), explain(run)).toEqual([]);
        const { rows } = await pool.query('SELECT id FROM customers WHERE tenant_id = $1', [tenantId]);
        expect(rows).toHaveLength(1);
      }),
      { numRuns: RUNS },
    );
  });

  it('the overdue pass beside erasing the customer of the invoices it marks', async () => {
    await fc.assert(
      fc.asyncProperty(schedules, async (schedule) => {
        const c = await twoCustomers();
        const due = new Date(Date.now() - 86_400_000);
        for (const who of [c.first, c.second])
          await pool.query(
            `INSERT INTO invoices (id, tenant_id, provider, external_id, account_id, customer_id, status, total_minor, currency, due_at, created_at, updated_at)
             VALUES (gen_random_uuid(), $1, 'stripe', $2, $3, $4, 'open', 1000, 'usd', $5, now(), now())`,
            [c.tenantId, `in_${short()}`, who.account, who.id, due],
          );
        const run = await interleave(
          url,
          {
            overdue: (gated) => markOverdueInvoices(gated),
            api: (gated) =>
              createCustomerService({ pool: gated, prisma, emptyInboundBodies: emptyBodiesAbout }).erase(operator(c.tenantId), c.second.id),
          },
          schedule,
        );
        expect(errorCodes(run), explain(run)).toEqual([]);
        // Both invoices are overdue (no longer anyone's, for the erased customer's), whichever went first.
        const { rows } = await pool.query<{ status: string; customer_id: string | null }>(
          `SELECT status::text AS status, customer_id FROM invoices WHERE tenant_id = $1 ORDER BY customer_id NULLS LAST`,
          [c.tenantId],
        );
        expect(rows).toEqual([
          { status: 'overdue', customer_id: c.first.id },
          { status: 'overdue', customer_id: null },
        ]);
      }),
      { numRuns: RUNS },
    );
  });

  it('a customer created with a Stripe account beside a batch applying that account’s invoices', async () => {
    await fc.assert(
      fc.asyncProperty(schedules, async (schedule) => {
        const { tenantId } = await tenantWithKey(prisma);
        const account = `cus_${short()}`;
        // Kept without a customer until the customer below claims the account.
        const ids = await storeGroup(pool, tenantId, [
          p.stripeEvent('invoice.paid', p.stripeInvoice(`in_${short()}`, account, 1200, { status: 'paid' })),
          p.stripeEvent('invoice.finalized', p.stripeInvoice(`in_${short()}`, account, 800, { status: 'open' })),
        ]);
        const events = ids.map((id) => ({ id }));
        let created = '';
        const run = await interleave(
          url,
          {
            worker: (gated) => processInboxBatch(gated, events),
            api: async (gated) => {
              created = await createCustomerService({ pool: gated, prisma, emptyInboundBodies: emptyBodiesAbout }).create(tenantId, {
                name: 'Initech',
                identities: [{ provider: 'stripe', externalId: account }],
              });
            },
          },
          schedule,
        );
        expect(errorCodes(run), explain(run)).toEqual([]);
        // Whichever went first, both invoices end with the customer, once the worker completes the attribution.
        await attributeRequested(pool);
        const { rows } = await pool.query<{ customer_id: string }>(
          `SELECT customer_id FROM invoices WHERE tenant_id = $1 AND account_id = $2`,
          [tenantId, account],
        );
        expect(rows.map((r) => r.customer_id)).toEqual([created, created]);
      }),
      { numRuns: RUNS },
    );
  });
});
