import { operator } from '../../src/services/audit.ts';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileDatabaseUrl } from '../support/database.ts';
import { createInboundSecretStore } from '../../src/services/integrations.ts';
import { createRabbitQueue } from '../../src/queue/rabbitmq.ts';
import { startWorker } from '../../src/worker.ts';
import { createTestApp, type TestApp, testSecretBox } from '../support/app.ts';
import { exampleEvent, tenantWithKey } from '../support/factories.ts';
import * as p from '../support/providers.ts';
import { startReceiver, testCertificate } from '../support/receiver.ts';
import { join } from 'node:path';
import { inTransaction } from '../../src/db/sql.ts';
import { enqueueEvents } from '../../src/outbox/events/enqueue.ts';
import { startService, stop } from '../support/spawn.ts';

// These run against the real RabbitMQ on 127.0.0.1 under a prefix of their own, and stop and start it.
const AMQP_URL = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
const prefix = `chs-test-${randomUUID().slice(0, 8)}`;
const log = pino({ level: 'silent' });
const ENCRYPTION_KEY = `test:${Buffer.alloc(32, 7).toString('base64')}`;

let t: TestApp;
let rx: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  t = await createTestApp({
    queue: createRabbitQueue(AMQP_URL, log, prefix),
    // Posts here come 100 at once from one address, more than the per-address and inbound budgets admit.
    env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', MAX_UNAUTHENTICATED_PER_ADDRESS: '1000', MAX_IN_FLIGHT_INBOUND: '1000' },
    ca: testCertificate().cert,
  });
  rx = await startReceiver(testCertificate());
});
afterAll(async () => {
  rx.close();
  await t.close();
  await t.queue.close();
  // This run's queues go with it; the names are unique to the run.
  for (const topic of ['inbound.events', 'outbound.deliveries']) {
    for (const suffix of ['', '.retry', '.dead']) execFileSync('rabbitmqctl', ['-q', 'delete_queue', `${prefix}.${topic}${suffix}`]);
  }
});

async function githubTenant() {
  const { tenantId } = await tenantWithKey(t.prisma);
  const { secret } = await createInboundSecretStore(t.prisma, testSecretBox(), { cacheMs: 0 }).put({ tenantId, provider: 'github' }, operator(tenantId));
  return { tenantId, secret };
}
function post(tenantId: string, secret: string, i: number) {
  const { body, headers } = p.signGithub(secret, 'push', p.githubPush(`org-${i % 7}`, 1 + (i % 3)));
  return t.app.inject({ method: 'POST', url: `/api/v1/webhooks/in/github/${tenantId}`, headers, payload: body });
}

/** Every accepted event took effect exactly once: processed, and one signal each. */
async function expectExactlyOnce(tenantId: string, accepted: number, timeout = 60_000) {
  await expect
    .poll(() => t.prisma.inboxEvent.count({ where: { tenantId, status: 'processed' } }), { timeout, interval: 250 })
    .toBe(accepted);
  expect(await t.prisma.inboxEvent.count({ where: { tenantId } })).toBe(accepted);
  expect(await t.prisma.signal.count({ where: { tenantId } })).toBe(accepted);
  const perEvent = await t.prisma.signal.groupBy({ by: ['inboxEventId'], where: { tenantId }, _count: true });
  expect(perEvent.every((g) => g._count === 1)).toBe(true);
}

const databaseUrl = await fileDatabaseUrl();
const workerEnv = () => ({
  DATABASE_URL: databaseUrl,
  AMQP_URL,
  AMQP_PREFIX: prefix,
  ENCRYPTION_KEY,
  INBOX_SWEEP_MS: '300',
  WORKER_PREFETCH: '8',
  // info, so the readiness line ("worker started") is printed.
  LOG_LEVEL: 'info',
  REDIS_URL: '',
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  NODE_EXTRA_CA_CERTS: join(import.meta.dirname, '..', '..', 'test-output', 'tls', 'cert.pem'),
  DELIVERY_LEASE_SECONDS: '3',
});

