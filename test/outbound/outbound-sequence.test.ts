// Outbound events numbered per sequence subject, the numbers in every delivery, the catch-up read and
// ordered delivery (docs/receiving-webhooks.md, "Order and sequence numbers"), against the real database.
// Deliveries are attempted by hand here, one at a time, so each test decides what happens when.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { inTransaction, onPg, type Sql } from '../../src/db/sql.ts';
import { enqueueEvents, type OutboxInput } from '../../src/outbox/events/enqueue.ts';
import { EVENTS, sequenceSubjectOf } from '../../src/outbox/events/registry.ts';
import { relayOutbox } from '../../src/outbox/events/relay.ts';
import { queueDue } from '../../src/outbox/sender/delivery-store.ts';
import { MAX_ATTEMPTS } from '../../src/outbox/sender/retry-schedule.ts';
import { verifyWebhookSignature } from '../../src/outbox/sender/verify.ts';
import { runRetention } from '../../src/lifecycle/retention.ts';
import type { Queue } from '../../src/queue/queue.ts';
import type { TestApp } from '../support/app.ts';
import { apiAs, type Receiver, withOutboundApp } from '../support/outbound.ts';
import { tenantWithKey } from '../support/factories.ts';
import { type Hit, verifiesWithStripe } from '../support/receiver.ts';
import { emptyBodiesBefore } from '../../src/ingest/inbox.ts';

/** Deliveries the receiver answers 401 to (a failed attempt), by X-Webhook-Id. */
const refused = new Set<string>();
withOutboundApp(
  (app, receiver) => {
    t = app;
    rx = receiver;
  },
  { accept: (hit) => !refused.has(String(hit.headers['x-webhook-id'])) },
);
let t: TestApp;
let rx: Receiver;

const api = (key: string) => ({
  ...apiAs(() => t, key),
  gql: async (query: string, variables: object = {}) =>
    (await t.app.inject({ method: 'POST', url: '/graphql', headers: { 'x-api-key': key }, payload: { query, variables } })).json(),
});

/** An alert about the customer: numbered under `customer:<id>`. */
const alertOf = (tenantId: string, customerId: string, dedupKey = `alert:${randomUUID()}`): OutboxInput => ({
  tenantId,
  type: 'alert.created',
  payload: { ...EVENTS['alert.created'].example, tenant_id: tenantId, id: randomUUID(), customer_id: customerId },
  dedupKey,
});
/** An invoice event: numbered under `invoice:<id>`. */
const invoiceOf = (tenantId: string, invoiceId: string): OutboxInput => ({
  tenantId,
  type: 'invoice.created',
  payload: { ...EVENTS['invoice.created'].example, tenant_id: tenantId, invoice_id: invoiceId },
  dedupKey: `invoice:${randomUUID()}`,
});

const write = (events: OutboxInput[]) => inTransaction(t.pool, (sql) => enqueueEvents(sql, events));

/** The subject's numbers in the outbox, by dedup key, in number order. */
async function numbersOf(tenantId: string, subject: string): Promise<{ dedup_key: string; sequence: number }[]> {
  const { rows } = await t.pool.query(
    'SELECT dedup_key, sequence FROM outbox_events WHERE tenant_id = $1 AND sequence_subject = $2 ORDER BY sequence',
    [tenantId, subject],
  );
  return rows;
}
const counterOf = async (tenantId: string, subject: string) =>
  (await t.pool.query('SELECT last_sequence FROM outbox_sequences WHERE tenant_id = $1 AND subject = $2', [tenantId, subject])).rows[0]
    ?.last_sequence as number | undefined;

async function endpointFor(apiKey: string, opts: { events?: string[]; ordered?: boolean } = {}) {
  const res = await api(apiKey).post('/api/v1/webhook-endpoints', {
    url: rx.url,
    events: opts.events ?? ['alert.created', 'invoice.created'],
    ...(opts.ordered === undefined ? {} : { ordered: opts.ordered }),
  });
  expect(res.statusCode).toBe(201);
  return res.json() as { id: string; secret: string; ordered: boolean };
}

