// An endpoint's circuit breaker (docs/receiving-webhooks.md, "Circuit breaker") and its delivery figures
// ("Delivery figures"), with two worker processes sharing the breaker's state as README's process model runs
// them, short timings from the environment, and real HTTPS receivers of the test's own counting what arrives.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inTransaction } from '../../src/db/sql.ts';
import { runRetention } from '../../src/lifecycle/retention.ts';
import { enqueueEvents } from '../../src/outbox/events/enqueue.ts';
import { bucketBounds, bucketOf } from '../../src/outbox/sender/latency-histogram.ts';
import type { TestApp } from '../support/app.ts';
import { exampleEvent, tenantWithKey } from '../support/factories.ts';
import { apiAs, outboundWorkerEnv, type Receiver, withOutboundApp } from '../support/outbound.ts';
import { startReceiver } from '../support/receiver.ts';
import { startService, stop } from '../support/spawn.ts';
import { emptyBodiesBefore } from '../../src/ingest/inbox.ts';

let t: TestApp;
let rx: Receiver;
const tls = withOutboundApp((app, receiver) => {
  t = app;
  rx = receiver;
});

// The breaker's settings for this file: it opens after 5 attempts of which half failed, and waits 2 s before
// its first probe, then 4 s (the cap) before each next one.
const CIRCUIT = {
  CIRCUIT_FAILURE_RATE: '0.5',
  CIRCUIT_MIN_ATTEMPTS: '5',
  CIRCUIT_WINDOW_SECONDS: '60',
  CIRCUIT_PROBE_SECONDS: '2',
  CIRCUIT_PROBE_MAX_SECONDS: '4',
};
const PROBE_MAX_MS = 4000;

const prefix = `chs-circuit-${randomUUID().slice(0, 8)}`;
let workers: ReturnType<typeof startService>[] = [];
/** A receiver of its own for the endpoint that fails: the other endpoints' receiver keeps answering 200. */
let failing: Receiver;

beforeAll(async () => {
  failing = await startReceiver(tls);
  const env = await outboundWorkerEnv(prefix, CIRCUIT);
  workers = [startService('worker', env, /worker started/), startService('worker', env, /worker started/)];
  await Promise.all(workers.map((w) => w.started));
}, 180_000);

