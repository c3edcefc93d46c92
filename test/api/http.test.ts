import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { Registry } from 'prom-client';
import { startMetricsServer } from '../../src/http/observability.ts';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { tenantWithKey } from '../support/factories.ts';

const METRICS_TOKEN = 'metrics-token-0123456789abcdef';
const scrape = { authorization: `Bearer ${METRICS_TOKEN}` };
let t: TestApp;
const logLines: string[] = [];
beforeAll(async () => {
  const sink = new Writable({ write: (chunk, _enc, cb) => (logLines.push(chunk.toString()), cb()) });
  t = await createTestApp({ logger: pino({ level: 'info' }, sink), env: { METRICS_TOKEN } });
});
afterAll(() => t.close());

describe('operability', () => {
  it('answers /healthz', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/healthz' })).json()).toEqual({ status: 'ok' });
  });

  it('answers /readyz with each dependency checked', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ready', checks: { database: 'ok' } });
  });

  it('checks the database once for a burst of /readyz probes, which no budget limits', async () => {
    t.queries.length = 0;
    const answers = await Promise.all(Array.from({ length: 20 }, () => t.app.inject({ method: 'GET', url: '/readyz' })));
    expect(answers.map((r) => r.statusCode)).toEqual(Array(20).fill(200));
    expect(t.queries.filter((q) => /SELECT 1/.test(q)).length).toBeLessThan(5);
  });

  it('exposes Prometheus metrics including request durations by route', async () => {
    await t.app.inject({ method: 'GET', url: '/healthz' });
    const res = await t.app.inject({ method: 'GET', url: '/metrics', headers: scrape });
    expect(res.headers['content-type']).toMatch(/text\/plain/);
    expect(res.body).toMatch(/http_request_duration_seconds_bucket\{.*route="\/healthz"/);
    expect(res.body).toContain('process_cpu_user_seconds_total');
  });

  it('refuses /metrics without the metrics token, or with another one', async () => {
    for (const headers of [{}, { authorization: 'Bearer not-the-metrics-token' }, { authorization: METRICS_TOKEN }]) {
      const res = await t.app.inject({ method: 'GET', url: '/metrics', headers });
      expect(res.statusCode).toBe(401);
      expect(res.headers['content-type']).toMatch(/problem\+json/);
      expect(res.body).not.toContain('http_request_duration_seconds');
    }
  });

  it('does not serve /metrics on the API port when no metrics token is configured', async () => {
    const open = await createTestApp();
    try {
      expect((await open.app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(404);
    } finally {
      await open.close();
    }
  });

  it('serves /metrics on the metrics port instead of the API port when METRICS_PORT is set', async () => {
    const registry = new Registry();
    const split = await createTestApp({ env: { METRICS_PORT: '9464', METRICS_TOKEN }, registry });
    const server = await startMetricsServer(registry, { host: '127.0.0.1', port: 0, token: METRICS_TOKEN });
    try {
      await split.app.inject({ method: 'GET', url: '/healthz' });
      expect((await split.app.inject({ method: 'GET', url: '/metrics', headers: scrape })).statusCode).toBe(404);
      const url = `http://127.0.0.1:${(server.server.address() as AddressInfo).port}/metrics`;
      expect((await fetch(url)).status).toBe(401);
      const res = await fetch(url, { headers: scrape });
      expect(res.status).toBe(200);
      expect(await res.text()).toMatch(/http_request_duration_seconds_bucket\{.*route="\/healthz"/);
    } finally {
      await server.close();
      await split.close();
    }
  });

  it('exposes the backlogs as gauges: what waits, and how long the oldest has waited', async () => {
    const { tenantId } = await tenantWithKey(t.prisma);
    const c = await t.prisma.customer.create({ data: { tenantId, name: 'Backlog' } });
    await t.pool.query(
      `INSERT INTO scoring_queue (customer_id, tenant_id, due_at) VALUES ($1, $2, now() - interval '90 seconds')
                        ON CONFLICT (customer_id) DO UPDATE SET due_at = excluded.due_at`,
      [c.id, tenantId],
    );
    const body = (await t.app.inject({ method: 'GET', url: '/metrics', headers: scrape })).body;
    const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(body)?.[1]);
    expect(value('chs_scoring_due')).toBeGreaterThanOrEqual(1);
    expect(value('chs_scoring_oldest_due_seconds')).toBeGreaterThanOrEqual(89);
    for (const name of [
      'chs_inbox_pending',
      'chs_inbox_oldest_seconds',
      'chs_outbox_pending',
      'chs_deliveries_pending',
      'chs_deliveries_overdue_seconds',
    ]) {
      expect(value(name)).toBeGreaterThanOrEqual(0);
    }
    await t.pool.query('DELETE FROM scoring_queue WHERE customer_id = $1', [c.id]);
  });

  it('echoes a well-formed X-Request-Id and makes one up otherwise', async () => {
    const given = await t.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'req-abc-12345' } });
    expect(given.headers['x-request-id']).toBe('req-abc-12345');
    const injected = await t.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'bad id\r\nx: y' } });
    expect(injected.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('errors', () => {
  it('answers unknown routes with a problem+json 404', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/nope' });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(res.json().code).toBe('not_found');
  });

  it('describes each problem type at its URI', async () => {
    const { apiKey } = await tenantWithKey(t.prisma, 'free');
    const problem = (await t.app.inject({ method: 'GET', url: '/api/v1/customers', headers: { 'x-api-key': apiKey } })).json();
    const res = await t.app.inject({ method: 'GET', url: problem.type });
    expect(res.json()).toEqual({ code: 'plan_without_api_access', status: 403, title: 'Plan without API access' });
  });

  it('never shows a stack trace or internal message, and logs the failure with its request id', async () => {
    // The production composition plus one route that fails the way a defect would.
    const app = await t.composition.app({
      logger: pino({ level: 'error' }, new Writable({ write: (c, _e, cb) => (logLines.push(c.toString()), cb()) })),
    });
    app.get('/boom', async () => {
      throw new Error('database password is hunter2');
    });
    const res = await app.inject({ method: 'GET', url: '/boom', headers: { 'x-request-id': 'boom-request-1' } });
    expect(res.statusCode).toBe(500);
    expect(res.body).not.toContain('hunter2');
    expect(res.body).not.toMatch(/at .*\.ts:\d+/);
    expect(res.json()).toMatchObject({ code: 'internal_error', detail: expect.stringContaining('boom-request-1') });
    expect(logLines.some((l) => l.includes('boom-request-1') && l.includes('hunter2'))).toBe(true);
    await app.close();
  });

  it('keeps credentials out of the logs', async () => {
    const { apiKey } = await tenantWithKey(t.prisma);
    await t.app.inject({ method: 'GET', url: '/api/v1/customers', headers: { authorization: `Bearer ${apiKey}` } });
    await t.app.inject({ method: 'GET', url: '/api/v1/customers', headers: { 'x-api-key': apiKey } });
    expect(logLines.length).toBeGreaterThan(0);
    expect(logLines.join('\n')).not.toContain(apiKey);
  });
});

describe('configuration', () => {
  it('reports every invalid setting at once', () => {
    try {
      loadConfig({ PORT: 'eighty', DATABASE_URL: 'mysql://x', AMQP_URL: 'http://broker' });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      const message = (e as Error).message;
      for (const field of ['PORT', 'DATABASE_URL', 'AMQP_URL']) expect(message).toContain(field);
    }
  });

  it('requires a session secret in production', () => {
    expect(() => loadConfig({ NODE_ENV: 'production', DATABASE_URL: 'postgresql://localhost/x' })).toThrow(/SESSION_SECRET/);
  });

  it('treats an empty variable as unset', () => {
    expect(loadConfig({ REDIS_URL: '', PORT: '' }).redisUrl).toBeUndefined();
  });

  it('applies the documented defaults', () => {
    const c = loadConfig({});
    expect(c.http.port).toBe(3000);
    expect(c.database.url).toBeUndefined();
    expect(c.rateLimit.perMinute).toEqual({ growth: 100, scale: 300 });
    expect(c.http.bodyLimit).toBe(1024 * 1024);
  });
});
