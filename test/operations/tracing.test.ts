import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operator } from '../../src/services/audit.ts';
import { createInboundSecretStore } from '../../src/services/integrations.ts';
import { createTestApp, type TestApp, testSecretBox } from '../support/app.ts';
import { fileDatabaseUrl } from '../support/database.ts';
import { tenantWithKey } from '../support/factories.ts';
import { isBelow, type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../support/otlp-receiver.ts';
import * as p from '../support/providers.ts';
import { type Receiver } from '../support/outbound.ts';
import { startReceiver, testCertificate } from '../support/receiver.ts';
import { freePort, ROOT, startCompiledService, startService, stop } from '../support/spawn.ts';

// The service runs as operators run it (src/main.ts, its own process) with tracing on, exporting over
// OTLP/HTTP to a receiver in this process; RabbitMQ under a prefix of this run's own carries its messages.
const AMQP_URL = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
const prefix = `chs-trace-${randomUUID().slice(0, 8)}`;
const SERVER = 2;
const CLIENT = 3;
const CONSUMER = 5;

let t: TestApp;
let otlp: OtlpReceiver;
let rx: Receiver;
let service: ReturnType<typeof startService>;
let base: string;

beforeAll(async () => {
  // Only to set tenants up; this process itself runs no worker and traces nothing.
  t = await createTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' }, ca: testCertificate().cert });
  otlp = await startOtlpReceiver();
  rx = await startReceiver(testCertificate());
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  service = startService('all', { ...(await serviceEnv()), PORT: String(port) }, /worker started/);
  await service.started;
}, 120_000);

/** The service's settings: tracing on, exporting to the receiver of this file. */
const serviceEnv = async () => ({
  DATABASE_URL: await fileDatabaseUrl(),
  HOST: '127.0.0.1',
  AMQP_URL,
  AMQP_PREFIX: prefix,
  REDIS_URL: '',
  SEED_DEMO: 'never',
  ENCRYPTION_KEY: `test:${Buffer.alloc(32, 7).toString('base64')}`,
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  NODE_EXTRA_CA_CERTS: join(import.meta.dirname, '..', '..', 'test-output', 'tls', 'cert.pem'),
  LOG_LEVEL: 'info',
  OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
  OTEL_TRACES_EXPORTER: '',
  // The SDK's batch processor, read from its own variable: spans leave within a fifth of a second.
  OTEL_BSP_SCHEDULE_DELAY: '200',
});

afterAll(async () => {
  if (service) await stop(service.child);
  rx?.close();
  await otlp?.close();
  await t?.close();
  for (const topic of ['inbound.events', 'outbound.deliveries'])
    // A queue the run never declared is not there to delete: nothing to report.
    for (const suffix of ['', '.retry', '.dead'])
      spawnSync('rabbitmqctl', ['-q', 'delete_queue', `${prefix}.${topic}${suffix}`], { stdio: 'ignore' });
});

async function stripeTenantWithEndpoint() {
  const { tenantId, apiKey } = await tenantWithKey(t.prisma);
  const { secret } = await createInboundSecretStore(t.prisma, testSecretBox(), { cacheMs: 0 }).put(
    { tenantId, provider: 'stripe' },
    operator(tenantId),
  );
  const endpoint = await t.app.inject({
    method: 'POST',
    url: '/api/v1/webhook-endpoints',
    headers: { 'x-api-key': apiKey },
    payload: { url: rx.url, events: ['invoice.created'] },
  });
  expect(endpoint.statusCode).toBe(201);
  return { tenantId, apiKey, secret };
}

const attr = (s: ReceivedSpan, key: string) => s.attributes[key];

describe('a Stripe event traced from its arrival to its delivery', () => {
  it('one trace holds the inbound request, the worker applying the event and the attempt delivering what it emitted', async () => {
    const { tenantId, secret } = await stripeTenantWithEndpoint();
    const invoice = `in_${randomUUID().slice(0, 8)}`;
    const signed = p.stripeSdkSigned(secret, JSON.stringify(p.stripeEvent('invoice.created', p.stripeInvoice(invoice, 'cus_trace', 4200))));
    const res = await fetch(`${base}/api/v1/webhooks/in/stripe/${tenantId}`, {
      method: 'POST',
      headers: signed.headers,
      body: signed.body,
    });
    expect(res.status).toBe(202);
    const { id: inboxEventId } = (await res.json()) as { id: string };

    await expect.poll(() => rx.hits.some((h) => h.json?.tenant_id === tenantId), { timeout: 20_000 }).toBe(true);
    // The attempt's span ends once the attempt is recorded; the batch processor exports it a moment later.
    let deliver: ReceivedSpan | undefined;
    await expect
      .poll(() => (deliver = otlp.spans.find((s) => s.name === 'webhook.deliver' && attr(s, 'tenant.id') === tenantId)), {
        timeout: 20_000,
      })
      .toBeTruthy();
    const trace = () => otlp.trace(deliver!.traceId);
    await expect.poll(() => trace().some((s) => s.kind === SERVER && s.scope.includes('http')), { timeout: 10_000 }).toBe(true);
    const spans = trace();

    const server = spans.find((s) => s.kind === SERVER && s.scope.includes('http'))!;
    expect(attr(server, 'url.path')).toBe(`/api/v1/webhooks/in/stripe/${tenantId}`);
    expect(server.parentSpanId).toBe('');
    const consumed = spans.find((s) => s.kind === CONSUMER && s.name === 'inbound.events process');
    expect(consumed, 'the RabbitMQ message carried the trace to the worker').toBeTruthy();
    const applied = spans.find((s) => s.name === 'inbox.apply' && attr(s, 'chs.inbox_event.id') === inboxEventId)!;
    expect(applied).toBeTruthy();
    expect(attr(applied, 'tenant.id')).toBe(tenantId);
    expect(attr(applied, 'chs.outcome')).toBe('processed');
    expect(isBelow(spans, applied, server)).toBe(true);
    expect(deliver!.kind).toBe(CLIENT);
    expect(attr(deliver!, 'http.response.status_code')).toBe(200);
    expect(attr(deliver!, 'chs.event_type')).toBe('invoice.created');
    expect(isBelow(spans, deliver!, applied)).toBe(true);
    // The statements that stored and applied the event are in the same trace.
    expect(spans.some((s) => s.scope.includes('pg') && isBelow(spans, s, applied))).toBe(true);
  });

  it('the batch applying an event links to the trace the event arrived in', async () => {
    const { tenantId, secret } = await stripeTenantWithEndpoint();
    const signed = p.stripeSdkSigned(
      secret,
      JSON.stringify(p.stripeEvent('invoice.created', p.stripeInvoice('in_linked', 'cus_link', 100))),
    );
    const res = await fetch(`${base}/api/v1/webhooks/in/stripe/${tenantId}`, {
      method: 'POST',
      headers: signed.headers,
      body: signed.body,
    });
    expect(res.status).toBe(202);
    const { id } = (await res.json()) as { id: string };
    let applied: ReceivedSpan | undefined;
    await expect.poll(() => (applied = otlp.spans.find((s) => attr(s, 'chs.inbox_event.id') === id)), { timeout: 20_000 }).toBeTruthy();
    const batch = otlp.spans.find((s) => s.name === 'inbox.apply_batch' && s.links.some((l) => l.traceId === applied!.traceId));
    expect(batch).toBeTruthy();
    expect(applied!.links.map((l) => l.spanId)).toContain(batch!.spanId);
  });

  it('the receiver is sent no trace headers', async () => {
    const { tenantId, secret } = await stripeTenantWithEndpoint();
    const signed = p.stripeSdkSigned(
      secret,
      JSON.stringify(p.stripeEvent('invoice.created', p.stripeInvoice('in_quiet', 'cus_quiet', 100))),
    );
    expect(
      (await fetch(`${base}/api/v1/webhooks/in/stripe/${tenantId}`, { method: 'POST', headers: signed.headers, body: signed.body })).status,
    ).toBe(202);
    await expect.poll(() => rx.hits.find((h) => h.json?.tenant_id === tenantId), { timeout: 20_000 }).toBeTruthy();
    const hit = rx.hits.find((h) => h.json?.tenant_id === tenantId)!;
    expect(hit.headers.traceparent).toBeUndefined();
    expect(hit.headers.tracestate).toBeUndefined();
  });
});

describe('API requests traced', () => {
  it('a GraphQL operation has a span with its name and tenant, and the database statements it made below it', async () => {
    const { tenantId, apiKey } = await stripeTenantWithEndpoint();
    const res = await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
      body: JSON.stringify({ query: 'query TraceEndpoints { webhookEndpoints { id url } }' }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { data: { webhookEndpoints: unknown[] } }).data.webhookEndpoints).toHaveLength(1);
    let operation: ReceivedSpan | undefined;
    await expect
      .poll(() => (operation = otlp.spans.find((s) => s.name === 'query TraceEndpoints' && attr(s, 'tenant.id') === tenantId)), {
        timeout: 10_000,
      })
      .toBeTruthy();
    expect(attr(operation!, 'graphql.operation.name')).toBe('TraceEndpoints');
    expect(attr(operation!, 'graphql.operation.type')).toBe('query');
    await expect.poll(() => otlp.trace(operation!.traceId).some((s) => s.kind === SERVER), { timeout: 10_000 }).toBe(true);
    const spans = otlp.trace(operation!.traceId);
    const statements = spans.filter((s) => s.scope.includes('pg') && isBelow(spans, s, operation!));
    expect(statements.some((s) => String(attr(s, 'db.query.text')).includes('webhook_endpoints'))).toBe(true);
  });

  it('a REST request carries its operation and tenant on its Fastify request span', async () => {
    const { tenantId, apiKey } = await stripeTenantWithEndpoint();
    const res = await fetch(`${base}/api/v1/webhook-endpoints`, { headers: { 'x-api-key': apiKey } });
    expect(res.status).toBe(200);
    let span: ReceivedSpan | undefined;
    await expect
      .poll(
        () => (span = otlp.spans.find((s) => attr(s, 'chs.operation') === 'listWebhookEndpoints' && attr(s, 'tenant.id') === tenantId)),
        {
          timeout: 10_000,
        },
      )
      .toBeTruthy();
    expect([span!.scope, span!.name]).toEqual(['@fastify/otel', 'request']);
  });

  it("writes the trace's ids into the log lines of a request", async () => {
    const { apiKey } = await stripeTenantWithEndpoint();
    const res = await fetch(`${base}/api/v1/webhook-endpoints?limit=7`, { headers: { 'x-api-key': apiKey } });
    expect(res.status).toBe(200);
    let logged: { trace_id?: string; span_id?: string } | undefined;
    await expect
      .poll(
        () =>
          (logged = service
            .output()
            .split('\n')
            .filter((l) => l.startsWith('{'))
            .map((l) => JSON.parse(l) as { msg?: string; req?: { url?: string }; trace_id?: string; span_id?: string })
            .find((l) => l.msg === 'incoming request' && l.req?.url === '/api/v1/webhook-endpoints?limit=7')),
      )
      .toBeTruthy();
    expect(logged!.trace_id).toMatch(/^[0-9a-f]{32}$/);
    expect(logged!.span_id).toMatch(/^[0-9a-f]{16}$/);
    await expect.poll(() => otlp.trace(logged!.trace_id!).some((s) => s.kind === SERVER), { timeout: 10_000 }).toBe(true);
  });
});

