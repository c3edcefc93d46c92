import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { isPoolExhausted } from '../../src/errors.ts';
import { operator } from '../../src/services/audit.ts';
import { createInboundSecretStore } from '../../src/services/integrations.ts';
import { appWithWorker, testSecretBox } from '../support/app.ts';
import { tenantWithKey } from '../support/factories.ts';
import * as p from '../support/providers.ts';

// Concurrent inbound events are stored by one INSERT per group and published together; a 202 still
// means the event was committed, and an event that was not is never answered 202.

// A short pool wait, so a test that holds every connection is answered within its time.
const t = appWithWorker({ env: { DATABASE_POOL_WAIT_MS: '300' } });

async function tenantFor(provider: 'stripe' | 'github' | 'meta_ads') {
  const k = await tenantWithKey(t.prisma);
  const { secret } = await createInboundSecretStore(t.prisma, testSecretBox(), { cacheMs: 0 }).put(
    { tenantId: k.tenantId, provider },
    operator(k.tenantId),
  );
  return { tenantId: k.tenantId, secret };
}
const stripeTenant = () => tenantFor('stripe');

const invoiceEvent = (id: string, marker = 'ok') => ({
  ...p.stripeEvent('invoice.created', p.stripeInvoice(`in_${randomUUID().slice(0, 8)}`, `cus_${marker}`, 1000)),
  id,
});

const post = (tenantId: string, s: p.Signed, provider = 'stripe') =>
  t.app.inject({ method: 'POST', url: `/api/v1/webhooks/in/${provider}/${tenantId}`, headers: s.headers, payload: s.body });

const stored = (tenantId: string) => t.prisma.inboxEvent.findMany({ where: { tenantId }, select: { dedupKey: true, status: true } });

// A database fault, not a stand-in: PostgreSQL itself refuses the rows a trigger names.
async function refuseInserts(condition: string) {
  await t.pool.query(`CREATE OR REPLACE FUNCTION test_refuse_inbox() RETURNS trigger AS $$
    BEGIN IF ${condition} THEN RAISE EXCEPTION 'refused by the test'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql`);
  await t.pool.query('CREATE TRIGGER test_refuse_inbox BEFORE INSERT ON inbox_events FOR EACH ROW EXECUTE FUNCTION test_refuse_inbox()');
}
afterEach(async () => {
  await t.pool.query('DROP TRIGGER IF EXISTS test_refuse_inbox ON inbox_events');
});

