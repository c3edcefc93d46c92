import { operator } from '../../src/services/audit.ts';
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { inTransaction } from '../../src/db/sql.ts';
import { enqueueEvents } from '../../src/outbox/events/enqueue.ts';
import pino from 'pino';
import { openDatabase } from '../../src/runtime/database.ts';
import { interleaveByEndpoint, relayOutbox } from '../../src/outbox/events/relay.ts';
import { queueDue } from '../../src/outbox/sender/delivery-store.ts';
import { MAX_ATTEMPTS, MAX_RETRY_AFTER_MS, RETRY_DELAYS_MS, RETRY_JITTER } from '../../src/outbox/sender/retry-schedule.ts';
import { checkEndpointUrl, isPublicAddress } from '../../src/outbox/endpoints/ssrf.ts';
import { createDeliveryStore } from '../../src/outbox/sender/delivery-store.ts';
import { verifyWebhookSignature } from '../../src/outbox/sender/verify.ts';
import type { Queue } from '../../src/queue/queue.ts';
import { createWebhookDeliveryService } from '../../src/services/webhook-deliveries.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { apiAs, type Receiver, withOutboundApp } from '../support/outbound.ts';
import { exampleEvent, tenantWithKey } from '../support/factories.ts';
import type { EventName } from '../../src/outbox/events/registry.ts';
import { verifiesWithStripe } from '../support/receiver.ts';

const tls = withOutboundApp((app, receiver) => {
  t = app;
  rx = receiver;
});
let t: TestApp;
let rx: Receiver;

const api = (key: string) => apiAs(() => t, key);

async function endpointFor(events = ['invoice.created', 'invoice.paid']) {
  const k = await tenantWithKey(t.prisma);
  const res = await api(k.apiKey).post('/api/v1/webhook-endpoints', { url: rx.url, events, description: 'test' });
  expect(res.statusCode).toBe(201);
  return { ...k, endpoint: res.json() as { id: string; secret: string } };
}

/** Writes an outbox event as the domain would, fans it out, and returns the delivery id. */
async function emit(tenantId: string, type: EventName = 'invoice.created') {
  await inTransaction(t.pool, (sql) => enqueueEvents(sql, [exampleEvent(tenantId, type)]));
  await relayOutbox(t.pool, t.queue);
  const d = await t.prisma.webhookDelivery.findFirstOrThrow({
    where: { tenantId, eventType: type, isTest: false },
    orderBy: { createdAt: 'desc' },
  });
  return d.id;
}
const hitsFor = (id: string) => rx.hits.filter((h) => h.headers['x-webhook-id'] === id);

describe('endpoints', () => {
  it('creates an endpoint and shows its whsec_ secret only in the answer to creation', async () => {
    const { apiKey, endpoint } = await endpointFor();
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const read = (await api(apiKey).get(`/api/v1/webhook-endpoints/${endpoint.id}`)).json();
    expect(read).toMatchObject({
      id: endpoint.id,
      url: rx.url,
      events: ['invoice.created', 'invoice.paid'],
      enabled: true,
      disabled_reason: null,
    });
    expect(JSON.stringify(read)).not.toContain(endpoint.secret);
    expect(JSON.stringify(await t.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } }))).not.toContain(endpoint.secret);
  });

  it('lists the live event catalog, with the seven contract events', async () => {
    const { apiKey } = await tenantWithKey(t.prisma);
    const names = (await api(apiKey).get('/api/v1/webhook-event-types')).json().data.map((e: { name: string }) => e.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'invoice.created',
        'invoice.sent',
        'invoice.paid',
        'invoice.overdue',
        'payment.failed',
        'payment.refunded',
        'subscription.trial_extended',
      ]),
    );
  });

  it('refuses a non-HTTPS URL with 400 naming the rule', async () => {
    const { apiKey } = await tenantWithKey(t.prisma);
    const res = await api(apiKey).post('/api/v1/webhook-endpoints', { url: rx.url.replace('https', 'http'), events: ['invoice.paid'] });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors).toEqual([{ path: 'url', message: 'must use https://' }]);
  });

  it('refuses unknown event names with 400 listing the valid ones', async () => {
    const { apiKey } = await tenantWithKey(t.prisma);
    const res = await api(apiKey).post('/api/v1/webhook-endpoints', { url: rx.url, events: ['invoice.exploded'] });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors[0].message).toMatch(/invoice\.exploded.*valid events are: invoice\.created/);
  });

  it('allows 20 endpoints per tenant and answers 409 limit_reached for the 21st', async () => {
    const { apiKey } = await tenantWithKey(t.prisma);
    const make = () => api(apiKey).post('/api/v1/webhook-endpoints', { url: rx.url, events: ['invoice.paid'] });
    const statuses = await Promise.all(Array.from({ length: 21 }, make).map((p) => p.then((r) => r.statusCode)));
    expect(statuses.filter((s) => s === 201)).toHaveLength(20);
    expect(statuses.filter((s) => s === 409)).toHaveLength(1);
  });

  it('updates, disables, re-enables and deletes an endpoint', async () => {
    const { apiKey, endpoint } = await endpointFor();
    expect((await api(apiKey).patch(`/api/v1/webhook-endpoints/${endpoint.id}`, { events: ['payment.failed'] })).json().events).toEqual([
      'payment.failed',
    ]);
    expect((await api(apiKey).patch(`/api/v1/webhook-endpoints/${endpoint.id}`, { enabled: false })).json()).toMatchObject({
      enabled: false,
      disabled_reason: 'disabled by the tenant',
    });
    expect((await api(apiKey).patch(`/api/v1/webhook-endpoints/${endpoint.id}`, { enabled: true })).json()).toMatchObject({
      enabled: true,
      disabled_reason: null,
    });
    expect((await api(apiKey).del(`/api/v1/webhook-endpoints/${endpoint.id}`)).statusCode).toBe(204);
    expect((await api(apiKey).get(`/api/v1/webhook-endpoints/${endpoint.id}`)).statusCode).toBe(404);
  });

  it('answers 404 for another tenant’s endpoint on every route', async () => {
    const { endpoint } = await endpointFor();
    const other = await tenantWithKey(t.prisma);
    const o = api(other.apiKey);
    const base = `/api/v1/webhook-endpoints/${endpoint.id}`;
    for (const res of [
      await o.get(base),
      await o.patch(base, { enabled: false }),
      await o.del(base),
      await o.post(`${base}/test`, {}),
      await o.get(`${base}/deliveries`),
      await o.post(`${base}/rotate-secret`),
      await o.post(`${base}/replay`, { since: '2020-01-01T00:00:00Z' }),
    ]) {
      expect(res.statusCode).toBe(404);
    }
    expect((await t.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } })).enabled).toBe(true);
  });
});

