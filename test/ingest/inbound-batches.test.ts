import { randomInt, randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { createInbox, type InboxMessage } from '../../src/ingest/inbox.ts';
import { ACCEPT_LOCK_SPACE } from '../../src/db/locks.ts';
import { eventsOf, processInboxBatch } from '../../src/ingest/processor.ts';
import { createMemoryQueue } from '../../src/queue/memory.ts';
import type { ConsumeOptions, Delivery, Queue, Topic } from '../../src/queue/queue.ts';
import { operator } from '../../src/services/audit.ts';
import { createInboundSecretStore } from '../../src/services/integrations.ts';
import { holdInvoice, lockWaiters, waitingLockTypes } from '../support/inbox.ts';
import { appWithWorker, testSecretBox } from '../support/app.ts';
import { tenantWithKey } from '../support/factories.ts';
import * as p from '../support/providers.ts';

// The worker applies the messages in flight in batches, one transaction each, and the accept path
// publishes a group's messages while its commit flushes. Here the queue is the in-process one, observed:
// which inbound events' messages were settled (acked) or failed, and a publish that can be held back.

const settled: { id: string; ok: boolean; attempt: number }[] = [];
let held: Promise<void> | undefined;
function observedQueue(): Queue {
  const inner = createMemoryQueue({ retryDelayMs: 20 });
  return {
    kind: inner.kind,
    connected: () => inner.connected(),
    depth: (topic) => inner.depth(topic),
    close: () => inner.close(),
    async publish(topic, body, o) {
      if (topic === 'inbound.events') await held;
      return inner.publish(topic, body, o);
    },
    consume<T>(topic: Topic, handler: (d: Delivery<T>) => Promise<void>, o: ConsumeOptions) {
      return inner.consume<T>(
        topic,
        async (d) => {
          const ids = topic === 'inbound.events' ? eventsOf(d.body as InboxMessage).map((e) => e.id) : [];
          try {
            await handler(d);
            for (const id of ids) settled.push({ id, ok: true, attempt: d.attempt });
          } catch (err) {
            for (const id of ids) settled.push({ id, ok: false, attempt: d.attempt });
            throw err;
          }
        },
        o,
      );
    },
  };
}

const t = appWithWorker({ queue: observedQueue() });

afterEach(async () => {
  held = undefined;
  await t.pool.query('DROP TRIGGER IF EXISTS test_poison_invoice ON invoices');
});

async function stripeTenant() {
  const k = await tenantWithKey(t.prisma);
  const { secret } = await createInboundSecretStore(t.prisma, testSecretBox(), { cacheMs: 0 }).put(
    { tenantId: k.tenantId, provider: 'stripe' },
    operator(k.tenantId),
  );
  return { tenantId: k.tenantId, secret };
}

const invoiceCreated = (invoiceId: string) => p.stripeEvent('invoice.created', p.stripeInvoice(invoiceId, `cus_${invoiceId}`, 1000));

/** An inbox row as the accept path stores it, inserted through `sql` (a pool, or a transaction's client). */
async function storeRow(sql: { query: (text: string, values: unknown[]) => Promise<unknown> }, tenantId: string, invoiceId: string) {
  const id = randomUUID();
  const event = { ...invoiceCreated(invoiceId), id: `evt_${randomUUID().slice(0, 12)}` };
  await sql.query(
    `INSERT INTO inbox_events (id, tenant_id, provider, dedup_key, event_type, body) VALUES ($1, $2, 'stripe', $3, 'invoice.created', $4)`,
    [id, tenantId, event.id, JSON.stringify(event)],
  );
  return id;
}

/** A transaction storing an event as an accept does, holding the accept's lock, left open for the test to end. */
async function openAccept(tenantId: string, invoiceId: string) {
  const lock = randomInt(2 ** 31);
  const client = await t.pool.connect();
  await client.query('BEGIN');
  await client.query('SELECT pg_advisory_xact_lock($1::int, $2::int)', [ACCEPT_LOCK_SPACE, lock]);
  const id = await storeRow(client, tenantId, `${invoiceId}_${randomUUID().slice(0, 8)}`);
  return { client, lock, id };
}

const statusOf = async (id: string) =>
  (
    await t.pool.query<{ status: string; attempts: number; last_error: string | null }>(
      'SELECT status::text AS status, attempts, last_error FROM inbox_events WHERE id = $1',
      [id],
    )
  ).rows[0];

describe('inbound events applied in batches', () => {
  it('applies the other events of a batch when one fails, and retries the failing one until it is parked', async () => {
    const { tenantId } = await stripeTenant();
    const poison = `in_poison_${randomUUID().slice(0, 8)}`;
    // A database fault, not a stand-in: PostgreSQL refuses the one invoice the bad event would create.
    await t.pool.query(`CREATE OR REPLACE FUNCTION test_poison_invoice() RETURNS trigger AS $$
      BEGIN IF NEW.external_id = '${poison}' THEN RAISE EXCEPTION 'poisoned by the test'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql`);
    await t.pool.query('CREATE TRIGGER test_poison_invoice BEFORE INSERT ON invoices FOR EACH ROW EXECUTE FUNCTION test_poison_invoice()');
    const good = [];
    for (let i = 0; i < 5; i++) good.push(await storeRow(t.pool, tenantId, `in_good_${i}_${randomUUID().slice(0, 8)}`));
    const bad = await storeRow(t.pool, tenantId, poison);
    // Published together, they reach the consumer together and go in one batch.
    await Promise.all([...good.slice(0, 2), bad, ...good.slice(2)].map((id) => t.queue.publish('inbound.events', { id })));

    await expect.poll(async () => (await statusOf(bad))?.status, { timeout: 10_000 }).toBe('failed');
    for (const id of good) expect((await statusOf(id))?.status).toBe('processed');
    expect(await statusOf(bad)).toMatchObject({ attempts: 5, last_error: expect.stringContaining('poisoned by the test') });
    // Each good event was acknowledged once, on its first delivery.
    for (const id of good) expect(settled.filter((s) => s.id === id)).toEqual([{ id, ok: true, attempt: 1 }]);
  });

  it('waits for the transaction storing an event whose message arrived first, then applies it', async () => {
    const { tenantId } = await stripeTenant();
    const { client, lock, id } = await openAccept(tenantId, 'in_early');
    try {
      await t.queue.publish('inbound.events', { id, lock });
      await expect.poll(() => waitersOn(lock), { timeout: 10_000 }).toBeGreaterThan(0);
      expect(settled.some((s) => s.id === id)).toBe(false);
      await client.query('COMMIT');
      await expect.poll(async () => (await statusOf(id))?.status, { timeout: 10_000 }).toBe('processed');
      expect(settled.filter((s) => s.id === id)).toEqual([{ id, ok: true, attempt: 1 }]);
    } finally {
      client.release();
    }
  });

  it('acknowledges, changing nothing, a message whose event was rolled back instead of stored', async () => {
    const { tenantId } = await stripeTenant();
    const { client, lock, id } = await openAccept(tenantId, 'in_rolled_back');
    try {
      await t.queue.publish('inbound.events', { id, lock });
      await expect.poll(() => waitersOn(lock), { timeout: 10_000 }).toBeGreaterThan(0);
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
    await expect.poll(() => settled.filter((s) => s.id === id), { timeout: 10_000 }).toEqual([{ id, ok: true, attempt: 1 }]);
    expect(await statusOf(id)).toBeUndefined();
    expect(await t.prisma.invoice.count({ where: { tenantId } })).toBe(0);
  });
});

describe('the messages a worker reads', () => {
  it('include the one-event form an API of the previous release publishes ({ id })', async () => {
    const { tenantId } = await stripeTenant();
    const id = await storeRow(t.pool, tenantId, `in_one_${randomUUID().slice(0, 8)}`);
    await t.queue.publish('inbound.events', { id });
    await expect.poll(async () => (await statusOf(id))?.status, { timeout: 10_000 }).toBe('processed');
    expect(await t.prisma.invoice.count({ where: { tenantId } })).toBe(1);
    expect(settled.filter((s) => s.id === id)).toEqual([{ id, ok: true, attempt: 1 }]);
  });
});

describe('the order events are applied in', () => {
  it("is the order a group's events were accepted in: invoice.created, then invoice.paid, both announced", async () => {
    const { tenantId } = await stripeTenant();
    const invoiceId = `in_order_${randomUUID().slice(0, 8)}`;
    const created = invoiceCreated(invoiceId);
    const paid = p.stripeEvent('invoice.paid', p.stripeInvoice(invoiceId, `cus_${invoiceId}`, 1000, { status: 'paid' }));
    // Stored as one group stores them: one transaction (so one received_at), and row ids that sort the
    // other way round from the order they were accepted in.
    const suffix = randomUUID().slice(1);
    const ids = [`f${suffix}`, `0${suffix}`];
    const client = await t.pool.connect();
    try {
      await client.query('BEGIN');
      for (const [i, event] of [created, paid].entries()) {
        await client.query(
          `INSERT INTO inbox_events (id, tenant_id, provider, dedup_key, event_type, body) VALUES ($1, $2, 'stripe', $3, $4, $5)`,
          [ids[i], tenantId, `evt_${randomUUID().slice(0, 12)}`, event.type, JSON.stringify(event)],
        );
      }
      await client.query('COMMIT');
    } finally {
      client.release();
    }
    await t.queue.publish('inbound.events', { ids });
    for (const id of ids) await expect.poll(async () => (await statusOf(id))?.status, { timeout: 10_000 }).toBe('processed');
    const announced = await t.prisma.outboxEvent.findMany({
      where: { tenantId, type: { startsWith: 'invoice.' } },
      select: { type: true },
    });
    expect(announced.map((e) => e.type).sort()).toEqual(['invoice.created', 'invoice.paid']);
  });

  it('is kept by the message of a group: its ids in the order the events were accepted', async () => {
    const { tenantId } = await stripeTenant();
    const published: InboxMessage[] = [];
    const recording: Queue = {
      ...t.queue,
      publish: async (topic, body, o) => (published.push(body as InboxMessage), t.queue.publish(topic, body, o)),
    };
    const inbox = createInbox(t.pool, recording, { warn: () => {} });
    // Accepted in one turn, so stored by one group; their dedup keys sort the other way round.
    const events = ['evt_b', 'evt_a'].map((key) => ({
      ...invoiceCreated(`in_${key}_${randomUUID().slice(0, 8)}`),
      id: `${key}_${randomUUID().slice(0, 8)}`,
    }));
    const stored = await Promise.all(
      events.map((e) =>
        inbox.accept({ tenantId, provider: 'stripe', dedupKey: e.id, eventType: e.type, rawBody: Buffer.from(JSON.stringify(e)) }),
      ),
    );
    expect(published.map((m) => ({ ids: m.ids, tenant: m.tenant }))).toEqual([{ ids: stored.map((r) => r.id), tenant: tenantId }]);
    await inbox.close();
  });
});

describe('batches in flight together', () => {
  /** The transaction that last changed each inbox row (it set the row's status). */
  const appliedBy = async (ids: string[]) =>
    new Set(
      (await t.pool.query<{ x: string }>('SELECT xmin::text AS x FROM inbox_events WHERE id = ANY($1::uuid[])', [ids])).rows.map(
        (r) => r.x,
      ),
    );

  it('hold one tenant’s events each: messages naming their tenants, arriving together, are applied apart', async () => {
    const [a, b] = [(await stripeTenant()).tenantId, (await stripeTenant()).tenantId];
    const [ofA, ofB] = [
      await storeRow(t.pool, a, `in_a_${randomUUID().slice(0, 8)}`),
      await storeRow(t.pool, b, `in_b_${randomUUID().slice(0, 8)}`),
    ];
    await Promise.all([
      t.queue.publish('inbound.events', { ids: [ofA], tenant: a }),
      t.queue.publish('inbound.events', { ids: [ofB], tenant: b }),
    ]);
    for (const id of [ofA, ofB]) await expect.poll(async () => (await statusOf(id))?.status, { timeout: 10_000 }).toBe('processed');
    expect((await appliedBy([ofA, ofB])).size).toBe(2);
    // Naming no tenant (as the sweeper publishes), the same two go in one batch.
    const [againA, againB] = [
      await storeRow(t.pool, a, `in_a_${randomUUID().slice(0, 8)}`),
      await storeRow(t.pool, b, `in_b_${randomUUID().slice(0, 8)}`),
    ];
    await Promise.all([t.queue.publish('inbound.events', { ids: [againA] }), t.queue.publish('inbound.events', { ids: [againB] })]);
    for (const id of [againA, againB]) await expect.poll(async () => (await statusOf(id))?.status, { timeout: 10_000 }).toBe('processed');
    expect((await appliedBy([againA, againB])).size).toBe(1);
  });

  it('find an invoice another transaction created while they waited for it, and change it', async () => {
    const { tenantId } = await stripeTenant();
    const x = `in_x_${randomUUID().slice(0, 8)}`;
    const paid = p.stripeEvent('invoice.paid', p.stripeInvoice(x, `cus_${x}`, 1000, { status: 'paid' }));
    const id = randomUUID();
    await t.pool.query(
      `INSERT INTO inbox_events (id, tenant_id, provider, dedup_key, event_type, body) VALUES ($1, $2, 'stripe', $3, 'invoice.paid', $4)`,
      [id, tenantId, `evt_${randomUUID().slice(0, 12)}`, JSON.stringify(paid)],
    );
    const release = await holdInvoice(t.pool, tenantId, x);
    const batch = processInboxBatch(t.pool, [{ id }]);
    await expect.poll(() => lockWaiters(t.pool), { timeout: 10_000 }).toBe(1);
    await release('commit');
    expect((await batch).get(id)).toBe('processed');
    const invoices = await t.prisma.invoice.findMany({ where: { tenantId, externalId: x } });
    expect(invoices.map((i) => i.status)).toEqual(['paid']);
  });

  /**
   * Two batches of one tenant's invoice events in opposite orders: A is about x, then y; B about y, w,
   * then x. A transaction elsewhere creating w holds it a moment, which sets the interleaving: `meet`
   * starts B, which waits for w, then A, then lets w go. Taking their rows as they went, B would then wait
   * for x (held by A) while A waited for y (held by B), a cycle PostgreSQL breaks by ending one of them.
   */
  async function opposedBatches(tenantId: string) {
    const [x, y, w] = ['x', 'y', 'w'].map((n) => `in_${n}_${randomUUID().slice(0, 8)}`) as [string, string, string];
    const a = [await storeRow(t.pool, tenantId, x), await storeRow(t.pool, tenantId, y)].map((id) => ({ id }));
    const b = [await storeRow(t.pool, tenantId, y), await storeRow(t.pool, tenantId, w), await storeRow(t.pool, tenantId, x)].map((id) => ({
      id,
    }));
    let waitedOn: string[] = [];
    return {
      events: [...a, ...b],
      waitedOn: () => waitedOn,
      async meet() {
        const release = await holdInvoice(t.pool, tenantId, w);
        const batchB = processInboxBatch(t.pool, b);
        await expect.poll(() => lockWaiters(t.pool), { timeout: 10_000 }).toBe(1);
        const batchA = processInboxBatch(t.pool, a);
        await expect.poll(() => lockWaiters(t.pool), { timeout: 10_000 }).toBe(2);
        waitedOn = await waitingLockTypes(t.pool);
        await release();
        return Promise.allSettled([batchA, batchB]);
      },
    };
  }

  it('take the same invoices in opposite orders one after the other, never in a cycle', async () => {
    const { tenantId } = await stripeTenant();
    const batches = await opposedBatches(tenantId);
    const outcomes = await batches.meet();
    expect(outcomes.filter((o) => o.status === 'rejected').map((o) => String((o as PromiseRejectedResult).reason))).toEqual([]);
    // B waited for the transaction creating w; A for the lock of an invoice B holds, before touching any row.
    expect(batches.waitedOn()).toEqual(['advisory', 'transactionid']);
    // Applied, by the batches themselves (a later invoice.created of the same invoice changes nothing).
    for (const { id } of batches.events) expect(['processed', 'ignored']).toContain((await statusOf(id))?.status);
  });
});

describe('a transaction storing events that does not end', () => {
  it("does not hold back other tenants' events while it stays open", async () => {
    const stalledTenant = (await stripeTenant()).tenantId;
    const otherTenant = (await stripeTenant()).tenantId;
    const good = [];
    for (let i = 0; i < 3; i++) good.push(await storeRow(t.pool, otherTenant, `in_other_${i}_${randomUUID().slice(0, 8)}`));
    const { client: stalled, lock, id: early } = await openAccept(stalledTenant, 'in_stalled');
    try {
      // Published together, they reach the consumer together.
      await Promise.all([
        t.queue.publish('inbound.events', { ids: [early], lock }),
        ...good.map((id) => t.queue.publish('inbound.events', { id })),
      ]);
      for (const id of good) await expect.poll(async () => (await statusOf(id))?.status, { timeout: 15_000 }).toBe('processed');
    } finally {
      await stalled.query('ROLLBACK').catch(() => {});
      stalled.release();
    }
  });

  it('has its message retried rather than acknowledged, and the event applied once it commits', async () => {
    const { tenantId } = await stripeTenant();
    const { client, lock, id } = await openAccept(tenantId, 'in_late');
    try {
      await t.queue.publish('inbound.events', { ids: [id], lock });
      await expect.poll(() => settled.filter((s) => s.id === id), { timeout: 15_000 }).toContainEqual({ id, ok: false, attempt: 1 });
      await client.query('COMMIT');
    } finally {
      client.release();
    }
    await expect.poll(async () => (await statusOf(id))?.status, { timeout: 15_000 }).toBe('processed');
    expect(settled.filter((s) => s.id === id && s.ok)).toHaveLength(1);
  });

  it('commits without its process: one frozen right after sending its group holds no lock a worker waits on', async () => {
    const { tenantId } = await stripeTenant();
    let stream: { pause(): void; resume(): void } | undefined;
    // The process "freezes" as soon as it has sent its statement: it reads nothing more until the test resumes it.
    const frozenPool = {
      query: t.pool.query.bind(t.pool),
      connect: async () => {
        const client = await t.pool.connect();
        const query = client.query.bind(client) as (...a: unknown[]) => unknown;
        return Object.assign(Object.create(client) as pg.PoolClient, {
          query: (...a: unknown[]) => {
            const sent = query(...a);
            stream = (client as unknown as { connection: { stream: { pause(): void; resume(): void } } }).connection.stream;
            stream.pause();
            return sent;
          },
          release: (e?: Error | boolean) => client.release(e),
        });
      },
    } as unknown as pg.Pool;
    const inbox = createInbox(frozenPool, t.queue, { warn: () => {} });
    const event = { ...invoiceCreated(`in_frozen_${randomUUID().slice(0, 8)}`), id: `evt_frozen_${randomUUID().slice(0, 8)}` };
    const accepted = inbox.accept({
      tenantId,
      provider: 'stripe',
      dedupKey: event.id,
      eventType: event.type,
      rawBody: Buffer.from(JSON.stringify(event)),
    });
    // Still frozen: the row is committed and the lock its message would name is free.
    await expect.poll(() => t.prisma.inboxEvent.count({ where: { tenantId, dedupKey: event.id } }), { timeout: 10_000 }).toBe(1);
    expect(await acceptLocksHeld()).toBe(0);
    stream!.resume();
    const { id } = await accepted;
    await expect.poll(async () => (await statusOf(id))?.status, { timeout: 15_000 }).toBe('processed');
  });
});

/** Accepting transactions holding their advisory lock. */
async function acceptLocksHeld() {
  const { rows } = await t.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND granted AND mode = 'ExclusiveLock' AND classid = $1 AND objsubid = 2
       AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    [ACCEPT_LOCK_SPACE],
  );
  return rows[0]!.n;
}

/** Sessions waiting on the advisory lock an accepting transaction holds. */
async function waitersOn(lock: number) {
  const { rows } = await t.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND classid = $1 AND objid = $2 AND objsubid = 2
       AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    [ACCEPT_LOCK_SPACE, lock],
  );
  return rows[0]!.n;
}

describe('the answer to an inbound event', () => {
  it('comes only once the event is committed and its publish is over', async () => {
    const { tenantId, secret } = await stripeTenant();
    let release = () => {};
    held = new Promise<void>((r) => (release = r));
    const event = { ...invoiceCreated(`in_held_${randomUUID().slice(0, 8)}`), id: `evt_held_${randomUUID().slice(0, 8)}` };
    const s = p.signStripe(secret, event);
    let answered = false;
    const answer = t.app
      .inject({ method: 'POST', url: `/api/v1/webhooks/in/stripe/${tenantId}`, headers: s.headers, payload: s.body })
      .finally(() => (answered = true));
    // Committed while the publish is held back: still no answer.
    await expect.poll(() => t.prisma.inboxEvent.count({ where: { tenantId, dedupKey: event.id } }), { timeout: 10_000 }).toBe(1);
    expect(answered).toBe(false);
    release();
    const res = await answer;
    expect(res.statusCode).toBe(202);
    await expect.poll(() => settled.filter((x) => x.id === res.json().id).map((x) => x.ok), { timeout: 10_000 }).toEqual([true]);
  });
});