/** The delivery of each event (by dedup key) to the endpoint, in the order the keys are given. */
async function deliveriesOf(endpointId: string, dedupKeys: string[]): Promise<string[]> {
  const { rows } = await t.pool.query<{ id: string; dedup_key: string }>(
    `SELECT d.id, o.dedup_key FROM webhook_deliveries d JOIN outbox_events o ON o.id = d.outbox_event_id WHERE d.endpoint_id = $1`,
    [endpointId],
  );
  const byKey = new Map(rows.map((r) => [r.dedup_key, r.id]));
  return dedupKeys.map((k) => byKey.get(k)!);
}
const hitsOf = (deliveryId: string): Hit[] => rx.hits.filter((h) => h.headers['x-webhook-id'] === deliveryId);
const attempt = (id: string) => t.outbound.deliverer.attempt(id).then((o) => o.status);
/** Makes a delivery waiting for its retry due now, as time passing would. */
const dueNow = (id: string) => t.pool.query('UPDATE webhook_deliveries SET next_attempt_at = now() WHERE id = $1', [id]);

describe('numbering outbound events per subject', () => {
  it('numbers each customer’s and each invoice’s events 1, 2, 3 apart from each other', async () => {
    const { tenantId } = await tenantWithKey(t.prisma);
    const [a, b, inv] = [randomUUID(), randomUUID(), randomUUID()];
    await write([alertOf(tenantId, a, 'a1'), invoiceOf(tenantId, inv), alertOf(tenantId, b, 'b1')]);
    await write([alertOf(tenantId, a, 'a2'), alertOf(tenantId, a, 'a3')]);
    await write([invoiceOf(tenantId, inv)]);
    expect(await numbersOf(tenantId, `customer:${a}`)).toEqual([
      { dedup_key: 'a1', sequence: 1 },
      { dedup_key: 'a2', sequence: 2 },
      { dedup_key: 'a3', sequence: 3 },
    ]);
    expect((await numbersOf(tenantId, `customer:${b}`)).map((r) => r.sequence)).toEqual([1]);
    expect((await numbersOf(tenantId, `invoice:${inv}`)).map((r) => r.sequence)).toEqual([1, 2]);
    expect(await counterOf(tenantId, `customer:${a}`)).toBe(3);
  });

  it('numbers another tenant’s events of the same customer id on their own', async () => {
    const [one, two] = [await tenantWithKey(t.prisma), await tenantWithKey(t.prisma)];
    const c = randomUUID();
    await write([alertOf(one.tenantId, c), alertOf(one.tenantId, c)]);
    await write([alertOf(two.tenantId, c)]);
    expect((await numbersOf(one.tenantId, `customer:${c}`)).map((r) => r.sequence)).toEqual([1, 2]);
    expect((await numbersOf(two.tenantId, `customer:${c}`)).map((r) => r.sequence)).toEqual([1]);
  });

  it('numbers without a gap or a repeat when several transactions write one customer’s events at once, each transaction’s in its order', async () => {
    const { tenantId } = await tenantWithKey(t.prisma);
    const c = randomUUID();
    const writers = 6;
    const pause = (sql: Sql) => sql.query('SELECT 1 AS slept FROM (SELECT pg_sleep($1::float8)) AS s', [Math.random() * 0.03]);
    await Promise.all(
      Array.from({ length: writers }, (_, w) =>
        inTransaction(t.pool, async (sql) => {
          await pause(sql);
          await enqueueEvents(
            sql,
            [0, 1, 2].map((i) => alertOf(tenantId, c, `w${w}:${i}`)),
          );
          // Holding the counter a moment longer, so the other writers queue on it.
          await pause(sql);
        }),
      ),
    );
    const numbers = await numbersOf(tenantId, `customer:${c}`);
    expect(numbers.map((r) => r.sequence)).toEqual(Array.from({ length: writers * 3 }, (_, i) => i + 1));
    for (let w = 0; w < writers; w++) {
      const mine = numbers.filter((r) => r.dedup_key.startsWith(`w${w}:`));
      expect(mine.map((r) => r.dedup_key)).toEqual([`w${w}:0`, `w${w}:1`, `w${w}:2`]);
      expect(mine[2]!.sequence - mine[0]!.sequence).toBe(2);
    }
  });

  it('gives a rolled-back transaction’s number back to the transaction that waited for it', async () => {
    const { tenantId } = await tenantWithKey(t.prisma);
    const c = randomUUID();
    const first = await t.pool.connect();
    try {
      await first.query('BEGIN');
      await enqueueEvents(onPg(first), [alertOf(tenantId, c, 'rolled-back')]);
      const second = write([alertOf(tenantId, c, 'committed')]);
      // The second waits on the customer's counter row, which the first holds.
      await expect
        .poll(
          async () =>
            (
              await t.pool.query(
                `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
              )
            ).rows[0].n,
        )
        .toBeGreaterThan(0);
      await first.query('ROLLBACK');
      await second;
    } finally {
      first.release();
    }
    expect(await numbersOf(tenantId, `customer:${c}`)).toEqual([{ dedup_key: 'committed', sequence: 1 }]);
    await write([alertOf(tenantId, c, 'next')]);
    expect((await numbersOf(tenantId, `customer:${c}`)).map((r) => r.sequence)).toEqual([1, 2]);
  });

  it('takes no number for a duplicate, alone or beside a new event', async () => {
    const { tenantId } = await tenantWithKey(t.prisma);
    const c = randomUUID();
    await write([alertOf(tenantId, c, 'once')]);
    await write([alertOf(tenantId, c, 'once')]);
    await write([alertOf(tenantId, c, 'once'), alertOf(tenantId, c, 'new')]);
    expect(await numbersOf(tenantId, `customer:${c}`)).toEqual([
      { dedup_key: 'once', sequence: 1 },
      { dedup_key: 'new', sequence: 2 },
    ]);
    expect(await counterOf(tenantId, `customer:${c}`)).toBe(2);
    // The events still to relay carry the same numbers, which ordered delivery goes by.
    const { rows } = await t.pool.query(
      `SELECT o.sequence AS event, p.sequence AS pending FROM outbox_events o JOIN outbox_pending p ON p.event_id = o.id
       WHERE o.tenant_id = $1 AND o.sequence_subject = $2 ORDER BY o.sequence`,
      [tenantId, `customer:${c}`],
    );
    expect(rows).toEqual([
      { event: 1, pending: 1 },
      { event: 2, pending: 2 },
    ]);
  });

  it('numbers a payment under its invoice, else its customer, else the payment, and a trial extension under its customer, else its subscription', () => {
    const [inv, c, sub] = [randomUUID(), randomUUID(), randomUUID()];
    const payment = { ...EVENTS['payment.refunded'].example, payment_id: 'ch_3P/x y' };
    expect(sequenceSubjectOf('payment.refunded', { ...payment, invoice_id: inv, customer_id: c })).toBe(`invoice:${inv}`);
    expect(sequenceSubjectOf('payment.failed', { ...payment, invoice_id: null, customer_id: c })).toBe(`customer:${c}`);
    expect(sequenceSubjectOf('payment.refunded', { ...payment, invoice_id: null, customer_id: null })).toBe('payment:ch_3P%2Fx%20y');
    const trial = EVENTS['subscription.trial_extended'].example;
    expect(sequenceSubjectOf('subscription.trial_extended', { ...trial, customer_id: c })).toBe(`customer:${c}`);
    expect(sequenceSubjectOf('subscription.trial_extended', { ...trial, subscription_id: sub, customer_id: null })).toBe(
      `subscription:${sub}`,
    );
    const prediction = EVENTS['churn_prediction.updated'].example;
    expect(sequenceSubjectOf('churn_prediction.updated', { ...prediction, customer_id: c })).toBe(`customer:${c}`);
    expect(sequenceSubjectOf('customer.deleted', { tenant_id: randomUUID(), id: c, external_id: null })).toBe(`customer:${c}`);
  });

  it('numbers an erased customer’s customer.deleted after its last event, then forgets its counter', async () => {
    const { tenantId, apiKey } = await tenantWithKey(t.prisma);
    const created = await api(apiKey).post('/api/v1/customers', { name: 'Erased Co' });
    const c = created.json().id as string;
    await write([alertOf(tenantId, c), alertOf(tenantId, c)]);
    expect(await counterOf(tenantId, `customer:${c}`)).toBe(3);
    expect((await api(apiKey).del(`/api/v1/customers/${c}`)).statusCode).toBe(200);
    const { rows } = await t.pool.query('SELECT type, sequence FROM outbox_events WHERE tenant_id = $1 AND sequence_subject = $2', [
      tenantId,
      `customer:${c}`,
    ]);
    expect(rows).toEqual([{ type: 'customer.deleted', sequence: 4 }]);
    expect(await counterOf(tenantId, `customer:${c}`)).toBeUndefined();
  });

  it('keeps counting after retention removed every event of the subject', async () => {
    const { tenantId } = await tenantWithKey(t.prisma);
    const c = randomUUID();
    await write([alertOf(tenantId, c), alertOf(tenantId, c)]);
    await agedPastRetention(tenantId);
    await runRetention(t.pool, { batchSize: 100, maxBatches: 10, emptyInboundBodies: emptyBodiesBefore });
    expect(await numbersOf(tenantId, `customer:${c}`)).toEqual([]);
    await write([alertOf(tenantId, c, 'after')]);
    expect(await numbersOf(tenantId, `customer:${c}`)).toEqual([{ dedup_key: 'after', sequence: 3 }]);
  });
});

/** The tenant's events written (and relayed) two days ago, past a one-day retention of its deliveries. */
async function agedPastRetention(tenantId: string) {
  await t.pool.query('UPDATE tenants SET delivery_retention_days = 1 WHERE id = $1', [tenantId]);
  await relayOutbox(t.pool, t.queue);
  await t.pool.query(`UPDATE outbox_events SET created_at = now() - interval '2 days' WHERE tenant_id = $1`, [tenantId]);
}

describe('the number in every delivery', () => {
  it('sends X-Webhook-Sequence and X-Webhook-Sequence-Subject, the same on a retry, under a signature that still verifies', async () => {
    const { tenantId, apiKey } = await tenantWithKey(t.prisma);
    const endpoint = await endpointFor(apiKey);
    const c = randomUUID();
    await write([alertOf(tenantId, c, 'h1'), alertOf(tenantId, c, 'h2')]);
    await relayOutbox(t.pool, t.queue);
    const [d1, d2] = await deliveriesOf(endpoint.id, ['h1', 'h2']);
    refused.add(d2!);
    expect([await attempt(d1!), await attempt(d2!)]).toEqual(['succeeded', 'retrying']);
    refused.delete(d2!);
    await dueNow(d2!);
    expect(await attempt(d2!)).toBe('succeeded');

    const [h1] = hitsOf(d1!);
    expect(h1!.headers).toMatchObject({ 'x-webhook-sequence': '1', 'x-webhook-sequence-subject': `customer:${c}` });
    const retried = hitsOf(d2!);
    expect(retried).toHaveLength(2);
    for (const h of retried) {
      expect(h.headers).toMatchObject({ 'x-webhook-sequence': '2', 'x-webhook-sequence-subject': `customer:${c}` });
    }
    for (const h of [h1!, ...retried]) {
      expect(verifyWebhookSignature({ secret: endpoint.secret, headers: h.headers, rawBody: h.raw })).toBe(true);
      expect(verifiesWithStripe(endpoint.secret, h)).toBe(true);
    }
  });

  it('shows the number and subject in the delivery log over REST and GraphQL, and in the envelope as CloudEvents sequence attributes', async () => {
    const { tenantId, apiKey } = await tenantWithKey(t.prisma);
    const endpoint = await endpointFor(apiKey);
    const inv = randomUUID();
    await write([invoiceOf(tenantId, inv)]);
    await write([invoiceOf(tenantId, inv)]);
    await relayOutbox(t.pool, t.queue);

    // Both were relayed in one statement, at one time: the log's order between them is the ids'.
    const log = (await api(apiKey).get(`/api/v1/webhook-endpoints/${endpoint.id}/deliveries`)).json();
    const rest = (log.data as { sequence: number; sequence_subject: string }[]).map((d) => [d.sequence, d.sequence_subject]);
    expect(rest.sort()).toEqual([
      [1, `invoice:${inv}`],
      [2, `invoice:${inv}`],
    ]);
    const gql = await api(apiKey).gql(
      'query($e: UUID!) { webhookDeliveries(endpointId: $e) { nodes { sequence sequenceSubject envelope } } }',
      {
        e: endpoint.id,
      },
    );
    const nodes = (
      gql.data.webhookDeliveries.nodes as { sequence: number; sequenceSubject: string; envelope: Record<string, unknown> }[]
    ).sort((x, y) => x.sequence - y.sequence);
    expect(nodes.map((n) => [n.sequence, n.sequenceSubject])).toEqual([
      [1, `invoice:${inv}`],
      [2, `invoice:${inv}`],
    ]);
    expect(nodes[0]!.envelope).toMatchObject({ type: 'invoice.created', sequence: '0000000001', sequencesubject: `invoice:${inv}` });
    expect(nodes[1]!.envelope).toMatchObject({ sequence: '0000000002', sequencesubject: `invoice:${inv}` });
  });

  it('sends no sequence with a Test delivery, which no event numbers', async () => {
    const { apiKey } = await tenantWithKey(t.prisma);
    const endpoint = await endpointFor(apiKey);
    const res = (await api(apiKey).post(`/api/v1/webhook-endpoints/${endpoint.id}/test`, { event: 'alert.created' })).json();
    expect(res.success).toBe(true);
    const [hit] = hitsOf(res.delivery_id);
    expect(hit!.headers['x-webhook-sequence']).toBeUndefined();
    expect(hit!.headers['x-webhook-sequence-subject']).toBeUndefined();
    const log = (await api(apiKey).get(`/api/v1/webhook-endpoints/${endpoint.id}/deliveries`)).json();
    expect(log.data[0]).toMatchObject({ id: res.delivery_id, test: true, sequence: null, sequence_subject: null });
  });
});

describe('catching up on a subject', () => {
  /** Five events of customer c and one of another customer, for a new tenant. */
  async function fiveEvents() {
    const tenant = await tenantWithKey(t.prisma);
    const c = randomUUID();
    const events = Array.from({ length: 5 }, (_, i) => alertOf(tenant.tenantId, c, `c${i + 1}`));
    await write(events.slice(0, 3));
    await write([alertOf(tenant.tenantId, randomUUID()), ...events.slice(3)]);
    return { ...tenant, c, events };
  }

  it('returns the events after a number in number order, page by page, with the payloads deliveries send', async () => {
    const { apiKey, c, events } = await fiveEvents();
    const url = `/api/v1/webhook-events?subject=customer:${c}&after_sequence=1&limit=2`;
    const first = await api(apiKey).get(url);
    expect(first.statusCode).toBe(200);
    const one = first.json();
    expect(one.data.map((e: { sequence: number }) => e.sequence)).toEqual([2, 3]);
    expect(one).toMatchObject({ has_more: true, first_available_sequence: 1, last_sequence: 5 });
    expect(one.data[0]).toMatchObject({ type: 'alert.created', sequence_subject: `customer:${c}`, payload: events[1]!.payload });
    const two = (await api(apiKey).get(`${url}&cursor=${one.next_cursor}`)).json();
    expect(two.data.map((e: { sequence: number }) => e.sequence)).toEqual([4, 5]);
    expect(two).toMatchObject({ has_more: false, next_cursor: null });
    // From the start by default, and an upper-case UUID names the same subject.
    const all = (await api(apiKey).get(`/api/v1/webhook-events?subject=customer:${c.toUpperCase()}`)).json();
    expect(all.data.map((e: { sequence: number }) => e.sequence)).toEqual([1, 2, 3, 4, 5]);
  });

  it('returns the same over GraphQL', async () => {
    const { apiKey, c } = await fiveEvents();
    const query = `query($s: String!, $a: Int, $after: String) {
      webhookEvents(subject: $s, afterSequence: $a, first: 2, after: $after) {
        nodes { sequence sequenceSubject type } pageInfo { hasNextPage endCursor } totalCount firstAvailableSequence lastSequence } }`;
    const one = (await api(apiKey).gql(query, { s: `customer:${c}`, a: 1 })).data.webhookEvents;
    expect(one).toMatchObject({ totalCount: 4, firstAvailableSequence: 1, lastSequence: 5, pageInfo: { hasNextPage: true } });
    expect(one.nodes).toEqual([
      { sequence: 2, sequenceSubject: `customer:${c}`, type: 'alert.created' },
      { sequence: 3, sequenceSubject: `customer:${c}`, type: 'alert.created' },
    ]);
    const two = (await api(apiKey).gql(query, { s: `customer:${c}`, a: 1, after: one.pageInfo.endCursor })).data.webhookEvents;
    expect(two.nodes.map((n: { sequence: number }) => n.sequence)).toEqual([4, 5]);
    expect(two.pageInfo).toEqual({ hasNextPage: false, endCursor: null });
  });

  it.each([
    ['a subject of an unknown kind', `subject=person:${randomUUID()}`, 'subject'],
    ['a subject whose id is not a UUID', 'subject=customer:42', 'subject'],
    ['a negative number', `subject=customer:${randomUUID()}&after_sequence=-1`, 'after_sequence'],
    ['a number that is not whole', `subject=customer:${randomUUID()}&after_sequence=1.5`, 'after_sequence'],
  ])('answers 400 problem+json to %s over REST', async (_name, query, path) => {
    const { apiKey } = await tenantWithKey(t.prisma);
    const res = await api(apiKey).get(`/api/v1/webhook-events?${query}`);
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({ code: 'validation_failed', errors: [expect.objectContaining({ path })] });
  });

  it.each([
    ['a subject of an unknown kind', { s: `person:${randomUUID()}` }, 'subject'],
    ['a payment id that is not percent-encoded as we send it', { s: 'payment:ch_1%2f' }, 'subject'],
    ['a negative number', { s: `customer:${randomUUID()}`, a: -1 }, 'afterSequence'],
  ])('answers validation_failed to %s over GraphQL', async (_name, variables, path) => {
    const { apiKey } = await tenantWithKey(t.prisma);
    const body = await api(apiKey).gql(
      'query($s: String!, $a: Int) { webhookEvents(subject: $s, afterSequence: $a) { lastSequence } }',
      variables,
    );
    expect(body.errors[0].extensions).toMatchObject({ code: 'validation_failed', status: 400 });
    expect(body.errors[0].extensions.errors).toEqual([expect.objectContaining({ path })]);
  });

  it('reads only the caller’s tenant’s events', async () => {
    const { c } = await fiveEvents();
    const other = await tenantWithKey(t.prisma);
    const res = (await api(other.apiKey).get(`/api/v1/webhook-events?subject=customer:${c}`)).json();
    expect(res).toEqual({ data: [], has_more: false, next_cursor: null, first_available_sequence: null, last_sequence: null });
  });

  it('starts at the oldest kept event once retention removed older ones, and says which that is', async () => {
    const { tenantId, apiKey, c } = await fiveEvents();
    await agedPastRetention(tenantId);
    await runRetention(t.pool, { batchSize: 100, maxBatches: 10, emptyInboundBodies: emptyBodiesBefore });
    await write([alertOf(tenantId, c, 'c6')]);
    const res = (await api(apiKey).get(`/api/v1/webhook-events?subject=customer:${c}&after_sequence=2`)).json();
    expect(res.data.map((e: { sequence: number }) => e.sequence)).toEqual([6]);
    expect(res).toMatchObject({ first_available_sequence: 6, last_sequence: 6 });
  });
});

describe('ordered delivery', () => {
  it('is off unless asked for, and is set on creation and by an update, over REST and GraphQL', async () => {
    const { apiKey } = await tenantWithKey(t.prisma);
    expect((await endpointFor(apiKey)).ordered).toBe(false);
    const ordered = await endpointFor(apiKey, { ordered: true });
    expect(ordered.ordered).toBe(true);
    expect((await api(apiKey).patch(`/api/v1/webhook-endpoints/${ordered.id}`, { ordered: false })).json().ordered).toBe(false);
    expect((await api(apiKey).patch(`/api/v1/webhook-endpoints/${ordered.id}`, { ordered: 'yes' })).statusCode).toBe(400);
    const created = await api(apiKey).gql(
      'mutation($i: WebhookEndpointInput!) { createWebhookEndpoint(input: $i) { endpoint { id ordered } } }',
      { i: { url: rx.url, events: ['alert.created'], ordered: true } },
    );
    const id = created.data.createWebhookEndpoint.endpoint.id as string;
    expect(created.data.createWebhookEndpoint.endpoint.ordered).toBe(true);
    const updated = await api(apiKey).gql(
      'mutation($id: UUID!) { updateWebhookEndpoint(id: $id, input: { ordered: false }) { ordered } }',
      {
        id,
      },
    );
    expect(updated.data.updateWebhookEndpoint.ordered).toBe(false);
    expect((await api(apiKey).get(`/api/v1/webhook-endpoints/${id}`)).json().ordered).toBe(false);
  });

  /** An endpoint, and three events relayed to it: customer a's first and second, customer b's first. */
  async function threeEvents(ordered: boolean) {
    const { tenantId, apiKey } = await tenantWithKey(t.prisma);
    const endpoint = await endpointFor(apiKey, { ordered, events: ['alert.created'] });
    const [a, b] = [randomUUID(), randomUUID()];
    await write([alertOf(tenantId, a, 'a1'), alertOf(tenantId, a, 'a2'), alertOf(tenantId, b, 'b1')]);
    await relayOutbox(t.pool, t.queue);
    const [a1, a2, b1] = await deliveriesOf(endpoint.id, ['a1', 'a2', 'b1']);
    return { tenantId, endpoint, a1: a1!, a2: a2!, b1: b1! };
  }
  /** What the due-delivery pass queues now. */
  async function queuedNow(): Promise<string[]> {
    const published: string[] = [];
    const watched: Queue = { ...t.queue, publish: async (_topic, body) => void published.push((body as { id: string }).id) };
    await t.pool.query(`UPDATE webhook_deliveries SET queued_at = NULL WHERE status = 'pending'`);
    await queueDue(t.pool, watched);
    return published;
  }

  it('holds a subject’s later event behind its failing earlier one until that succeeds, while another subject goes out', async () => {
    const { a1, a2, b1 } = await threeEvents(true);
    refused.add(a1);
    expect(await attempt(a1)).toBe('retrying');
    expect(await attempt(a2)).toBe('skipped');
    expect(await attempt(b1)).toBe('succeeded');
    // The due-delivery pass does not queue it either, and it is not leased.
    expect(await queuedNow()).not.toContain(a2);
    expect((await t.prisma.webhookDelivery.findUniqueOrThrow({ where: { id: a2 } })).lockedUntil).toBeNull();
    // A retry that fails again keeps it waiting.
    await dueNow(a1);
    expect(await attempt(a1)).toBe('retrying');
    expect(await attempt(a2)).toBe('skipped');
    refused.delete(a1);
    await dueNow(a1);
    expect(await attempt(a1)).toBe('succeeded');
    expect(await queuedNow()).toContain(a2);
    expect(await attempt(a2)).toBe('succeeded');
    expect(hitsOf(a2)).toHaveLength(1);
    expect(hitsOf(a2)[0]!.at).toBeGreaterThanOrEqual(hitsOf(a1).at(-1)!.at);
  });

  it('releases the later event once the earlier one is given up', async () => {
    const { a1, a2 } = await threeEvents(true);
    refused.add(a1);
    for (let i = 0; i < MAX_ATTEMPTS; i++) {
      await dueNow(a1);
      expect(await attempt(a2)).toBe('skipped');
      await attempt(a1);
    }
    expect((await t.prisma.webhookDelivery.findUniqueOrThrow({ where: { id: a1 } })).status).toBe('failed');
    expect(await attempt(a2)).toBe('succeeded');
    expect(hitsOf(a2)[0]!.headers['x-webhook-sequence']).toBe('2');
  });

  it('holds nothing for an endpoint that did not ask for order', async () => {
    const { a1, a2 } = await threeEvents(false);
    refused.add(a1);
    expect(await attempt(a1)).toBe('retrying');
    expect(await attempt(a2)).toBe('succeeded');
  });

  it('does not send an event before an earlier event of its subject is relayed, which another relay may still be doing', async () => {
    const { tenantId, apiKey } = await tenantWithKey(t.prisma);
    const endpoint = await endpointFor(apiKey, { ordered: true, events: ['alert.created'] });
    const c = randomUUID();
    await write([alertOf(tenantId, c, 'first')]);
    await write([alertOf(tenantId, c, 'second')]);
    // Another relay holds the first event, about to fan it out: this one takes the second alone.
    const other = await t.pool.connect();
    try {
      await other.query('BEGIN');
      await other.query(`SELECT 1 FROM outbox_events WHERE tenant_id = $1 AND dedup_key = 'first' FOR UPDATE`, [tenantId]);
      await relayOutbox(t.pool, t.queue);
      const [second] = await deliveriesOf(endpoint.id, ['second']);
      expect(second).toBeDefined();
      expect(await attempt(second!)).toBe('skipped');
      await other.query('COMMIT');
    } finally {
      other.release();
    }
    await relayOutbox(t.pool, t.queue);
    const [first, second] = await deliveriesOf(endpoint.id, ['first', 'second']);
    expect(await attempt(first!)).toBe('succeeded');
    expect(await attempt(second!)).toBe('succeeded');
  });
});