describe('through RabbitMQ', () => {
  it('declares the durable topology and processes every accepted event once', async () => {
    const worker = startWorker({ pool: t.pool, queue: t.queue, inbox: t.inbox, deliverer: t.outbound.deliverer, log, sweepEveryMs: 500 });
    try {
      const { tenantId, secret } = await githubTenant();
      const statuses = await Promise.all(Array.from({ length: 60 }, (_, i) => post(tenantId, secret, i).then((r) => r.statusCode)));
      expect(statuses.every((s) => s === 202)).toBe(true);
      await expectExactlyOnce(tenantId, 60);
      const queues = execFileSync('rabbitmqctl', ['-q', 'list_queues', 'name', 'durable', 'arguments'], { encoding: 'utf8' });
      for (const q of [`${prefix}.inbound.events`, `${prefix}.inbound.events.retry`, `${prefix}.inbound.events.dead`]) {
        expect(queues).toMatch(new RegExp(`^${q.replaceAll('.', '\\.')}\\s+true`, 'm'));
      }
    } finally {
      await worker.close();
    }
  });

  it('retries a failing event with a delay, then parks it and marks it failed', async () => {
    const worker = startWorker({
      pool: t.pool,
      queue: t.queue,
      inbox: t.inbox,
      deliverer: t.outbound.deliverer,
      log,
      sweepEveryMs: 60_000,
    });
    try {
      const { tenantId } = await githubTenant();
      // A body no normalizer can parse stands in for a defect that fails every attempt. Marked published,
      // as accepted events are, so no sweeper (of any test file sharing the database) sends it again.
      const row = await t.prisma.inboxEvent.create({
        data: { tenantId, provider: 'github', dedupKey: randomUUID(), eventType: 'push', body: '{broken', publishedAt: new Date() },
      });
      await t.queue.publish('inbound.events', { id: row.id });
      await expect
        .poll(() => t.prisma.inboxEvent.findUniqueOrThrow({ where: { id: row.id } }).then((r) => r.status), {
          timeout: 30_000,
          interval: 250,
        })
        .toBe('failed');
      const failed = await t.prisma.inboxEvent.findUniqueOrThrow({ where: { id: row.id } });
      expect(failed.attempts).toBe(5);
      expect(failed.lastError).toMatch(/JSON/);
      await expect.poll(() => t.queue.depth('inbound.events'), { timeout: 5000 }).toBe(0);
    } finally {
      await worker.close();
    }
  }, 45_000);
});

describe('faults', () => {
  it('a worker killed with SIGKILL mid-batch and restarted loses nothing and applies nothing twice', async () => {
    const { tenantId, secret } = await githubTenant();
    // The backlog is queued before the worker starts, so the kill lands while it is working through it.
    const total = 1500;
    let accepted = 0;
    for (let i = 0; i < total; i += 100) {
      const batch = await Promise.all(Array.from({ length: 100 }, (_, j) => post(tenantId, secret, i + j)));
      accepted += batch.filter((r) => r.statusCode === 202).length;
    }
    expect(accepted).toBe(total);
    const first = startService('worker', workerEnv(), /worker started/);
    await first.started;
    // Kill once some, but not all, of the work is done.
    await expect
      .poll(() => t.prisma.inboxEvent.count({ where: { tenantId, status: 'processed' } }), { timeout: 30_000, interval: 20 })
      .toBeGreaterThan(20);
    first.child.kill('SIGKILL');
    const doneAtKill = await t.prisma.inboxEvent.count({ where: { tenantId, status: 'processed' } });
    expect(doneAtKill).toBeLessThan(total);
    const second = startService('worker', workerEnv(), /worker started/);
    await second.started;
    try {
      await expectExactlyOnce(tenantId, total);
    } finally {
      await stop(second.child);
    }
  }, 120_000);

  it('RabbitMQ stopped while events are posted: they are still accepted, then published and applied once it is back', async () => {
    const { tenantId, secret } = await githubTenant();
    const worker = startService('worker', workerEnv(), /worker started/);
    await worker.started;
    try {
      const before = await Promise.all(Array.from({ length: 20 }, (_, i) => post(tenantId, secret, i)));
      execFileSync('rabbitmqctl', ['-q', 'stop_app']);
      let during: { statusCode: number }[] = [];
      try {
        during = await Promise.all(Array.from({ length: 30 }, (_, i) => post(tenantId, secret, 100 + i)));
      } finally {
        execFileSync('rabbitmqctl', ['-q', 'start_app']);
      }
      const after = await Promise.all(Array.from({ length: 20 }, (_, i) => post(tenantId, secret, 200 + i)));
      expect([...before, ...during, ...after].every((r) => r.statusCode === 202)).toBe(true);
      await expectExactlyOnce(tenantId, 70, 90_000);
    } finally {
      await stop(worker.child);
    }
  }, 150_000);
});