describe('the compiled build', () => {
  it('traces as the service run from source does, pg statements included', async () => {
    // `npm run build`'s compiler step; the dashboard is not needed to answer the API.
    await promisify(execFile)(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], {
      cwd: ROOT,
    });
    const { tenantId, apiKey } = await stripeTenantWithEndpoint();
    const port = await freePort();
    // The API alone: no second worker beside the one of the service above.
    const compiled = startCompiledService(
      'api',
      { ...(await serviceEnv()), PORT: String(port), OTEL_SERVICE_NAME: 'chs-compiled' },
      /listening on/,
    );
    await compiled.started;
    try {
      const res = await fetch(`http://127.0.0.1:${port}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
        body: JSON.stringify({ query: 'query CompiledEndpoints { webhookEndpoints { id } }' }),
      });
      expect(res.status).toBe(200);
      let operation: ReceivedSpan | undefined;
      await expect
        .poll(() => (operation = otlp.spans.find((s) => s.name === 'query CompiledEndpoints' && attr(s, 'tenant.id') === tenantId)), {
          timeout: 10_000,
        })
        .toBeTruthy();
      await expect
        .poll(
          () => {
            const spans = otlp.trace(operation!.traceId);
            return [
              spans.some((s) => s.kind === SERVER && s.scope.includes('http')),
              spans.some((s) => s.scope.includes('pg') && isBelow(spans, s, operation!)),
            ];
          },
          { timeout: 10_000 },
        )
        .toEqual([true, true]);
    } finally {
      await stop(compiled.child);
    }
  }, 180_000);
});