afterAll(async () => {
  failing?.close();
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

const endpointPath = (id: string) => `/api/v1/webhook-endpoints/${id}`;

async function endpoint(apiKey: string, url: string) {
  const res = await apiAs(() => t, apiKey).post('/api/v1/webhook-endpoints', { url, events: ['invoice.created'] });
  expect(res.statusCode).toBe(201);
  return res.json().id as string;
}

const send = (tenantId: string, n: number, tag: string) =>
  inTransaction(t.pool, (sql) =>
    enqueueEvents(
      sql,
      Array.from({ length: n }, (_, i) => exampleEvent(tenantId, 'invoice.created', `${tag}:${i}`)),
    ),
  );

const hitsAt = (r: Receiver, path: string) => r.hits.filter((h) => h.url.endsWith(`/${path}`));
const webhookId = (h: { headers: Record<string, unknown> }) => String(h.headers['x-webhook-id']);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('an endpoint whose receiver fails', () => {
  let tenantId: string;
  let apiKey: string;
  let id: string;
  const path = `failing-${randomUUID()}`;
  let other: { tenantId: string; apiKey: string; path: string; id: string };
  let deliveryIds: string[];

  beforeAll(async () => {
    ({ tenantId, apiKey } = await tenantWithKey(t.prisma));
    id = await endpoint(apiKey, `${failing.url}/${path}`);
    const b = await tenantWithKey(t.prisma);
    const otherPath = `flowing-${randomUUID()}`;
    other = { tenantId: b.tenantId, apiKey: b.apiKey, path: otherPath, id: await endpoint(b.apiKey, `${rx.url}/${otherPath}`) };
    failing.set('fail');
  });

  it('opens its breaker once half of at least 5 recent attempts failed, and says so in REST and GraphQL', { timeout: 60_000 }, async () => {
    const api = apiAs(() => t, apiKey);
    expect((await api.get(endpointPath(id))).json().circuit).toEqual({
      state: 'closed',
      opened_at: null,
      next_probe_at: null,
      failure_rate: null,
      recent_attempts: 0,
    });
    await send(tenantId, 20, `circuit:${path}`);
    let circuit: Record<string, any> = {};
    await expect
      .poll(async () => (circuit = (await api.get(endpointPath(id))).json().circuit).state, { timeout: 30_000, interval: 100 })
      .toBe('open');
    expect(circuit.recent_attempts).toBeGreaterThanOrEqual(5);
    expect(circuit.failure_rate).toBe(1);
    expect(Date.parse(circuit.opened_at)).toBeLessThan(Date.parse(circuit.next_probe_at));
    // The list shows it too, and so does GraphQL.
    const listed = (await api.get('/api/v1/webhook-endpoints')).json().data.find((e: { id: string }) => e.id === id);
    expect(['open', 'half_open']).toContain(listed.circuit.state);
    const gql = await t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'x-api-key': apiKey },
      payload: { query: `{ webhookEndpoint(id: "${id}") { circuit { state openedAt nextProbeAt failureRate recentAttempts } } }` },
    });
    const viaGraphql = gql.json().data.webhookEndpoint.circuit;
    expect(['open', 'half_open']).toContain(viaGraphql.state);
    expect(viaGraphql.openedAt).toBe(circuit.opened_at);
    // The tenant's endpoints hear of it, as they hear of an endpoint disabled.
    const told = await t.prisma.outboxEvent.findMany({ where: { tenantId, type: 'endpoint.circuit_opened' } });
    expect(told).toHaveLength(1);
    const opened = told[0]!.payload as { circuit: { opened_at: string; next_probe_at: string; failure_rate: number } };
    expect(told[0]!.payload).toMatchObject({ id, url: `${failing.url}/${path}`, circuit: { state: 'open', failure_rate: 1 } });
    // The first probe is due CIRCUIT_PROBE_SECONDS after it opened.
    expect(Date.parse(opened.circuit.next_probe_at) - Date.parse(opened.circuit.opened_at)).toBe(2000);
    expect(opened.circuit.opened_at).toBe(circuit.opened_at);
    deliveryIds = (await t.prisma.webhookDelivery.findMany({ where: { endpointId: id }, select: { id: true } })).map((d) => d.id);
    expect(deliveryIds).toHaveLength(20);
  });

  it('then gets only probes, one at a time and backing off, while other endpoints’ deliveries flow', { timeout: 60_000 }, async () => {
    // What was in flight when it opened has come back; from here on only probes arrive.
    await sleep(1000);
    const from = hitsAt(failing, path).length;
    // Another tenant's endpoint meanwhile: all of its deliveries, at once.
    const started = Date.now();
    await send(other.tenantId, 30, `flowing:${other.path}`);
    await expect.poll(() => hitsAt(rx, other.path).length, { timeout: 15_000, interval: 100 }).toBe(30);
    expect(Date.now() - started).toBeLessThan(10_000);
    // The deliveries held are not claimed, leased or queued while they wait: their rows do not change.
    const rows = () =>
      t.pool.query<{ id: string; updated_at: Date; held_at: Date | null; locked_until: Date | null }>(
        `SELECT id, updated_at, held_at, locked_until FROM webhook_deliveries WHERE endpoint_id = $1 AND status = 'pending' ORDER BY id`,
        [id],
      );
    const before = (await rows()).rows.filter((r) => r.held_at !== null);
    expect(before.length).toBeGreaterThan(0);
    expect(before.every((r) => r.locked_until === null)).toBe(true);
    const watchedFor = 9000;
    await sleep(watchedFor);
    const after = (await rows()).rows;
    const probes = hitsAt(failing, path).slice(from);
    // 2 s, then 4 s (the cap) between probes, each after the one before failed: at most one per 2 s.
    expect(probes.length).toBeGreaterThanOrEqual(1);
    expect(probes.length).toBeLessThanOrEqual(Math.ceil(watchedFor / 2000));
    for (let i = 1; i < probes.length; i++) expect(probes[i]!.at - probes[i - 1]!.at).toBeGreaterThanOrEqual(1500);
    // Of the rows held then, only the probes' moved.
    const probed = new Set(probes.map(webhookId));
    const moved = before.filter((was) => {
      const now = after.find((r) => r.id === was.id);
      return now && now.updated_at.getTime() !== was.updated_at.getTime() && !probed.has(was.id);
    });
    expect(moved).toEqual([]);
    // Nothing is dropped or failed because the breaker is open.
    expect(await t.prisma.webhookDelivery.count({ where: { endpointId: id, status: 'pending' } })).toBe(20);
    const { circuit } = (await apiAs(() => t, apiKey).get(endpointPath(id))).json();
    expect(['open', 'half_open']).toContain(circuit.state);
  });

  it('shows what is held, and how old the oldest waiting delivery is, in its figures', async () => {
    const stats = (await apiAs(() => t, apiKey).get(`${endpointPath(id)}/stats?window=hour`)).json();
    expect(stats.pending).toBe(20);
    expect(stats.held).toBeGreaterThan(0);
    expect(stats.succeeded).toBe(0);
    expect(stats.success_rate).toBe(0);
    // Every attempt that arrived, but for a probe arriving as this was read.
    expect(stats.attempts).toBeLessThanOrEqual(hitsAt(failing, path).length);
    expect(stats.attempts).toBeGreaterThanOrEqual(hitsAt(failing, path).length - 1);
    expect(stats.oldest_pending_age_seconds).toBeGreaterThan(5);
  });

  it('closes when a probe is delivered, and sends every held delivery once', { timeout: 60_000 }, async () => {
    const failedHits = hitsAt(failing, path).length;
    const okAt = Date.now();
    failing.set('ok');
    await expect
      .poll(() => t.prisma.webhookDelivery.count({ where: { endpointId: id, status: 'succeeded' } }), { timeout: 30_000, interval: 200 })
      .toBe(20);
    // The next probe came no later than the longest wait (and the pass's second) after the receiver was back.
    const delivered = hitsAt(failing, path).filter((h) => h.at >= okAt);
    expect(delivered[0]!.at - okAt).toBeLessThanOrEqual(PROBE_MAX_MS + 2500);
    // Each delivery once after it was answered 200, every one of them, and an id seen again only for a retry of the same.
    expect(delivered.map(webhookId).sort()).toEqual([...deliveryIds].sort());
    expect(new Set(hitsAt(failing, path).map(webhookId)).size).toBeLessThanOrEqual(20);
    expect(hitsAt(failing, path).every((h) => deliveryIds.includes(webhookId(h)))).toBe(true);
    expect(hitsAt(failing, path).length).toBe(failedHits + 20);
    const { circuit } = (await apiAs(() => t, apiKey).get(endpointPath(id))).json();
    expect(circuit).toMatchObject({ state: 'closed', opened_at: null, next_probe_at: null });
    expect(await t.prisma.outboxEvent.count({ where: { tenantId, type: 'endpoint.circuit_closed' } })).toBe(1);
    // Each delivery's log: its failed attempts, then one that succeeded.
    const attempts = await t.pool.query<{ delivery_id: string; ok: number }>(
      `SELECT a.delivery_id, count(*) FILTER (WHERE a.status_code = 200)::int AS ok
       FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.endpoint_id = $1 GROUP BY a.delivery_id`,
      [id],
    );
    expect(attempts.rows.every((r) => r.ok === 1)).toBe(true);
    // Its figures now: every attempt counted, the rate what the receiver saw.
    const stats = (await apiAs(() => t, apiKey).get(`${endpointPath(id)}/stats`)).json();
    expect(stats).toMatchObject({ window: 'day', attempts: failedHits + 20, succeeded: 20, failed: failedHits, pending: 0, held: 0 });
    expect(stats.success_rate).toBeCloseTo(20 / (failedHits + 20), 10);
    expect(stats.oldest_pending_age_seconds).toBeNull();
  });
});