describe('delivery faults', () => {
  async function endpointTenant() {
    const { tenantId, apiKey } = await tenantWithKey(t.prisma);
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/webhook-endpoints',
      headers: { 'x-api-key': apiKey },
      payload: { url: rx.url, events: ['invoice.paid'] },
    });
    expect(res.statusCode).toBe(201);
    return { tenantId, endpointId: res.json().id as string };
  }
  const emit = (tenantId: string, from: number, n: number) =>
    inTransaction(t.pool, (sql) =>
      enqueueEvents(
        sql,
        Array.from({ length: n }, (_, i) => exampleEvent(tenantId, 'invoice.paid', `paid:${from + i}`)),
      ),
    );
  /** Every delivery succeeded, each reached the receiver, and any repeat carried the same id and bytes. */
  async function expectAllDelivered(endpointId: string, total: number) {
    await expect
      .poll(() => t.prisma.webhookDelivery.count({ where: { endpointId, status: 'succeeded' } }), { timeout: 90_000, interval: 250 })
      .toBe(total);
    const ids = new Set((await t.prisma.webhookDelivery.findMany({ where: { endpointId }, select: { id: true } })).map((d) => d.id));
    const hits = rx.hits.filter((h) => ids.has(String(h.headers['x-webhook-id'])));
    expect(new Set(hits.map((h) => h.headers['x-webhook-id'])).size).toBe(total);
    const bodyById = new Map<string, string>();
    for (const h of hits) {
      const id = String(h.headers['x-webhook-id']);
      const body = h.raw.toString('utf8');
      expect(bodyById.get(id) ?? body).toBe(body);
      bodyById.set(id, body);
    }
    return hits.length - total;
  }

  it('a delivery worker killed mid-flight loses nothing; a repeat carries the same X-Webhook-Id', async () => {
    const { tenantId, endpointId } = await endpointTenant();
    rx.set('ok', 400);
    const first = startService('worker', workerEnv(), /worker started/);
    await first.started;
    await emit(tenantId, 0, 40);
    await expect
      .poll(() => rx.hits.filter((h) => h.json?.tenant_id === tenantId).length, { timeout: 30_000, interval: 20 })
      .toBeGreaterThan(3);
    first.child.kill('SIGKILL');
    expect(await t.prisma.webhookDelivery.count({ where: { endpointId, status: 'succeeded' } })).toBeLessThan(40);
    const second = startService('worker', workerEnv(), /worker started/);
    await second.started;
    try {
      await expectAllDelivered(endpointId, 40);
    } finally {
      rx.set('ok');
      await stop(second.child);
    }
  }, 150_000);

  it('RabbitMQ restarted mid-stream loses no delivery', async () => {
    const { tenantId, endpointId } = await endpointTenant();
    const worker = startService('worker', workerEnv(), /worker started/);
    await worker.started;
    try {
      await emit(tenantId, 0, 20);
      execFileSync('rabbitmqctl', ['-q', 'stop_app']);
      try {
        await emit(tenantId, 20, 20);
        await new Promise((r) => setTimeout(r, 3000));
      } finally {
        execFileSync('rabbitmqctl', ['-q', 'start_app']);
      }
      await emit(tenantId, 40, 20);
      await expectAllDelivered(endpointId, 60);
    } finally {
      await stop(worker.child);
    }
  }, 150_000);
});
