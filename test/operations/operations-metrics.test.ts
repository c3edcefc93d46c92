// The counters and histograms of docs/operations.md, read from /metrics as Prometheus scrapes it, and
// checked by Prometheus's own promtool (Debian's `prometheus` package).
import { spawnSync } from 'node:child_process';
import net, { type AddressInfo, type Socket } from 'node:net';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operator } from '../../src/services/audit.ts';
import { createInboundSecretStore } from '../../src/services/integrations.ts';
import { createTestApp, type TestApp, testSecretBox } from '../support/app.ts';
import { inTransaction } from '../../src/db/sql.ts';
import { enqueueEvents } from '../../src/outbox/events/enqueue.ts';
import { customer, exampleEvent, signals, tenantWithKey } from '../support/factories.ts';
import * as p from '../support/providers.ts';
import { startReceiver, testCertificate } from '../support/receiver.ts';
import { ROOT } from '../support/spawn.ts';

const METRICS_TOKEN = 'metrics-token-0123456789abcdef';
const scrape = { authorization: `Bearer ${METRICS_TOKEN}` };
const PROMTOOL = ['/usr/bin/promtool', '/usr/local/bin/promtool'].find((f) => existsSync(f));
if (!PROMTOOL) {
  console.warn(
    "\n*** promtool is not installed: the promtool checks of test/operations/operations-metrics.test.ts are SKIPPED. Install Debian's `prometheus` package (CI does). ***\n",
  );
}

const tls = testCertificate();
let t: TestApp;
let worker: { close(): Promise<void> };
let rx: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  t = await createTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', METRICS_TOKEN }, ca: tls.cert, deliveryTimeoutMs: 1500 });
  worker = t.startWorker();
  rx = await startReceiver(tls);
});
afterAll(async () => {
  rx.close();
  await worker.close();
  await t.close();
});

const metricsText = async () => {
  const res = await t.app.inject({ method: 'GET', url: '/metrics', headers: scrape });
  expect(res.statusCode).toBe(200);
  return res.body;
};

