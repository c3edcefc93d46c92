// An endpoint's rate limit (docs/receiving-webhooks.md, "Rate limit"): set and checked through the API, and
// honoured by two worker processes sharing one budget, as README's process model runs them, measured at a
// receiver of the test's own by when each request arrived.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inTransaction } from '../../src/db/sql.ts';
import { enqueueEvents } from '../../src/outbox/events/enqueue.ts';
import { exampleEvent, tenantWithKey } from '../support/factories.ts';
import { apiAs, outboundWorkerEnv, withOutboundApp, type Receiver } from '../support/outbound.ts';
import type { TestApp } from '../support/app.ts';
import { startService, stop } from '../support/spawn.ts';

let t: TestApp;
let rx: Receiver;
withOutboundApp((app, receiver) => {
  t = app;
  rx = receiver;
});

const endpointPath = (id: string) => `/api/v1/webhook-endpoints/${id}`;

describe('setting an endpoint’s rate limit', () => {
  it('is shown on the endpoint, in REST and GraphQL, and null removes it', async () => {
    const { apiKey } = await tenantWithKey(t.prisma);
    const api = apiAs(() => t, apiKey);
    const created = await api.post('/api/v1/webhook-endpoints', { url: rx.url, events: ['invoice.created'], rate_limit_per_second: 2.5 });
    expect(created.statusCode).toBe(201);
    expect(created.json().rate_limit_per_second).toBe(2.5);
    const { id } = created.json();
    const gql = await t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'x-api-key': apiKey },
      payload: { query: `{ webhookEndpoint(id: "${id}") { rateLimitPerSecond } }` },
    });
    expect(gql.json()).toEqual({ data: { webhookEndpoint: { rateLimitPerSecond: 2.5 } } });
    expect((await api.patch(endpointPath(id), { rate_limit_per_second: null })).json().rate_limit_per_second).toBeNull();
    expect((await api.get(endpointPath(id))).json().rate_limit_per_second).toBeNull();
  });

  it.each([0, -1, 0.001, 1001, 'fast'])('refuses %j with a problem naming the field, and changes nothing', async (value) => {
    const { apiKey } = await tenantWithKey(t.prisma);
    const api = apiAs(() => t, apiKey);
    const { id } = (
      await api.post('/api/v1/webhook-endpoints', { url: rx.url, events: ['invoice.created'], rate_limit_per_second: 5 })
    ).json();
    const res = await api.patch(endpointPath(id), { rate_limit_per_second: value });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body).toContain('rate_limit_per_second');
    expect((await api.get(endpointPath(id))).json().rate_limit_per_second).toBe(5);
  });

  it('refuses a limit out of bounds through GraphQL too', async () => {
    const { apiKey } = await tenantWithKey(t.prisma);
    const api = apiAs(() => t, apiKey);
    const { id } = (await api.post('/api/v1/webhook-endpoints', { url: rx.url, events: ['invoice.created'] })).json();
    const res = await t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'x-api-key': apiKey },
      payload: {
        query: 'mutation($id: UUID!) { updateWebhookEndpoint(id: $id, input: { rateLimitPerSecond: 5000 }) { id } }',
        variables: { id },
      },
    });
    expect(res.json().errors[0].extensions.code).toBe('validation_failed');
    expect(res.json().errors[0].message).toContain('rate_limit_per_second');
    expect((await api.get(endpointPath(id))).json().rate_limit_per_second).toBeNull();
  });
});

