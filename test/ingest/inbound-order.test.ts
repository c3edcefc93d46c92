// Order per provider object (docs/inbound-webhooks.md, "Order"): what a provider sent in order, one event
// after the other's 202, is applied in that order by several consumers at once, over RabbitMQ and over the
// in-process queue, and every invoice is announced created and paid once each.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool } from '../../src/db/prisma.ts';
import { startInboxConsumer } from '../../src/ingest/processor.ts';
import { createMemoryQueue } from '../../src/queue/memory.ts';
import type { Consumer, Queue } from '../../src/queue/queue.ts';
import { createRabbitQueue } from '../../src/queue/rabbitmq.ts';
import { operator } from '../../src/services/audit.ts';
import { createInboundSecretStore } from '../../src/services/integrations.ts';
import { createTestApp, type TestApp, testSecretBox } from '../support/app.ts';
import { tenantWithKey } from '../support/factories.ts';
import * as p from '../support/providers.ts';

const AMQP_URL = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
/** Pairs per transport: invoices created → paid, subscriptions created → updated. */
const INVOICES = Number(process.env.ORDER_INVOICES ?? 1500);
const SUBSCRIPTIONS = Number(process.env.ORDER_SUBSCRIPTIONS ?? 300);
/** Objects posted at once, each pair one after the other. */
const LANES = 12;
const CONSUMERS = 3;
const log = pino({ level: 'silent' });

interface Outcome {
  accepted: number;
  /** Second events applied before the first: the first then found a later state and was ignored. */
  outOfOrder: { invoices: number; subscriptions: number };
  announced: Record<string, number>;
  /** Invoices announced other than once created, then once paid (by their sequence numbers). */
  invoicesNotAnnouncedOnce: number;
  /** Of the events this run accepted, those not applied or ignored. */
  left: number;
}

/**
 * Posts the pairs through the inbound route, signed by Stripe's own library, with CONSUMERS consumers of
 * the queue (each with its own pool and batches, as separate workers), and counts what was applied how.
 */
async function runPairs(t: TestApp, queue: Queue): Promise<Outcome> {
  const { tenantId } = await tenantWithKey(t.prisma);
  const { secret } = await createInboundSecretStore(t.prisma, testSecretBox(), { cacheMs: 0 }).put(
    { tenantId, provider: 'stripe' },
    operator(tenantId),
  );
  const pools: pg.Pool[] = [];
  const consumers: Consumer[] = [];
  for (let i = 0; i < CONSUMERS; i++) {
    const pool = createPool(t.config.database.url!, 6);
    pools.push(pool);
    consumers.push(startInboxConsumer(pool, queue, { prefetch: 16, log }));
  }
  // As a worker does: events stored while the broker did not confirm are published by the sweeper (other
  // test files stop and start the broker).
  const sweeping = setInterval(() => void t.inbox.sweep({ olderThanMs: 1000, staleAfterMs: 30_000 }).catch(() => {}), 1000);
  const run = randomUUID().slice(0, 8);
  let accepted = 0;
  const post = async (event: object) => {
    const { body, headers } = p.stripeSdkSigned(secret, JSON.stringify(event));
    const res = await t.app.inject({ method: 'POST', url: `/api/v1/webhooks/in/stripe/${tenantId}`, headers, payload: body });
    expect(res.statusCode, res.body).toBe(202);
    accepted++;
  };
  const invoicePairs: (() => Promise<void>)[] = [];
  const subscriptionPairs: (() => Promise<void>)[] = [];
  for (let i = 0; i < INVOICES; i++) {
    const id = `in_${run}_${i}`;
    const cus = `cus_${run}_${i % 40}`;
    invoicePairs.push(async () => {
      await post(p.stripeEvent('invoice.created', p.stripeInvoice(id, cus, 1000 + i)));
      await post(p.stripeEvent('invoice.paid', p.stripeInvoice(id, cus, 1000 + i, { status: 'paid' })));
    });
  }
  for (let i = 0; i < SUBSCRIPTIONS; i++) {
    const id = `sub_${run}_${i}`;
    const cus = `cus_${run}_${i % 40}`;
    const at = p.nowS();
    subscriptionPairs.push(async () => {
      await post(p.stripeEvent('customer.subscription.created', p.stripeSubscription(id, cus, at + 7 * 86_400), at));
      await post(p.stripeEvent('customer.subscription.updated', p.stripeSubscription(id, cus, at + 14 * 86_400), at + 1));
    });
  }
  // Invoices and subscriptions interleaved, LANES objects in flight at once.
  const every = Math.max(1, Math.floor(invoicePairs.length / Math.max(1, subscriptionPairs.length)));
  const pairs = invoicePairs.flatMap((pair, i) =>
    i % every === 0 && subscriptionPairs.length ? [pair, subscriptionPairs.pop()!] : [pair],
  );
  pairs.push(...subscriptionPairs);
  let next = 0;
  await Promise.all(
    Array.from({ length: LANES }, async () => {
      while (next < pairs.length) await pairs[next++]!();
    }),
  );
  try {
    await expect
      .poll(() => t.prisma.inboxEvent.count({ where: { tenantId, status: 'received' } }), { timeout: 120_000, interval: 250 })
      .toBe(0);
  } catch (err) {
    const { rows } = await t.pool.query(
      `SELECT event_type, attempts, published_at IS NOT NULL AS published, left(last_error, 200) AS last_error, count(*)::int AS n
       FROM inbox_events WHERE tenant_id = $1 AND status = 'received' GROUP BY 1, 2, 3, 4`,
      [tenantId],
    );
    throw new Error(`events left to apply: ${JSON.stringify(rows)}`, { cause: err });
  } finally {
    clearInterval(sweeping);
    await Promise.all(consumers.map((c) => c.close()));
    await Promise.all(pools.map((pool) => pool.end()));
  }
  const { rows: ignored } = await t.pool.query<{ event_type: string; n: number }>(
    `SELECT event_type, count(*)::int AS n FROM inbox_events WHERE tenant_id = $1 AND status = 'ignored' GROUP BY 1`,
    [tenantId],
  );
  const ignoredOf = (type: string) => ignored.find((r) => r.event_type === type)?.n ?? 0;
  const { rows: announced } = await t.pool.query<{ type: string; n: number }>(
    'SELECT type, count(*)::int AS n FROM outbox_events WHERE tenant_id = $1 GROUP BY 1',
    [tenantId],
  );
  // Once each, and numbered in that order among the invoice's events (1, then 2).
  const { rows: notOnce } = await t.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM invoices v WHERE v.tenant_id = $1 AND (
       SELECT array_agg(o.type ORDER BY o.sequence) FROM outbox_events o
       WHERE o.tenant_id = v.tenant_id AND o.sequence_subject = 'invoice:' || v.id::text
     ) IS DISTINCT FROM ARRAY['invoice.created', 'invoice.paid']`,
    [tenantId],
  );
  const { rows: left } = await t.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM inbox_events WHERE tenant_id = $1 AND status NOT IN ('processed', 'ignored')`,
    [tenantId],
  );
  return {
    accepted,
    outOfOrder: { invoices: ignoredOf('invoice.created'), subscriptions: ignoredOf('customer.subscription.created') },
    announced: Object.fromEntries(announced.map((r) => [r.type, r.n])),
    invoicesNotAnnouncedOnce: notOnce[0]!.n,
    left: left[0]!.n,
  };
}

