import Fastify from 'fastify';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerLoadShedding, SAMPLE_MS } from '../../src/http/load-shedding.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { tenantWithKey } from '../support/factories.ts';

// A process at capacity answers at once with 503 and Retry-After instead of letting requests queue.
// One request in flight is the capacity here, held open by a body that has not finished arriving.
const METRICS_TOKEN = 'metrics-token-0123456789abcdef';
let t: TestApp;
let base: string;
let apiKey: string;

beforeAll(async () => {
  t = await createTestApp({ env: { MAX_IN_FLIGHT: '1', METRICS_TOKEN } });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  apiKey = (await tenantWithKey(t.prisma)).apiKey;
});
afterAll(() => t.close());

function slowCreate(): { finish: () => Promise<number> } {
  const body = JSON.stringify({ name: 'Slow Co' });
  const req = http.request(`${base}/api/v1/customers`, {
    method: 'POST',
    headers: { 'x-api-key': apiKey, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
  });
  const status = new Promise<number>((resolve, reject) => {
    req.on('response', (res) => (res.resume(), resolve(res.statusCode!)));
    req.on('error', reject);
  });
  req.write(body.slice(0, 5));
  return {
    finish: () => {
      req.end(body.slice(5));
      return status;
    },
  };
}

describe('load shedding', () => {
  it('answers 503 with Retry-After at once when the process is at capacity, then serves again', async () => {
    const held = slowCreate();
    await new Promise((r) => setTimeout(r, 200));
    const refused = await fetch(`${base}/api/v1/customers`, { headers: { 'x-api-key': apiKey } });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(((await refused.json()) as { code: string }).code).toBe('service_unavailable');

    expect(await held.finish()).toBe(201);
    expect((await fetch(`${base}/api/v1/customers`, { headers: { 'x-api-key': apiKey } })).status).toBe(200);
  });

  it('keeps answering health probes and metrics while at capacity', async () => {
    const held = slowCreate();
    await new Promise((r) => setTimeout(r, 200));
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    expect((await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).status).toBe(200);
    await held.finish();
  });
});

/** Keeps this process's event loop busy `ms` at a time, again and again, until stopped. */
function blockRepeatedly(ms: number) {
  const timer = setInterval(() => {
    const until = performance.now() + ms;
    while (performance.now() < until);
  }, 1);
  return () => clearInterval(timer);
}

describe('shedding on event-loop delay', () => {
  it('answers 503 with Retry-After while the event loop stays blocked, and serves again once it is not', async () => {
    const s = await createTestApp({ env: { MAX_EVENT_LOOP_DELAY_MS: '200' } });
    try {
      const { apiKey: key } = await tenantWithKey(s.prisma);
      const list = () => s.app.inject({ url: '/api/v1/customers', headers: { 'x-api-key': key } });
      expect((await list()).statusCode).toBe(200);
      const unblock = blockRepeatedly(300);
      await new Promise((r) => setTimeout(r, 3 * SAMPLE_MS));
      unblock();
      const refused = await list();
      expect(refused.statusCode).toBe(503);
      expect(refused.headers['retry-after']).toBe('1');
      expect(refused.json()).toMatchObject({ code: 'service_unavailable', detail: 'The service is overloaded; retry in a second.' });
      await new Promise((r) => setTimeout(r, 3 * SAMPLE_MS));
      expect((await list()).statusCode).toBe(200);
    } finally {
      await s.close();
    }
  });

  it('does not take the work of starting up for overload: a new process serves its first requests', async () => {
    const app = Fastify();
    registerLoadShedding(app, { maxEventLoopDelayMs: 200 });
    // Start-up work that blocks the loop, as compiling every route's schemas does on a busy machine.
    await app.register(async () => {
      const until = performance.now() + 4 * SAMPLE_MS;
      while (performance.now() < until);
    });
    app.get('/ping', async () => ({ ok: true }));
    await app.ready();
    try {
      const answers = [];
      for (let i = 0; i < 4; i++) {
        answers.push((await app.inject({ url: '/ping' })).statusCode);
        await new Promise((r) => setTimeout(r, SAMPLE_MS / 2));
      }
      expect(answers).toEqual([200, 200, 200, 200]);
    } finally {
      await app.close();
    }
  });
});