describe('two worker processes sending to a rate-limited endpoint', () => {
  const prefix = `chs-pace-${randomUUID().slice(0, 8)}`;
  let workers: ReturnType<typeof startService>[] = [];

  beforeAll(async () => {
    const env = await outboundWorkerEnv(prefix);
    workers = [startService('worker', env, /worker started/), startService('worker', env, /worker started/)];
    await Promise.all(workers.map((w) => w.started));
  }, 180_000);

  afterAll(async () => {
    await Promise.all(workers.map((w) => stop(w.child)));
    for (const suffix of ['', '.retry', '.dead']) {
      for (const topic of ['inbound.events', 'outbound.deliveries']) {
        try {
          execFileSync('rabbitmqctl', ['-q', 'delete_queue', `${prefix}.${topic}${suffix}`]);
        } catch {
          // A queue this run never declared.
        }
      }
    }
  });

  /** Creates an endpoint at its own path of the receiver, with the limit given. */
  async function endpoint(apiKey: string, path: string, rate: number | null) {
    const res = await apiAs(() => t, apiKey).post('/api/v1/webhook-endpoints', {
      url: `${rx.url}/${path}`,
      events: ['invoice.created'],
      rate_limit_per_second: rate,
    });
    expect(res.statusCode).toBe(201);
    return res.json().id as string;
  }

  const arrivals = (path: string) => rx.hits.filter((h) => h.url.endsWith(`/${path}`)).map((h) => h.at);

  it('sends no more than 5 a second over a minute, and keeps sending at that rate', { timeout: 150_000 }, async () => {
    const rate = 5;
    const { tenantId, apiKey } = await tenantWithKey(t.prisma);
    const path = `paced-${randomUUID()}`;
    await endpoint(apiKey, path, rate);
    await inTransaction(t.pool, (sql) =>
      enqueueEvents(
        sql,
        Array.from({ length: 400 }, (_, i) => exampleEvent(tenantId, 'invoice.created', `paced:${path}:${i}`)),
      ),
    );
    await expect.poll(() => arrivals(path).length, { timeout: 30_000 }).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 61_000));
    const at = arrivals(path).sort((a, b) => a - b);
    const first = at[0]!;
    const minute = at.filter((x) => x < first + 60_000);
    // Every slot is 200 ms after the one before and nothing is sent ahead of its slot: a minute holds 300
    // slots and one at its edge. The window starts at the first arrival, which a new connection's handshake
    // can delay more than the ones after it; a second's worth of slots is left for that.
    expect(minute.length).toBeLessThanOrEqual(60 * rate + rate + 1);
    // The budget is used, not merely respected: most of the minute's slots carried a delivery.
    expect(minute.length).toBeGreaterThanOrEqual(0.8 * 60 * rate);
  });

  it('lets another endpoint’s deliveries through at once while a limited one has a backlog', { timeout: 60_000 }, async () => {
    const { tenantId, apiKey } = await tenantWithKey(t.prisma);
    const slow = `backlog-${randomUUID()}`;
    const free = `free-${randomUUID()}`;
    await endpoint(apiKey, slow, 1);
    await endpoint(apiKey, free, null);
    const started = Date.now();
    await inTransaction(t.pool, (sql) =>
      enqueueEvents(
        sql,
        Array.from({ length: 300 }, (_, i) => exampleEvent(tenantId, 'invoice.created', `backlog:${slow}:${i}`)),
      ),
    );
    // Every event goes to both endpoints: 300 for the free one, at once, while the limited one sends one a second.
    await expect.poll(() => arrivals(free).length, { timeout: 20_000, interval: 200 }).toBe(300);
    const elapsed = (Date.now() - started) / 1000;
    expect(arrivals(slow).length).toBeLessThanOrEqual(Math.ceil(elapsed) + 1);
    // The backlog waits in its rows, due at its slots, not in the queue or leased.
    const waiting = await t.pool.query<{ n: number; leased: number }>(
      `SELECT count(*)::int AS n, count(*) FILTER (WHERE locked_until > now())::int AS leased
       FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
       WHERE e.url LIKE $1 AND d.status = 'pending'`,
      [`%/${slow}`],
    );
    expect(waiting.rows[0]!.n).toBeGreaterThan(250);
    expect(waiting.rows[0]!.leased).toBeLessThanOrEqual(2);
  });
});
