import http from 'node:http';
import https from 'node:https';
import { createRequire } from 'node:module';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { startTracing } from '../../src/runtime/tracing.ts';
import { operator } from '../../src/services/audit.ts';
import { createInboundSecretStore } from '../../src/services/integrations.ts';
import { createTestApp, type TestApp, testSecretBox } from '../support/app.ts';
import { tenantWithKey } from '../support/factories.ts';
import { type OtlpReceiver, startOtlpReceiver } from '../support/otlp-receiver.ts';
import * as p from '../support/providers.ts';

// This process starts as src/main.ts does, with tracing off: an OTLP endpoint is named but the exporter is `none`.
let otlp: OtlpReceiver;
let t: TestApp;
beforeAll(async () => {
  otlp = await startOtlpReceiver();
  const config = loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_TRACES_EXPORTER: 'none' });
  expect(config.tracing.enabled).toBe(false);
  expect(await startTracing(config.tracing)).toBeNull();
  t = await createTestApp();
});
afterAll(async () => {
  await t?.close();
  await otlp?.close();
});

/** Whether a function was wrapped by an OpenTelemetry instrumentation (its shimmer marks the wrapper). */
const wrapped = (f: unknown) => typeof f === 'function' && ('__original' in f || '__wrapped' in f);

describe('tracing off', () => {
  it('is off unless an endpoint or an exporter is named', () => {
    expect(loadConfig({}).tracing.enabled).toBe(false);
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318/' }).tracing).toMatchObject({
      enabled: true,
      url: 'http://127.0.0.1:4318/v1/traces',
    });
    expect(loadConfig({ OTEL_TRACES_EXPORTER: 'console' }).tracing.enabled).toBe(true);
  });

  it('stores no trace context, even for a request that carries one, and exports nothing', async () => {
    const { tenantId } = await tenantWithKey(t.prisma);
    const { secret } = await createInboundSecretStore(t.prisma, testSecretBox(), { cacheMs: 0 }).put(
      { tenantId, provider: 'stripe' },
      operator(tenantId),
    );
    const signed = p.stripeSdkSigned(secret, JSON.stringify(p.stripeEvent('invoice.created', p.stripeInvoice('in_off', 'cus_off', 100))));
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/v1/webhooks/in/stripe/${tenantId}`,
      headers: { ...signed.headers, traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
      payload: signed.body,
    });
    expect(res.statusCode).toBe(202);
    const row = await t.prisma.inboxEvent.findUniqueOrThrow({ where: { id: res.json().id } });
    expect(row.traceContext).toBeNull();
    await new Promise((r) => setTimeout(r, 500));
    expect(otlp.requests()).toBe(0);
  });

  it('patches neither http, https nor pg', () => {
    expect(wrapped(http.Server.prototype.emit)).toBe(false);
    expect(wrapped(http.request)).toBe(false);
    expect(wrapped(https.request)).toBe(false);
    expect(wrapped(pg.Client.prototype.query)).toBe(false);
    expect(wrapped(pg.Pool.prototype.connect)).toBe(false);
  });

  it('loads no OpenTelemetry SDK or instrumentation module', () => {
    const loaded = Object.keys(createRequire(import.meta.url).cache);
    expect(loaded.length).toBeGreaterThan(0);
    const telemetry = loaded.filter((f) =>
      /node_modules\/(@opentelemetry\/(?!api\/)|@fastify\/otel\/|require-in-the-middle\/|import-in-the-middle\/)/.test(f),
    );
    expect(telemetry).toEqual([]);
  });
});