describe('inbound events accepted in groups', () => {
  it('numbers a group’s events in the order they were accepted, not the order of their keys it stores them in', async () => {
    const { tenantId } = await stripeTenant();
    const run = randomUUID().slice(0, 6);
    // Accepted in this order, their keys in the reverse one.
    const keys = Array.from({ length: 12 }, (_, i) => `evt_${run}_${String.fromCharCode(122 - i)}`);
    await Promise.all(
      keys.map((key) =>
        t.inbox.accept({
          tenantId,
          provider: 'stripe',
          dedupKey: key,
          eventType: 'invoice.created',
          rawBody: Buffer.from(JSON.stringify(p.stripeEvent('invoice.created', p.stripeInvoice(`in_${key}`, 'cus_x', 100)))),
          orderKey: `in_${key}`,
        }),
      ),
    );
    const { rows } = await t.pool.query<{ dedup_key: string; received_at: Date }>(
      'SELECT dedup_key, received_at FROM inbox_events WHERE tenant_id = $1 ORDER BY seq',
      [tenantId],
    );
    // One group: one transaction.
    expect(new Set(rows.map((r) => r.received_at.getTime())).size).toBe(1);
    expect(rows.map((r) => r.dedup_key)).toEqual(keys);
  });

  it('stores each of a burst of concurrent events once, answers copies within the burst as duplicates, and applies them all', async () => {
    const { tenantId, secret } = await stripeTenant();
    const events = Array.from({ length: 20 }, (_, i) => invoiceEvent(`evt_burst_${i}_${randomUUID().slice(0, 6)}`));
    const copies = [events[0]!, events[0]!, events[0]!];
    const answers = await Promise.all([...events, ...copies].map((e) => post(tenantId, p.signStripe(secret, e))));
    const codes = answers.map((a) => a.statusCode);
    expect(codes.filter((c) => c === 202)).toHaveLength(20);
    expect(codes.filter((c) => c === 200)).toHaveLength(3);
    const ids = new Set(answers.filter((a) => a.statusCode === 202).map((a) => a.json().id));
    expect(ids.size).toBe(20);
    await expect.poll(async () => (await stored(tenantId)).filter((e) => e.status === 'received').length, { timeout: 10_000 }).toBe(0);
    expect((await stored(tenantId)).map((e) => e.dedupKey).sort()).toEqual(events.map((e) => e.id).sort());
  });

  it('fails only the request of an event the database refuses; the others of its group are stored', async () => {
    const { tenantId, secret } = await stripeTenant();
    await refuseInserts(`NEW.body LIKE '%cus_refused%'`);
    const events = Array.from({ length: 5 }, (_, i) =>
      invoiceEvent(`evt_group_${i}_${randomUUID().slice(0, 6)}`, i === 2 ? 'refused' : 'ok'),
    );
    const answers = await Promise.all(events.map((e) => post(tenantId, p.signStripe(secret, e))));
    expect(answers.map((a) => a.statusCode)).toEqual([202, 202, 503, 202, 202]);
    expect((await stored(tenantId)).map((e) => e.dedupKey).sort()).toEqual(
      events
        .filter((_, i) => i !== 2)
        .map((e) => e.id)
        .sort(),
    );
  });

  it('answers 503 to every request of a group the database refuses, stores none, and stores each once when the provider sends them again', async () => {
    const { tenantId, secret } = await stripeTenant();
    await refuseInserts('true');
    const events = Array.from({ length: 4 }, (_, i) => invoiceEvent(`evt_down_${i}_${randomUUID().slice(0, 6)}`));
    const refused = await Promise.all(events.map((e) => post(tenantId, p.signStripe(secret, e))));
    expect(refused.map((a) => a.statusCode)).toEqual([503, 503, 503, 503]);
    expect(await stored(tenantId)).toEqual([]);
    await t.pool.query('DROP TRIGGER test_refuse_inbox ON inbox_events');
    const retried = await Promise.all(events.map((e) => post(tenantId, p.signStripe(secret, e))));
    expect(retried.map((a) => a.statusCode)).toEqual([202, 202, 202, 202]);
    expect((await stored(tenantId)).map((e) => e.dedupKey).sort()).toEqual(events.map((e) => e.id).sort());
  });

  it('answers a body copy of a stored event as a duplicate and a new event arriving with it as accepted with its own id, though both carry one delivery id', async () => {
    const { tenantId, secret } = await tenantFor('github');
    // Several rounds, so the two land in one group at least once.
    for (let round = 0; round < 5; round++) {
      const seen = p.githubPush(`org-${randomUUID().slice(0, 8)}`, 1);
      expect((await post(tenantId, p.signGithub(secret, 'push', seen), 'github')).statusCode).toBe(202);
      const delivery = randomUUID();
      const copy = p.signGithub(secret, 'push', seen, delivery);
      const fresh = p.signGithub(secret, 'push', p.githubPush(`org-${randomUUID().slice(0, 8)}`, 2), delivery);
      const [a, b] = await Promise.all([post(tenantId, copy, 'github'), post(tenantId, fresh, 'github')]);
      expect([a.statusCode, b.statusCode]).toEqual([200, 202]);
      const [row] = (await t.pool.query<{ body: string }>('SELECT body FROM inbox_events WHERE id = $1', [b.json().id])).rows;
      expect(row?.body).toBe(fresh.body);
    }
  });

  it('fails every event of a group as a busy database (503 with Retry-After) when no connection is free', async () => {
    const { tenantId } = await stripeTenant();
    const held: pg.PoolClient[] = [];
    const errors: unknown[] = [];
    try {
      while (held.length < t.pool.options.max) held.push(await t.pool.connect());
      const accept = () =>
        t.inbox.accept({
          tenantId,
          provider: 'stripe',
          dedupKey: `evt_${randomUUID()}`,
          eventType: 'invoice.created',
          rawBody: Buffer.from('{}'),
        });
      await Promise.all([accept(), accept(), accept()].map((a) => a.catch((e: unknown) => errors.push(e))));
    } finally {
      for (const c of held) c.release();
    }
    // The error the problem handler answers with 503 and Retry-After: 1.
    expect(errors.map((e) => isPoolExhausted(e))).toEqual([true, true, true]);
    expect(await stored(tenantId)).toEqual([]);
  });
});