/** The value of one sample (its labels in any order), 0 when the series is not there yet. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = (m[2] ?? '').split(',').filter(Boolean);
    if (wanted.every((w) => have.includes(w)) && have.length === wanted.length) return Number(m[3]);
  }
  return 0;
}

const value = async (name: string, labels: Record<string, string> = {}) => sample(await metricsText(), name, labels);

async function stripeTenant() {
  const { tenantId, apiKey } = await tenantWithKey(t.prisma);
  const { secret } = await createInboundSecretStore(t.prisma, testSecretBox(), { cacheMs: 0 }).put(
    { tenantId, provider: 'stripe' },
    operator(tenantId),
  );
  return { tenantId, apiKey, secret };
}

const postStripe = (tenantId: string, signed: p.Signed) =>
  t.app.inject({ method: 'POST', url: `/api/v1/webhooks/in/stripe/${tenantId}`, headers: signed.headers, payload: signed.body });

describe('inbound events', () => {
  it('counts a Stripe delivery signed by Stripe’s library as accepted, and its replay as a duplicate', async () => {
    const { tenantId, secret } = await stripeTenant();
    const accepted = { provider: 'stripe', outcome: 'accepted', reason: 'none' };
    const duplicate = { provider: 'stripe', outcome: 'duplicate', reason: 'none' };
    const before = await metricsText();
    const signed = p.stripeSdkSigned(secret, JSON.stringify(p.stripeEvent('customer.created', p.stripeCustomer('cus_metrics_1'))));
    expect((await postStripe(tenantId, signed)).statusCode).toBe(202);
    expect((await postStripe(tenantId, signed)).statusCode).toBe(200);
    const after = await metricsText();
    expect(sample(after, 'chs_inbound_events_total', accepted) - sample(before, 'chs_inbound_events_total', accepted)).toBe(1);
    expect(sample(after, 'chs_inbound_events_total', duplicate) - sample(before, 'chs_inbound_events_total', duplicate)).toBe(1);
  });

  it('counts a refused Stripe delivery with the reason it was refused', async () => {
    const { tenantId } = await stripeTenant();
    const refused = { provider: 'stripe', outcome: 'refused', reason: 'invalid_signature' };
    const before = await value('chs_inbound_events_total', refused);
    const forged = p.stripeSdkSigned(
      'whsec_not_the_tenants_secret',
      JSON.stringify(p.stripeEvent('customer.created', p.stripeCustomer('cus_x'))),
    );
    expect((await postStripe(tenantId, forged)).statusCode).toBe(401);
    expect((await value('chs_inbound_events_total', refused)) - before).toBe(1);
  });

  it('labels requests for a provider the service does not know as unknown, not by the name sent', async () => {
    const { tenantId } = await stripeTenant();
    await t.app.inject({ method: 'POST', url: `/api/v1/webhooks/in/made-up-${Date.now()}/${tenantId}`, payload: {} });
    const text = await metricsText();
    expect(sample(text, 'chs_inbound_events_total', { provider: 'unknown', outcome: 'refused', reason: 'not_found' })).toBeGreaterThan(0);
    expect(text).not.toMatch(/provider="made-up-/);
  });

  it('counts the events the worker applied', async () => {
    const { tenantId, secret } = await stripeTenant();
    const before = await value('chs_inbound_applied_total', { outcome: 'processed' });
    const signed = p.stripeSdkSigned(secret, JSON.stringify(p.stripeEvent('customer.created', p.stripeCustomer('cus_metrics_applied'))));
    expect((await postStripe(tenantId, signed)).statusCode).toBe(202);
    await expect.poll(() => value('chs_inbound_applied_total', { outcome: 'processed' }), { timeout: 10_000 }).toBeGreaterThan(before);
  });
});

describe('outbound deliveries', () => {
  const attempts = (outcome: string, statusClass: string) =>
    value('chs_webhook_delivery_attempts_total', { outcome, status_class: statusClass });

  it('counts a delivery the receiver took by outcome and status class, with its duration', async () => {
    const { apiKey } = await stripeTenant();
    rx.set('ok');
    const before = await attempts('succeeded', '2xx');
    const timedBefore = await value('chs_webhook_delivery_duration_seconds_count', { outcome: 'succeeded' });
    const ep = (
      await t.app.inject({
        method: 'POST',
        url: '/api/v1/webhook-endpoints',
        headers: { 'x-api-key': apiKey },
        payload: { url: rx.url, events: ['alert.created'] },
      })
    ).json();
    expect(
      (
        await t.app.inject({
          method: 'POST',
          url: `/api/v1/webhook-endpoints/${ep.id}/test`,
          headers: { 'x-api-key': apiKey },
          payload: {},
        })
      ).statusCode,
    ).toBeLessThan(300);
    await expect.poll(() => attempts('succeeded', '2xx'), { timeout: 10_000 }).toBe(before + 1);
    expect(await value('chs_webhook_delivery_duration_seconds_count', { outcome: 'succeeded' })).toBe(timedBefore + 1);
  });

  it('counts an answer of 500 as a failed 5xx attempt', async () => {
    const { apiKey } = await stripeTenant();
    const post = (url: string, payload: object) => t.app.inject({ method: 'POST', url, headers: { 'x-api-key': apiKey }, payload });
    const ep = (await post('/api/v1/webhook-endpoints', { url: rx.url, events: ['alert.created'] })).json();
    rx.set('fail');
    try {
      const before = await attempts('failed', '5xx');
      expect((await post(`/api/v1/webhook-endpoints/${ep.id}/test`, {})).statusCode).toBeLessThan(300);
      await expect.poll(() => attempts('failed', '5xx'), { timeout: 10_000 }).toBe(before + 1);
    } finally {
      rx.set('ok');
    }
  });

  it('counts a failed delivery of an event that will be tried again as retrying, and its retry as scheduled', async () => {
    const { tenantId, apiKey, secret } = await stripeTenant();
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/v1/webhook-endpoints',
      headers: { 'x-api-key': apiKey },
      payload: { url: rx.url, events: ['customer.created'] },
    });
    expect(created.statusCode).toBe(201);
    rx.set('fail');
    try {
      const before = await attempts('retrying', '5xx');
      const retriesBefore = await value('chs_webhook_delivery_retries_scheduled_total');
      const signed = p.stripeSdkSigned(secret, JSON.stringify(p.stripeEvent('customer.created', p.stripeCustomer('cus_metrics_retry'))));
      expect((await postStripe(tenantId, signed)).statusCode).toBe(202);
      await expect.poll(() => attempts('retrying', '5xx'), { timeout: 15_000 }).toBe(before + 1);
      expect(await value('chs_webhook_delivery_retries_scheduled_total')).toBe(retriesBefore + 1);
    } finally {
      rx.set('ok');
    }
  });

  it('counts an endpoint disabled for answering 410 Gone to an event’s delivery', async () => {
    const { tenantId, apiKey, secret } = await stripeTenant();
    const ep = (
      await t.app.inject({
        method: 'POST',
        url: '/api/v1/webhook-endpoints',
        headers: { 'x-api-key': apiKey },
        payload: { url: rx.url, events: ['customer.created'] },
      })
    ).json();
    expect(ep.id).toBeTruthy();
    rx.set('gone');
    try {
      const before = await value('chs_webhook_endpoints_disabled_total', { reason: 'gone' });
      const signed = p.stripeSdkSigned(secret, JSON.stringify(p.stripeEvent('customer.created', p.stripeCustomer('cus_metrics_gone'))));
      expect((await postStripe(tenantId, signed)).statusCode).toBe(202);
      await expect.poll(() => value('chs_webhook_endpoints_disabled_total', { reason: 'gone' }), { timeout: 15_000 }).toBe(before + 1);
    } finally {
      rx.set('ok');
    }
  });
});

describe('circuit breakers', () => {
  it('counts an endpoint’s breaker opening, and shows open breakers, held deliveries and the oldest pending age as gauges', async () => {
    const { tenantId, apiKey } = await tenantWithKey(t.prisma);
    const ep = (
      await t.app.inject({
        method: 'POST',
        url: '/api/v1/webhook-endpoints',
        headers: { 'x-api-key': apiKey },
        payload: { url: `${rx.url}/breaker`, events: ['invoice.created'] },
      })
    ).json();
    rx.set('fail');
    try {
      const before = await value('chs_webhook_circuit_openings_total', { reason: 'threshold' });
      // Twelve failures of twelve attempts: past the default threshold (half of at least ten).
      await inTransaction(t.pool, (sql) =>
        enqueueEvents(
          sql,
          Array.from({ length: 12 }, (_, i) => exampleEvent(tenantId, 'invoice.created', `breaker-metrics:${ep.id}:${i}`)),
        ),
      );
      await expect.poll(() => value('chs_webhook_circuit_openings_total', { reason: 'threshold' }), { timeout: 15_000 }).toBe(before + 1);
      const text = await metricsText();
      expect(sample(text, 'chs_webhook_circuits_open')).toBeGreaterThanOrEqual(1);
      expect(sample(text, 'chs_deliveries_oldest_pending_seconds')).toBeGreaterThan(0);
      expect(text).toMatch(/^chs_deliveries_held \d+$/m);
      // No series names the endpoint.
      expect(text).not.toContain(ep.id);
    } finally {
      rx.set('ok');
      // Closed again, what it held released, so that the file's other deliveries see an idle service.
      await t.app.inject({
        method: 'PATCH',
        url: `/api/v1/webhook-endpoints/${ep.id}`,
        headers: { 'x-api-key': apiKey },
        payload: { enabled: true },
      });
    }
  });
});

describe('GraphQL operations', () => {
  it('counts operations over /graphql and the REST facade by their name and outcome', async () => {
    const { apiKey } = await stripeTenant();
    const ok = { operation: 'MetricsProbe', type: 'query', outcome: 'ok' };
    const before = await value('chs_graphql_operations_total', ok);
    const res = await t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
      payload: { query: 'query MetricsProbe { customers(first: 1) { totalCount } }' },
    });
    expect(res.json().errors).toBeUndefined();
    expect((await value('chs_graphql_operations_total', ok)) - before).toBe(1);
    // GET /api/v1/customers runs the ListCustomers operation in-process.
    const listed = { operation: 'ListCustomers', type: 'query', outcome: 'ok' };
    const listedBefore = await value('chs_graphql_operations_total', listed);
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/customers', headers: { 'x-api-key': apiKey } })).statusCode).toBe(200);
    expect((await value('chs_graphql_operations_total', listed)) - listedBefore).toBe(1);
  });

  it('counts an operation that answers errors as an error', async () => {
    const { apiKey } = await stripeTenant();
    const failed = { operation: 'MetricsMissing', type: 'query', outcome: 'error' };
    const before = await value('chs_graphql_operations_total', failed);
    await t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
      payload: { query: 'query MetricsMissing { customer(id: "00000000-0000-4000-8000-000000000000") { id } }' },
    });
    expect((await value('chs_graphql_operations_total', failed)) - before).toBe(1);
  });
});

describe('scoring', () => {
  it('times the scoring passes that recomputed customers, and counts the customers', async () => {
    const { tenantId } = await stripeTenant();
    const before = await value('chs_scoring_pass_duration_seconds_count');
    const computedBefore = await value('chs_scoring_customers_computed_total');
    const c = await customer(t.prisma, tenantId);
    await signals(t.prisma, tenantId, c.id, [{ kind: 'billing.payment_failed', daysAgo: 2 }]);
    // The worker's own pass or this one: whichever recomputes the new customer is timed.
    await expect
      .poll(
        async () => {
          await t.score();
          return value('chs_scoring_customers_computed_total');
        },
        { timeout: 15_000 },
      )
      .toBeGreaterThan(computedBefore);
    expect(await value('chs_scoring_pass_duration_seconds_count')).toBeGreaterThan(before);
  });
});

describe('churn training', () => {
  it('times a training refused for too few labels as insufficient_labels', async () => {
    const { apiKey } = await stripeTenant();
    const timed = { outcome: 'insufficient_labels' };
    const before = await value('chs_churn_training_duration_seconds_count', timed);
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/churn-model/train', headers: { 'x-api-key': apiKey }, payload: {} });
    expect(res.statusCode).toBe(422);
    expect(await value('chs_churn_training_duration_seconds_count', timed)).toBe(before + 1);
  });
});

describe('admission', () => {
  const sockets: Socket[] = [];
  let held: TestApp | undefined;
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await held?.close();
  });

  it('counts a request refused at the inbound budget by its reason, and as a refused inbound event', async () => {
    held = await createTestApp({ env: { METRICS_TOKEN, MAX_IN_FLIGHT_INBOUND: '2' } });
    await held.app.listen({ host: '127.0.0.1', port: 0 });
    const port = (held.app.server.address() as AddressInfo).port;
    const { tenantId } = await tenantWithKey(held.prisma);
    await createInboundSecretStore(held.prisma, testSecretBox(), { cacheMs: 0 }).put({ tenantId, provider: 'stripe' }, operator(tenantId));
    const path = `/api/v1/webhooks/in/stripe/${tenantId}`;
    const scrapeHeld = async () => (await held!.app.inject({ method: 'GET', url: '/metrics', headers: scrape })).body;
    const before = await scrapeHeld();
    // Two requests hold the budget: their bodies never finish arriving.
    for (let i = 0; i < 2; i++) {
      const socket = net.connect(port, '127.0.0.1', () =>
        socket.write(
          `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: 4096\r\nstripe-signature: t=${p.nowS()},v1=00\r\n\r\n{"id":`,
        ),
      );
      socket.on('error', () => undefined);
      sockets.push(socket);
    }
    await expect
      .poll(
        async () =>
          (await fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }))
            .status,
        {
          timeout: 10_000,
        },
      )
      .toBe(503);
    const after = await scrapeHeld();
    const refusals = (text: string) => sample(text, 'chs_admission_refusals_total', { reason: 'inbound_capacity' });
    expect(refusals(after) - refusals(before)).toBeGreaterThanOrEqual(1);
    const refused = { provider: 'stripe', outcome: 'refused', reason: 'status_503' };
    expect(sample(after, 'chs_inbound_events_total', refused) - sample(before, 'chs_inbound_events_total', refused)).toBe(
      refusals(after) - refusals(before),
    );
  });
});

describe.skipIf(!PROMTOOL)('promtool', () => {
  it('finds no problem in the service’s own series on /metrics (promtool check metrics)', async () => {
    // A little of everything first, so that every family has samples.
    const { tenantId, secret } = await stripeTenant();
    await postStripe(tenantId, p.stripeSdkSigned(secret, JSON.stringify(p.stripeEvent('customer.created', p.stripeCustomer('cus_lint')))));
    const text = await metricsText();
    const own = text
      .split('\n')
      .filter((l) => /^(# (HELP|TYPE) )?chs_/.test(l))
      .join('\n');
    expect(own).toContain('chs_inbound_events_total');
    const run = spawnSync(PROMTOOL!, ['check', 'metrics'], { input: `${own}\n`, encoding: 'utf8' });
    expect(run.stdout + run.stderr).toBe('');
    expect(run.status).toBe(0);
  });

  it('parses every query of the Grafana dashboard (as recording rules, with promtool check rules)', () => {
    const dashboard = JSON.parse(readFileSync(join(ROOT, 'ops/grafana/chs-overview.json'), 'utf8')) as {
      panels: { targets: { expr: string }[] }[];
    };
    const exprs = dashboard.panels.flatMap((panel) => panel.targets.map((target) => target.expr));
    expect(exprs.length).toBeGreaterThan(10);
    const rules = { groups: [{ name: 'dashboard', rules: exprs.map((expr, i) => ({ record: `dashboard:query_${i}`, expr })) }] };
    const dir = mkdtempSync(join(tmpdir(), 'chs-dashboard-'));
    const file = join(dir, 'rules.json');
    writeFileSync(file, JSON.stringify(rules));
    try {
      const run = spawnSync(PROMTOOL!, ['check', 'rules', file], { encoding: 'utf8' });
      expect(run.stdout + run.stderr).toContain(`SUCCESS: ${exprs.length} rules found`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('accepts the alerting rules (promtool check rules)', () => {
    const run = spawnSync(PROMTOOL!, ['check', 'rules', join(ROOT, 'ops/prometheus/chs-alerts.yml')], { encoding: 'utf8' });
    expect(run.stdout + run.stderr).toMatch(/SUCCESS: \d+ rules found/);
    expect(run.status).toBe(0);
  });
});