const expectInOrder = (o: Outcome) => {
  expect(o.accepted).toBe(2 * (INVOICES + SUBSCRIPTIONS));
  expect(o.left).toBe(0);
  expect(o.outOfOrder).toEqual({ invoices: 0, subscriptions: 0 });
  expect(o.announced['invoice.created']).toBe(INVOICES);
  expect(o.announced['invoice.paid']).toBe(INVOICES);
  expect(o.invoicesNotAnnouncedOnce).toBe(0);
};

describe('events about one object, each posted after the previous one’s 202', () => {
  describe('over RabbitMQ, with several consumers', () => {
    const prefix = `chs-order-${randomUUID().slice(0, 8)}`;
    let t: TestApp;
    let queue: Queue;
    beforeAll(async () => {
      queue = createRabbitQueue(AMQP_URL, log, prefix);
      t = await createTestApp({ queue, env: { MAX_UNAUTHENTICATED_PER_ADDRESS: '100000', MAX_IN_FLIGHT_INBOUND: '1000' } });
    });
    afterAll(async () => {
      await t.close();
      await queue.close();
      for (const topic of ['inbound.events', 'outbound.deliveries'])
        for (const suffix of ['', '.retry', '.dead']) execFileSync('rabbitmqctl', ['-q', 'delete_queue', `${prefix}.${topic}${suffix}`]);
    });

    it(
      'are applied in the order they were accepted, and every invoice is announced created and paid once',
      { timeout: 300_000 },
      async () => {
        const outcome = await runPairs(t, queue);
        console.log('order over RabbitMQ:', JSON.stringify(outcome));
        expectInOrder(outcome);
      },
    );
  });

  describe('over the in-process queue, with several consumers', () => {
    let t: TestApp;
    let queue: Queue;
    beforeAll(async () => {
      queue = createMemoryQueue({ retryDelayMs: 200 });
      t = await createTestApp({ queue, env: { MAX_UNAUTHENTICATED_PER_ADDRESS: '100000', MAX_IN_FLIGHT_INBOUND: '1000' } });
    });
    afterAll(async () => {
      await t.close();
      await queue.close();
    });

    it(
      'are applied in the order they were accepted, and every invoice is announced created and paid once',
      { timeout: 300_000 },
      async () => {
        const outcome = await runPairs(t, queue);
        console.log('order over the in-process queue:', JSON.stringify(outcome));
        expectInOrder(outcome);
      },
    );
  });
});