describe('inbound events waiting on another transaction', () => {
  // Another transaction has written the event and not yet committed (a group in flight, an erasure, a
  // purge): its copy must wait for the outcome, and must make no other event wait with it.
  async function whileUncommitted(tenantId: string, key: string, meanwhile: () => Promise<void>) {
    const c = await t.pool.connect();
    try {
      await c.query('BEGIN');
      await c.query(
        `INSERT INTO inbox_events (id, tenant_id, provider, dedup_key, event_type, body) VALUES (gen_random_uuid(), $1, 'stripe', $2, 'x', '{}')`,
        [tenantId, key],
      );
      await meanwhile();
    } finally {
      await c.query('ROLLBACK');
      c.release();
    }
  }
  const isStored = async (tenantId: string, key: string) =>
    (await t.pool.query('SELECT 1 FROM inbox_events WHERE tenant_id = $1 AND dedup_key = $2', [tenantId, key])).rowCount;

  it('stores another tenant’s event arriving with it', async () => {
    const a = await stripeTenant();
    const b = await stripeTenant();
    const key = `evt_${randomUUID()}`;
    const other = `evt_${randomUUID()}`;
    let answers: Promise<unknown> = Promise.resolve();
    await whileUncommitted(a.tenantId, key, async () => {
      answers = Promise.all([
        post(a.tenantId, p.signStripe(a.secret, invoiceEvent(key))),
        post(b.tenantId, p.signStripe(b.secret, invoiceEvent(other))),
      ]);
      await expect.poll(() => isStored(b.tenantId, other), { timeout: 5000 }).toBe(1);
    });
    await answers;
  });

  it('stores the other events of its own tenant’s group', async () => {
    const { tenantId, secret } = await stripeTenant();
    const key = `evt_${randomUUID()}`;
    const others = [`evt_${randomUUID()}`, `evt_${randomUUID()}`];
    let answers: Promise<{ statusCode: number }[]> = Promise.resolve([]);
    await whileUncommitted(tenantId, key, async () => {
      answers = Promise.all([key, ...others].map((k) => post(tenantId, p.signStripe(secret, invoiceEvent(k)))));
      for (const k of others) await expect.poll(() => isStored(tenantId, k), { timeout: 5000 }).toBe(1);
    });
    // The waiting copy is stored once the other transaction rolls back.
    expect((await answers).map((a) => a.statusCode)).toEqual([202, 202, 202]);
  });
});

describe('inbound events whose key no index can hold', () => {
  it('refuses an event whose id is too long to store as bad input naming the id, and stores the events arriving with it', async () => {
    const { tenantId, secret } = await stripeTenant();
    // Random, so PostgreSQL cannot compress it below what its index holds.
    const huge = `evt_${Array.from({ length: 120 }, () => randomUUID()).join('')}`;
    const events = [invoiceEvent(`evt_${randomUUID()}`), invoiceEvent(huge), invoiceEvent(`evt_${randomUUID()}`)];
    const answers = await Promise.all(events.map((e) => post(tenantId, p.signStripe(secret, e))));
    expect(answers.map((a) => a.statusCode)).toEqual([202, 400, 202]);
    expect(answers[1]!.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(answers[1]!.json().errors).toEqual([{ path: 'id', message: 'is longer than 1024 bytes' }]);
    expect((await stored(tenantId)).map((e) => e.dedupKey).sort()).toEqual([events[0]!.id, events[2]!.id].sort());
  });

  it('stores a Meta batch whose lead keys together are longer than a key may be, and answers its replay as a duplicate', async () => {
    const { tenantId, secret } = await tenantFor('meta_ads');
    const leads = Array.from({ length: 60 }, () => p.metaLead(`page-${randomUUID().slice(0, 8)}`, randomUUID()));
    const batch = { object: 'page', entry: leads.flatMap((l) => l.entry) };
    const first = await post(tenantId, p.signMeta(secret, batch), 'meta_ads');
    const replay = await post(tenantId, p.signMeta(secret, batch), 'meta_ads');
    expect([first.statusCode, replay.statusCode]).toEqual([202, 200]);
    expect(replay.json().id).toBe(first.json().id);
  });
});

describe('an event whose application was lost', () => {
  // The worker commits an event's application without waiting for the disk: a crash of PostgreSQL can
  // lose it after the message was acked, leaving the event 'received' with an old publish.
  it('is published again by the worker’s inbox sweep once its publish is stale, and applied', async () => {
    const { tenantId } = await stripeTenant();
    const event = invoiceEvent(`evt_lost_${randomUUID().slice(0, 6)}`);
    const [{ id }] = (
      await t.pool.query<{ id: string }>(
        `INSERT INTO inbox_events (id, tenant_id, provider, dedup_key, event_type, body, published_at)
         VALUES (gen_random_uuid(), $1, 'stripe', $2, 'invoice.created', $3, now() - interval '16 minutes') RETURNING id`,
        [tenantId, event.id, JSON.stringify(event)],
      )
    ).rows as [{ id: string }];
    // The worker's scheduled sweep (every 200 ms in tests) finds it; nothing else publishes it.
    await expect
      .poll(async () => (await t.pool.query('SELECT status::text FROM inbox_events WHERE id = $1', [id])).rows[0].status, {
        timeout: 10_000,
      })
      .toBe('processed');
  });
});