describe('SSRF guard', () => {
  it.each([
    'https://127.0.0.1/x',
    'https://10.0.0.1/x',
    'https://169.254.169.254/latest/meta-data',
    'https://[::1]/x',
    'https://localhost/x',
    'https://100.64.0.1/x',
    'https://[::ffff:127.0.0.1]/x',
  ])('refuses %s unless private targets are allowed', async (url) => {
    expect((await checkEndpointUrl(url, false)).ok).toBe(false);
    expect((await checkEndpointUrl(url, true)).ok).toBe(true);
  });

  it('accepts a public address', async () => {
    expect(await checkEndpointUrl('https://93.184.215.14/hook', false)).toEqual({ ok: true });
    expect(isPublicAddress('8.8.8.8')).toBe(true);
  });

  it('refuses private targets at delivery time too, whatever the URL resolved to at creation', async () => {
    const strict = await createTestApp({ ca: tls.cert });
    try {
      const { apiKey, tenantId } = await tenantWithKey(strict.prisma);
      expect(
        (
          await strict.app.inject({
            method: 'POST',
            url: '/api/v1/webhook-endpoints',
            headers: { 'x-api-key': apiKey },
            payload: { url: rx.url, events: ['invoice.paid'] },
          })
        ).statusCode,
      ).toBe(400);
      // As if DNS had changed since creation: the row exists, the connection must still be refused.
      const e = await strict.prisma.webhookEndpoint.create({
        data: {
          tenantId,
          url: rx.url.replace('127.0.0.1', 'localhost'),
          events: ['invoice.paid'],
          secret: (await import('../support/app.ts')).testSecretBox().seal('whsec_x'),
        },
      });
      const before = rx.hits.length;
      const r = await strict.services.webhookDeliveries.sendTest(operator(tenantId), e.id, 'invoice.paid');
      expect(r.status).toBe('failed');
      expect(r.error).toMatch(/non-public|refused/);
      expect(rx.hits.length).toBe(before);
    } finally {
      await strict.close();
    }
  });

  it('refuses at connect time an endpoint row that names a private IP literal, in any spelling', async () => {
    const strict = await createTestApp({ ca: tls.cert });
    try {
      const { tenantId } = await tenantWithKey(strict.prisma);
      const port = new URL(rx.url).port;
      // Rows the API would refuse today, as an older release, a restored backup or a direct write could leave them.
      for (const url of [rx.url, `https://2130706433:${port}/`, `https://0x7f.1:${port}/`, `https://[::ffff:127.0.0.1]:${port}/`]) {
        const e = await strict.prisma.webhookEndpoint.create({
          data: { tenantId, url, events: ['invoice.paid'], secret: (await import('../support/app.ts')).testSecretBox().seal('whsec_x') },
        });
        const before = rx.hits.length;
        const r = await strict.services.webhookDeliveries.sendTest(operator(tenantId), e.id, 'invoice.paid');
        expect(r.status, url).toBe('failed');
        expect(r.error, url).toMatch(/refused target/);
        expect(rx.hits.length, url).toBe(before);
      }
    } finally {
      await strict.close();
    }
  });
});