describe('an endpoint’s delivery figures', () => {
  it('are the success rate and latency percentiles of what was attempted', { timeout: 60_000 }, async () => {
    const { tenantId, apiKey } = await tenantWithKey(t.prisma);
    const timed = await startReceiver(tls);
    try {
      const path = `timed-${randomUUID()}`;
      const id = await endpoint(apiKey, `${timed.url}/${path}`);
      // 16 answered at once, then 4 answered after 300 ms.
      timed.set('ok');
      await send(tenantId, 16, `quick:${path}`);
      await expect.poll(() => hitsAt(timed, path).length, { timeout: 15_000 }).toBe(16);
      timed.set('ok', 300);
      await send(tenantId, 4, `slow:${path}`);
      await expect
        .poll(() => t.prisma.webhookDelivery.count({ where: { endpointId: id, status: 'succeeded' } }), { timeout: 15_000 })
        .toBe(20);
      const stats = (await apiAs(() => t, apiKey).get(`${endpointPath(id)}/stats?window=hour`)).json();
      expect(stats).toMatchObject({ endpoint_id: id, window: 'hour', attempts: 20, succeeded: 20, failed: 0, success_rate: 1, pending: 0 });
      expect(stats.points).toHaveLength(12);
      expect(stats.points.reduce((a: number, p: { attempts: number }) => a + p.attempts, 0)).toBe(20);
      expect(Date.parse(stats.to) - Date.parse(stats.from)).toBeLessThanOrEqual(3600_000);
      // Against the exact durations recorded: each percentile lies within the 12 % bucket of the exact value.
      const durations = (
        await t.pool.query<{ duration_ms: number }>(
          `SELECT a.duration_ms FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.endpoint_id = $1`,
          [id],
        )
      ).rows
        .map((r) => r.duration_ms)
        .sort((a, b) => a - b);
      expect(durations).toHaveLength(20);
      for (const [q, key] of [
        [0.5, 'p50'],
        [0.95, 'p95'],
        [0.99, 'p99'],
      ] as const) {
        const exact = durations[Math.ceil(q * durations.length) - 1]!;
        const [lo, hi] = bucketBounds(bucketOf(exact));
        expect(stats.latency_ms[key], key).toBeGreaterThanOrEqual(Math.floor(lo * 10) / 10);
        expect(stats.latency_ms[key], key).toBeLessThanOrEqual(Math.ceil(hi * 10) / 10);
      }
      expect(stats.latency_ms.p50).toBeLessThan(300);
      expect(stats.latency_ms.p95).toBeGreaterThanOrEqual(300 * 0.88);
      // The same through GraphQL.
      const gql = await t.app.inject({
        method: 'POST',
        url: '/graphql',
        headers: { 'x-api-key': apiKey },
        payload: {
          query: 'query($id: UUID!) { webhookEndpointStats(endpointId: $id, window: hour) { attempts successRate latencyMs { p50 p95 } } }',
          variables: { id },
        },
      });
      expect(gql.json().data.webhookEndpointStats).toEqual({
        attempts: 20,
        successRate: 1,
        latencyMs: { p50: stats.latency_ms.p50, p95: stats.latency_ms.p95 },
      });
    } finally {
      timed.close();
    }
  });

  it('are empty for an endpoint with no attempts: zero counts, null rates and percentiles, every point present', async () => {
    const { apiKey } = await tenantWithKey(t.prisma);
    const id = await endpoint(apiKey, `${rx.url}/idle-${randomUUID()}`);
    const stats = (await apiAs(() => t, apiKey).get(`${endpointPath(id)}/stats`)).json();
    expect(stats).toMatchObject({
      attempts: 0,
      succeeded: 0,
      failed: 0,
      success_rate: null,
      latency_ms: { p50: null, p95: null, p99: null },
      pending: 0,
      held: 0,
      oldest_pending_age_seconds: null,
    });
    expect(stats.points).toHaveLength(24);
  });

  it('answer 404 as a problem for an unknown endpoint and for another tenant’s, and 400 for an unknown window', async () => {
    const mine = await tenantWithKey(t.prisma);
    const theirs = await tenantWithKey(t.prisma);
    const theirEndpoint = await endpoint(theirs.apiKey, `${rx.url}/theirs-${randomUUID()}`);
    const api = apiAs(() => t, mine.apiKey);
    for (const url of [`${endpointPath(randomUUID())}/stats`, `${endpointPath(theirEndpoint)}/stats`]) {
      const res = await api.get(url);
      expect(res.statusCode).toBe(404);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.json().code).toBe('not_found');
    }
    const gql = await t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'x-api-key': mine.apiKey },
      payload: { query: `{ webhookEndpointStats(endpointId: "${theirEndpoint}") { attempts } }` },
    });
    expect(gql.json().errors[0].extensions.code).toBe('not_found');
    const mineEndpoint = await endpoint(mine.apiKey, `${rx.url}/mine-${randomUUID()}`);
    const bad = await api.get(`${endpointPath(mineEndpoint)}/stats?window=week`);
    expect(bad.statusCode).toBe(400);
    expect(bad.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(bad.body).toContain('window');
  });
});