describe('deliveries', () => {
  it('Test sends a signed sample whose signature verifies over the exact bytes, with the exact headers', async () => {
    rx.set('ok');
    const { apiKey, endpoint, tenantId } = await endpointFor();
    const res = await api(apiKey).post(`/api/v1/webhook-endpoints/${endpoint.id}/test`, { event: 'invoice.paid' });
    expect(res.json()).toMatchObject({ event: 'invoice.paid', success: true, status_code: 200 });
    const [hit] = hitsFor(res.json().delivery_id);
    expect(hit!.headers['content-type']).toBe('application/json');
    expect(hit!.headers['x-webhook-event']).toBe('invoice.paid');
    expect(Math.abs(Number(hit!.headers['x-webhook-timestamp']) - hit!.at / 1000)).toBeLessThan(5);
    expect(hit!.headers['x-webhook-signature']).toMatch(/^v0=[0-9a-f]{64}$/);
    expect(verifyWebhookSignature({ secret: endpoint.secret, headers: hit!.headers, rawBody: hit!.raw })).toBe(true);
    expect(
      verifyWebhookSignature({ secret: endpoint.secret, headers: hit!.headers, rawBody: Buffer.concat([hit!.raw, Buffer.from(' ')]) }),
    ).toBe(false);
    expect(hit!.json).toMatchObject({ tenant_id: tenantId, status: 'paid', total: '123.45' });
    const log = (await api(apiKey).get(`/api/v1/webhook-endpoints/${endpoint.id}/deliveries`)).json();
    expect(log.data[0]).toMatchObject({
      id: res.json().delivery_id,
      test: true,
      status: 'succeeded',
      attempts: 1,
      attempt_log: [{ attempt: 1, status_code: 200 }],
    });
  });

  it('Test refuses an event the endpoint does not subscribe to', async () => {
    const { apiKey, endpoint } = await endpointFor(['invoice.paid']);
    expect((await api(apiKey).post(`/api/v1/webhook-endpoints/${endpoint.id}/test`, { event: 'payment.failed' })).statusCode).toBe(400);
  });

  it('delivers outbox events to subscribed endpoints only, body = data.payload of the stored CloudEvents envelope', async () => {
    rx.set('ok');
    const { tenantId, endpoint } = await endpointFor(['invoice.created']);
    const id = await emit(tenantId);
    expect((await t.outbound.deliverer.attempt(id)).status).toBe('succeeded');
    const d = await t.prisma.webhookDelivery.findUniqueOrThrow({ where: { id } });
    expect(d.envelope).toMatchObject({
      specversion: '1.0',
      source: `/tenants/${tenantId}`,
      type: 'invoice.created',
      datacontenttype: 'application/json',
      data: { payload: { total: '123.45' } },
    });
    expect(hitsFor(id)[0]!.json).toEqual((d.envelope as { data: { payload: unknown } }).data.payload);
    await inTransaction(t.pool, (sql) => enqueueEvents(sql, [exampleEvent(tenantId, 'payment.failed', 'pf-unsubscribed')]));
    await relayOutbox(t.pool, t.queue);
    expect(await t.prisma.webhookDelivery.count({ where: { endpointId: endpoint.id, eventType: 'payment.failed' } })).toBe(0);
  });

  it('relays an event once, leaving its row as written: only its mark as still to relay goes', async () => {
    const { tenantId, endpoint } = await endpointFor(['invoice.created']);
    const event = exampleEvent(tenantId, 'invoice.created', `relayed-once-${randomUUID()}`);
    await inTransaction(t.pool, (sql) => enqueueEvents(sql, [event]));
    const rowOf = async () =>
      (
        await t.pool.query<{ id: string; version: string; pending: boolean }>(
          `SELECT o.id, o.xmin::text || o.ctid::text AS version, EXISTS (SELECT 1 FROM outbox_pending p WHERE p.event_id = o.id) AS pending
           FROM outbox_events o WHERE o.tenant_id = $1 AND o.dedup_key = $2`,
          [tenantId, event.dedupKey],
        )
      ).rows[0]!;
    const written = await rowOf();
    expect(written.pending).toBe(true);
    await relayOutbox(t.pool, t.queue);
    await relayOutbox(t.pool, t.queue);
    expect(await rowOf()).toEqual({ ...written, pending: false });
    expect(await t.prisma.webhookDelivery.count({ where: { endpointId: endpoint.id, outboxEventId: written.id } })).toBe(1);
  });

  it('lists as still to relay an event written without the service’s own statement, as an earlier release writes one', async () => {
    const { tenantId, endpoint } = await endpointFor(['invoice.created']);
    const event = exampleEvent(tenantId, 'invoice.created');
    const { rows } = await t.pool.query<{ id: string }>(
      `INSERT INTO outbox_events (id, tenant_id, type, payload, dedup_key) VALUES (gen_random_uuid(), $1, $2, $3, $4) RETURNING id`,
      [tenantId, event.type, JSON.stringify(event.payload), event.dedupKey],
    );
    const pending = await t.pool.query('SELECT 1 FROM outbox_pending WHERE event_id = $1', [rows[0]!.id]);
    expect(pending.rowCount).toBe(1);
    await relayOutbox(t.pool, t.queue);
    expect(await t.prisma.webhookDelivery.count({ where: { endpointId: endpoint.id, outboxEventId: rows[0]!.id } })).toBe(1);
  });

  it('retries a 500 after the first wait of the schedule with the same X-Webhook-Id, and succeeds', async () => {
    const { tenantId } = await endpointFor();
    const id = await emit(tenantId);
    rx.set('fail');
    const before = Date.now();
    expect((await t.outbound.deliverer.attempt(id)).status).toBe('retrying');
    const d = await t.prisma.webhookDelivery.findUniqueOrThrow({ where: { id } });
    const wait = d.nextAttemptAt!.getTime() - before;
    const first = RETRY_DELAYS_MS[0]!;
    expect(wait).toBeGreaterThanOrEqual(first - 100);
    // The wait plus at most its jitter, plus the attempt's own round trip on a busy machine.
    expect(wait).toBeLessThanOrEqual(first * (1 + RETRY_JITTER) + 1_000);
    // Not due yet: a job arriving early changes nothing.
    expect((await t.outbound.deliverer.attempt(id)).status).toBe('skipped');
    await t.prisma.webhookDelivery.update({ where: { id }, data: { nextAttemptAt: new Date() } });
    rx.set('ok');
    expect((await t.outbound.deliverer.attempt(id)).status).toBe('succeeded');
    const hits = hitsFor(id);
    expect(hits).toHaveLength(2);
    expect(new Set(hits.map((h) => h.headers['x-webhook-id'])).size).toBe(1);
  });

  it('honours Retry-After on 429', async () => {
    const { tenantId } = await endpointFor();
    const id = await emit(tenantId);
    rx.set('too_many');
    await t.outbound.deliverer.attempt(id);
    const d = await t.prisma.webhookDelivery.findUniqueOrThrow({ where: { id } });
    expect(d.nextAttemptAt!.getTime() - Date.now()).toBeGreaterThan(115_000);
    rx.set('ok');
  });

  it.each([
    ['a redirect (not followed)', 'redirect', /HTTP 301/],
    ['a hanging receiver', 'hang', /within/],
    ['a reset connection', 'reset', /socket hang up|ECONNRESET/],
  ] as const)('counts %s as a failed attempt', async (_name, behaviour, error) => {
    const { tenantId } = await endpointFor();
    const id = await emit(tenantId);
    rx.set(behaviour);
    const r = await t.outbound.deliverer.attempt(id);
    rx.set('ok');
    expect(r.status).toBe('retrying');
    expect(r.error).toMatch(error);
    const attempt = await t.prisma.webhookAttempt.findFirstOrThrow({ where: { deliveryId: id } });
    expect(attempt.error).toMatch(error);
  });

  it('reads at most 2 KB of an answer, even garbage', async () => {
    const { tenantId } = await endpointFor();
    const id = await emit(tenantId);
    rx.set('garbage');
    const r = await t.outbound.deliverer.attempt(id);
    rx.set('ok');
    expect(r.status).toBe('succeeded');
    // 2,048 bytes of the answer, decoded: each invalid byte becomes one replacement character.
    const excerpt = (await t.prisma.webhookAttempt.findFirstOrThrow({ where: { deliveryId: id } })).responseBody ?? '';
    expect(excerpt.length).toBe(2048);
  });

  it('records an answer holding NUL bytes, each replaced, and settles the delivery', async () => {
    const { tenantId } = await endpointFor();
    const id = await emit(tenantId);
    rx.set('nul');
    const r = await t.outbound.deliverer.attempt(id);
    rx.set('ok');
    expect(r.status).toBe('succeeded');
    expect((await t.prisma.webhookDelivery.findUniqueOrThrow({ where: { id } })).status).toBe('succeeded');
    expect((await t.prisma.webhookAttempt.findFirstOrThrow({ where: { deliveryId: id } })).responseBody).toBe('ok\uFFFDthanks');
  });

  it('defers an attempt at most the longest scheduled wait, whatever Retry-After asks', async () => {
    const { tenantId } = await endpointFor();
    const id = await emit(tenantId);
    rx.set('back_in_a_century');
    const r = await t.outbound.deliverer.attempt(id);
    rx.set('ok');
    expect(r.status).toBe('retrying');
    const d = await t.prisma.webhookDelivery.findUniqueOrThrow({ where: { id } });
    expect(d.attempts).toBe(1);
    expect(d.nextAttemptAt!.getTime() - Date.now()).toBeLessThanOrEqual(MAX_RETRY_AFTER_MS);
    expect(d.nextAttemptAt!.getTime() - Date.now()).toBeGreaterThan(MAX_RETRY_AFTER_MS - 60_000);
  });

  it('disables the endpoint on 410 Gone', async () => {
    const { tenantId, endpoint } = await endpointFor();
    const id = await emit(tenantId);
    rx.set('gone');
    expect((await t.outbound.deliverer.attempt(id)).status).toBe('failed');
    rx.set('ok');
    expect(await t.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } })).toMatchObject({
      enabled: false,
      disabledReason: 'the endpoint answered 410 Gone',
    });
  });

  it('disables an endpoint failing for 5 days and tells the tenant’s other endpoints', async () => {
    const { tenantId, apiKey, endpoint } = await endpointFor(['invoice.created']);
    await api(apiKey).post('/api/v1/webhook-endpoints', { url: rx.url, events: ['endpoint.disabled'] });
    const id = await emit(tenantId);
    await t.prisma.webhookEndpoint.update({
      where: { id: endpoint.id },
      data: { failingSince: new Date(Date.now() - 5 * 86_400_000 - 1000) },
    });
    rx.set('fail');
    await t.outbound.deliverer.attempt(id);
    rx.set('ok');
    expect(await t.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } })).toMatchObject({
      enabled: false,
      disabledReason: 'failing with no success for 5 days',
    });
    expect((await t.prisma.outboxEvent.findFirstOrThrow({ where: { tenantId, type: 'endpoint.disabled' } })).payload).toMatchObject({
      id: endpoint.id,
      enabled: false,
    });
  });

  it('fails a delivery after its last attempt, and resend makes one more attempt', async () => {
    const { tenantId, apiKey } = await endpointFor();
    const id = await emit(tenantId);
    rx.set('fail');
    for (let i = 0; i < MAX_ATTEMPTS; i++) {
      await t.prisma.webhookDelivery.update({ where: { id }, data: { nextAttemptAt: new Date() } });
      await t.outbound.deliverer.attempt(id);
    }
    expect(await t.prisma.webhookDelivery.findUniqueOrThrow({ where: { id } })).toMatchObject({
      status: 'failed',
      attempts: MAX_ATTEMPTS,
      nextAttemptAt: null,
    });
    rx.set('ok');
    expect((await api(apiKey).post(`/api/v1/webhook-deliveries/${id}/resend`)).statusCode).toBe(202);
    await expect.poll(async () => (await t.prisma.webhookDelivery.findUniqueOrThrow({ where: { id } })).status).toBe('pending');
    await t.outbound.deliverer.attempt(id);
    expect((await t.prisma.webhookDelivery.findUniqueOrThrow({ where: { id } })).status).toBe('succeeded');
  });

  it('replays an endpoint’s failed deliveries since a time', async () => {
    const { tenantId, apiKey, endpoint } = await endpointFor();
    const ids = [await emit(tenantId), await emit(tenantId)];
    await t.prisma.webhookDelivery.updateMany({ where: { id: { in: ids } }, data: { status: 'failed', nextAttemptAt: null } });
    const res = await api(apiKey).post(`/api/v1/webhook-endpoints/${endpoint.id}/replay`, {
      since: new Date(Date.now() - 60_000).toISOString(),
    });
    expect(res.json()).toEqual({ replayed: 2 });
  });

  it('signs with both secrets during a rotation, the new one first', async () => {
    rx.set('ok');
    const { apiKey, endpoint } = await endpointFor();
    const rotated = (await api(apiKey).post(`/api/v1/webhook-endpoints/${endpoint.id}/rotate-secret`)).json();
    expect(rotated.secret).not.toBe(endpoint.secret);
    const test = (await api(apiKey).post(`/api/v1/webhook-endpoints/${endpoint.id}/test`, {})).json();
    const [hit] = hitsFor(test.delivery_id);
    const sigs = String(hit!.headers['x-webhook-signature']).split(' ');
    expect(sigs).toHaveLength(2);
    expect(
      verifyWebhookSignature({ secret: rotated.secret, headers: { ...hit!.headers, 'x-webhook-signature': sigs[0] }, rawBody: hit!.raw }),
    ).toBe(true);
    expect(
      verifyWebhookSignature({ secret: endpoint.secret, headers: { ...hit!.headers, 'x-webhook-signature': sigs[1] }, rawBody: hit!.raw }),
    ).toBe(true);
    // And with a verifier written elsewhere: either secret passes, a third does not.
    expect([
      verifiesWithStripe(rotated.secret, hit!),
      verifiesWithStripe(endpoint.secret, hit!),
      verifiesWithStripe('whsec_other', hit!),
    ]).toEqual([true, true, false]);
  });

  it('attempts a Test in the request, which a worker’s due-delivery pass running meanwhile does not take', async () => {
    rx.set('ok');
    const { tenantId, endpoint } = await endpointFor();
    const published: string[] = [];
    const watched: Queue = { ...t.queue, publish: async (_topic, body) => void published.push(JSON.stringify(body)) };
    const deliveries = createWebhookDeliveryService({
      pool: t.pool,
      endpoints: t.services.webhookEndpoints,
      queue: t.queue,
      // The worker's pass runs between the Test's insert and its attempt.
      deliverer: { ...t.outbound.deliverer, attempt: async (id) => (await queueDue(t.pool, watched), t.outbound.deliverer.attempt(id)) },
    });
    const r = await deliveries.sendTest(operator(tenantId), endpoint.id, 'invoice.paid');
    expect(r.status).toBe('succeeded');
    expect(published.join()).not.toContain(r.deliveryId);
  });

  it('queues due retries for the worker', async () => {
    const { tenantId } = await endpointFor();
    const id = await emit(tenantId);
    await t.prisma.webhookDelivery.update({ where: { id }, data: { queuedAt: null, nextAttemptAt: new Date(Date.now() - 1000) } });
    expect(await queueDue(t.pool, t.queue)).toBeGreaterThanOrEqual(1);
    expect((await t.prisma.webhookDelivery.findUniqueOrThrow({ where: { id } })).queuedAt).not.toBeNull();
  });
});

describe('delivering many at once', () => {
  it('two jobs for one delivery attempted at the same moment send it once', async () => {
    rx.set('ok');
    const { tenantId } = await endpointFor();
    const id = await emit(tenantId);
    const outcomes = await Promise.all([t.outbound.deliverer.attempt(id), t.outbound.deliverer.attempt(id)]);
    expect(outcomes.map((o) => o.status).sort()).toEqual(['skipped', 'succeeded']);
    expect(hitsFor(id)).toHaveLength(1);
    expect(await t.prisma.webhookAttempt.count({ where: { deliveryId: id } })).toBe(1);
  });

  it('a delivery erased while its attempt was out leaves the attempts recorded beside it whole', async () => {
    const { tenantId } = await endpointFor();
    const [kept, erased] = [await emit(tenantId), await emit(tenantId)];
    const store = createDeliveryStore(t.pool, { leaseSeconds: 60 });
    const [a, b] = await Promise.all([store.claim(kept), store.claim(erased)]);
    // As an erasure (or a workspace's removal) takes it while it is being sent.
    await t.pool.query('DELETE FROM webhook_deliveries WHERE id = $1', [erased]);
    const record = (delivery: NonNullable<typeof a>) => ({
      delivery,
      attempt: 1,
      startedAt: new Date(),
      durationMs: 5,
      statusCode: 200,
      responseBody: null,
    });
    // Recorded in one statement (the store batches what arrives together).
    await Promise.all([store.recordSuccess(record(a!)), store.recordSuccess(record(b!))]);
    expect((await t.prisma.webhookDelivery.findUniqueOrThrow({ where: { id: kept } })).status).toBe('succeeded');
    expect(await t.prisma.webhookAttempt.count({ where: { deliveryId: { in: [kept, erased] } } })).toBe(1);
    const failed = { ...record(b!), statusCode: 500, error: 'HTTP 500', nextAttemptAt: new Date(), gone: false };
    await expect(store.recordFailure(failed)).resolves.toEqual({ disabled: null, circuit: null });
  });

  /**
   * Each endpoint of these tenants is sent one delivery, answered at once: this process has seen it answer
   * promptly, so its whole cap is open to it (deliverer.ts).
   */
  const answeredPromptly = async (...tenantIds: string[]) => {
    for (const tenantId of tenantIds) {
      await inTransaction(t.pool, (sql) => enqueueEvents(sql, [exampleEvent(tenantId, 'invoice.created', `prompt:${randomUUID()}`)]));
      await relayOutbox(t.pool, t.queue);
      const first = await t.prisma.webhookDelivery.findMany({ where: { tenantId, status: 'pending' }, select: { id: true } });
      for (const { id } of first) expect((await t.outbound.deliverer.attempt(id)).status).toBe('succeeded');
    }
  };
  const pendingOf = async (where: { tenantId?: { in: string[] } | string; endpointId?: string }) =>
    (await t.prisma.webhookDelivery.findMany({ where: { ...where, status: 'pending' }, select: { id: true } })).map((d) => d.id);

  it('records every one of 45 concurrent deliveries to three endpoints, and each endpoint’s last success', async () => {
    rx.set('ok');
    // Three tenants, so that no per-tenant cap turns any away.
    const tenants: string[] = [];
    const endpoints: string[] = [];
    for (let i = 0; i < 3; i++) {
      const k = await tenantWithKey(t.prisma);
      const res = await api(k.apiKey).post('/api/v1/webhook-endpoints', { url: rx.url, events: ['invoice.created'] });
      tenants.push(k.tenantId);
      endpoints.push(res.json().id);
      await answeredPromptly(k.tenantId);
      await inTransaction(t.pool, (sql) =>
        enqueueEvents(
          sql,
          Array.from({ length: 15 }, (_, j) => exampleEvent(k.tenantId, 'invoice.created', `many:${j}`)),
        ),
      );
    }
    await relayOutbox(t.pool, t.queue);
    const ids = await pendingOf({ tenantId: { in: tenants } });
    expect(ids).toHaveLength(45);
    const outcomes = await Promise.all(ids.map((id) => t.outbound.deliverer.attempt(id)));
    expect(outcomes.filter((o) => o.status !== 'succeeded')).toEqual([]);
    const settled = await t.prisma.webhookDelivery.findMany({ where: { id: { in: ids } }, include: { attemptLog: true } });
    expect(settled.every((d) => d.status === 'succeeded' && d.attempts === 1 && d.lockedUntil === null && d.attemptLog.length === 1)).toBe(
      true,
    );
    const health = await t.prisma.webhookEndpoint.findMany({ where: { id: { in: endpoints } } });
    expect(health.every((e) => e.lastSuccessAt !== null && e.failingSince === null)).toBe(true);
  });

  it('holds at most 16 attempts to one endpoint at once and gives the rest back for a moment later', async () => {
    rx.set('ok');
    const { tenantId, endpoint } = await endpointFor(['invoice.created']);
    await answeredPromptly(tenantId);
    await inTransaction(t.pool, (sql) =>
      enqueueEvents(
        sql,
        Array.from({ length: 20 }, (_, i) => exampleEvent(tenantId, 'invoice.created', `cap:${i}`)),
      ),
    );
    await relayOutbox(t.pool, t.queue);
    const ids = await pendingOf({ endpointId: endpoint.id });
    const outcomes = await Promise.all(ids.map((id) => t.outbound.deliverer.attempt(id)));
    expect(outcomes.filter((o) => o.status === 'succeeded')).toHaveLength(16);
    expect(outcomes.filter((o) => o.status === 'busy')).toHaveLength(4);
    const given = await t.prisma.webhookDelivery.findMany({ where: { endpointId: endpoint.id, status: 'pending' } });
    expect(given).toHaveLength(4);
    for (const d of given) {
      expect(d.lockedUntil).toBeNull();
      expect(d.queuedAt).toBeNull();
      expect(d.nextAttemptAt!.getTime() - Date.now()).toBeLessThan(1000);
      expect(d.attempts).toBe(0);
    }
  });

  it('holds at most 16 attempts for one tenant at once, whatever its endpoints, while another tenant’s go out', async () => {
    rx.set('ok');
    const { tenantId, apiKey, endpoint } = await endpointFor(['invoice.created']);
    const second = await api(apiKey).post('/api/v1/webhook-endpoints', { url: `${rx.url}?second`, events: ['invoice.created'] });
    expect(second.statusCode).toBe(201);
    const other = await endpointFor(['invoice.created']);
    await answeredPromptly(tenantId, other.tenantId);
    await inTransaction(t.pool, (sql) =>
      enqueueEvents(sql, [
        ...Array.from({ length: 12 }, (_, i) => exampleEvent(tenantId, 'invoice.created', `tenant-cap:${i}`)),
        exampleEvent(other.tenantId, 'invoice.created', 'tenant-cap:other'),
      ]),
    );
    await relayOutbox(t.pool, t.queue);
    const [mine, theirs] = [await pendingOf({ tenantId }), await pendingOf({ tenantId: other.tenantId })];
    expect(mine).toHaveLength(24);
    const outcomes = await Promise.all([...mine, ...theirs].map((id) => t.outbound.deliverer.attempt(id)));
    const of = (list: typeof outcomes, status: string) => list.filter((o) => o.status === status).length;
    expect(of(outcomes.slice(0, 24), 'succeeded')).toBe(16);
    expect(of(outcomes.slice(0, 24), 'busy')).toBe(8);
    expect(outcomes[24]!.status).toBe('succeeded');
    expect(endpoint.id).not.toBe(second.json().id);
  });

  it('holds at most 2 attempts at once to an endpoint this process has not tried yet or last saw answer slowly', async () => {
    const { tenantId, endpoint } = await endpointFor(['invoice.created']);
    const attemptAll = async (tag: string) => {
      await inTransaction(t.pool, (sql) =>
        enqueueEvents(
          sql,
          Array.from({ length: 5 }, (_, i) => exampleEvent(tenantId, 'invoice.created', `${tag}:${i}`)),
        ),
      );
      await relayOutbox(t.pool, t.queue);
      const outcomes = await Promise.all((await pendingOf({ endpointId: endpoint.id })).map((id) => t.outbound.deliverer.attempt(id)));
      // Those given back come again once a slow attempt may have ended, not in a moment.
      const { rows } = await t.pool.query<{ waits: number }>(
        `SELECT extract(epoch FROM next_attempt_at - now())::float8 AS waits FROM webhook_deliveries WHERE endpoint_id = $1 AND status = 'pending'`,
        [endpoint.id],
      );
      expect(rows.every((r) => r.waits > 4)).toBe(true);
      await t.pool.query(`UPDATE webhook_deliveries SET status = 'failed' WHERE endpoint_id = $1 AND status = 'pending'`, [endpoint.id]);
      return outcomes.map((o) => o.status).sort();
    };
    // Not tried yet by this process.
    rx.set('ok');
    expect(await attemptAll('new')).toEqual(['busy', 'busy', 'busy', 'succeeded', 'succeeded']);
    // Seen answering at once: the whole cap.
    expect(await attemptAll('prompt')).toEqual(Array(5).fill('succeeded'));
    // Seen answering only after half the timeout (this app's is 1.5 s): two at once again.
    rx.set('ok', 750);
    expect(await attemptAll('slowing')).toEqual(Array(5).fill('succeeded'));
    expect(await attemptAll('slow')).toEqual(['busy', 'busy', 'busy', 'succeeded', 'succeeded']);
    rx.set('ok');
  });

  it('answers a Test to an endpoint with no free slot as not sent, saying why, and never sends it later', async () => {
    const { tenantId, apiKey, endpoint } = await endpointFor(['invoice.created']);
    rx.set('hang');
    // Two attempts hanging to an endpoint this process has not seen answer: its two slots are taken.
    const before = rx.hits.length;
    const hanging = [await emit(tenantId), await emit(tenantId)].map((id) => t.outbound.deliverer.attempt(id));
    await expect.poll(() => rx.hits.length - before).toBe(2);
    const res = await api(apiKey).post(`/api/v1/webhook-endpoints/${endpoint.id}/test`, {});
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ success: false, status_code: null, error: expect.stringMatching(/not sent.*in flight/) });
    await Promise.all(hanging);
    rx.set('ok');
    // Settled: no due-delivery pass takes it, now or later.
    const test = await t.prisma.webhookDelivery.findUniqueOrThrow({ where: { id: res.json().delivery_id } });
    expect(test).toMatchObject({ status: 'failed', nextAttemptAt: null, queuedAt: null });
    expect(hitsFor(res.json().delivery_id)).toHaveLength(0);
  });

  it('queues a batch round-robin across endpoints, so one endpoint’s run cannot fill every consumer slot', () => {
    const rows = [
      ...['a1', 'a2', 'a3'].map((id) => ({ id, endpoint_id: 'A' })),
      ...['b1', 'b2'].map((id) => ({ id, endpoint_id: 'B' })),
      { id: 'c1', endpoint_id: 'C' },
    ];
    expect(interleaveByEndpoint(rows)).toEqual(['a1', 'b1', 'c1', 'a2', 'b2', 'a3']);
  });

  it('keeps delivery bookkeeping off the synchronous commit path, and everything else on it', async () => {
    const db = await openDatabase(t.config, pino({ level: 'silent' }), { migrate: false });
    try {
      expect((await db.deliveryPool.query('SHOW synchronous_commit')).rows[0].synchronous_commit).toBe('off');
      expect((await db.pool.query('SHOW synchronous_commit')).rows[0].synchronous_commit).toBe('on');
    } finally {
      await db.close();
    }
  });
});

describe('verifyWebhookSignature', () => {
  it('refuses a timestamp older than 300 s even with a good signature', () => {
    const { createHmac } = require('node:crypto') as typeof import('node:crypto');
    const ts = Math.floor(Date.now() / 1000) - 301;
    const body = '{"a":1}';
    const sig = `v0=${createHmac('sha256', 'whsec_k').update(`${ts}.${body}`).digest('hex')}`;
    const headers = { 'x-webhook-timestamp': String(ts), 'x-webhook-signature': sig };
    expect(verifyWebhookSignature({ secret: 'whsec_k', headers, rawBody: body })).toBe(false);
    expect(verifyWebhookSignature({ secret: 'whsec_k', headers, rawBody: body, now: ts + 10 })).toBe(true);
  });
});