describe('the figures kept', () => {
  it('are removed by retention after two days, and with their endpoint', async () => {
    const { apiKey } = await tenantWithKey(t.prisma);
    const kept = await endpoint(apiKey, `${rx.url}/kept-${randomUUID()}`);
    const removed = await endpoint(apiKey, `${rx.url}/removed-${randomUUID()}`);
    const row = (id: string, minutesAgo: number) =>
      t.pool.query(
        `INSERT INTO webhook_endpoint_stats (endpoint_id, minute, attempts, failures, latency)
         VALUES ($1, date_trunc('minute', now() - make_interval(mins => $2)), 1, 0, $3)`,
        [id, minutesAgo, Array.from({ length: 88 }, (_, i) => (i === 10 ? 1 : 0))],
      );
    await row(kept, 10);
    await row(kept, 3 * 24 * 60);
    await row(removed, 10);
    const minutes = async (id: string) =>
      (await t.pool.query('SELECT count(*)::int AS n FROM webhook_endpoint_stats WHERE endpoint_id = $1', [id])).rows[0].n as number;
    const report = await runRetention(t.pool, { batchSize: 1000, maxBatches: 10, emptyInboundBodies: emptyBodiesBefore });
    expect(report.find((r) => r.kind === 'delivery_figures')!.processed).toBeGreaterThanOrEqual(1);
    expect(await minutes(kept)).toBe(1);
    expect((await apiAs(() => t, apiKey).del(endpointPath(removed))).statusCode).toBe(204);
    expect(await minutes(removed)).toBe(0);
    // Its breaker went with it too (by the cascade).
    expect((await t.pool.query('SELECT 1 FROM webhook_endpoint_circuits WHERE endpoint_id = $1', [removed])).rows).toEqual([]);
  });
});

describe('an open breaker with nothing to probe with', () => {
  it('is looked at again a first wait later, rather than first in every pass', async () => {
    const { apiKey } = await tenantWithKey(t.prisma);
    const id = await endpoint(apiKey, `${rx.url}/idle-open-${randomUUID()}`);
    // Open, its probe due, and not one delivery pending.
    await t.pool.query(
      `UPDATE webhook_endpoint_circuits SET state = 'open', opened_at = now() - interval '1 minute', openings = 1,
         next_probe_at = now() - interval '10 seconds' WHERE endpoint_id = $1`,
      [id],
    );
    const circuit = async () =>
      (await t.pool.query('SELECT state, next_probe_at > now() AS later FROM webhook_endpoint_circuits WHERE endpoint_id = $1', [id]))
        .rows[0];
    await expect.poll(circuit, { timeout: 10_000, interval: 200 }).toEqual({ state: 'open', later: true });
  });
});
