import { operator } from '../../src/services/audit.ts';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inTransaction } from '../../src/db/sql.ts';
import { createInboundSecretStore } from '../../src/services/integrations.ts';
import { enqueueEvents } from '../../src/outbox/events/enqueue.ts';
import { createPool, createPrisma } from '../../src/db/prisma.ts';
import { createSecretBox } from '../../src/crypto/secret-box.ts';
import { fileDatabaseUrl } from '../support/database.ts';
import { customer, exampleEvent, signals, spread, tenantWithKey } from '../support/factories.ts';
import * as p from '../support/providers.ts';
import { startReceiver, testCertificate } from '../support/receiver.ts';
import { freePort, startService, stop } from '../support/spawn.ts';

// Two API and two worker processes on one PostgreSQL, RabbitMQ and Redis, as README's process model
// describes: the shared limits and the exactly-once effects must hold as they do with one process.
const AMQP_URL = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `chs-scale-${randomUUID().slice(0, 8)}`;
const key = Buffer.alloc(32, 9);
const databaseUrl = await fileDatabaseUrl();
const pool = createPool(databaseUrl, 4);
const prisma = createPrisma({ url: databaseUrl, poolSize: 4, pool });
const box = createSecretBox([{ id: 'scale', key }]);

const shared = {
  DATABASE_URL: databaseUrl,
  AMQP_URL,
  AMQP_PREFIX: prefix,
  REDIS_URL,
  ENCRYPTION_KEY: `scale:${key.toString('base64')}`,
  SESSION_SECRET: 'scale-out-session-secret-0123456789abcdef',
  SEED_DEMO: 'never',
  LOG_LEVEL: 'info',
  // Test files share two cores: a process whose event loop a busy neighbour held up would shed every
  // request for a moment (503), which is not what these tests are about; shedding has its own test.
  MAX_EVENT_LOOP_DELAY_MS: '0',
  RATE_LIMIT_GROWTH: '20',
  API_KEY_CACHE_MS: '0',
  INBOX_SWEEP_MS: '300',
  SCORING_SWEEP_MS: '1000',
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  NODE_EXTRA_CA_CERTS: join(import.meta.dirname, '..', '..', 'test-output', 'tls', 'cert.pem'),
};

let apis: string[] = [];
let processes: ReturnType<typeof startService>[] = [];
let rx: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  rx = await startReceiver(testCertificate());
  const ports = [await freePort(), await freePort()];
  apis = ports.map((port) => `http://127.0.0.1:${port}`);
  processes = [
    ...ports.map((port) => startService('api', { ...shared, PORT: String(port), HOST: '127.0.0.1' }, /listening on/)),
    startService('worker', shared, /worker started/),
    startService('worker', shared, /worker started/),
  ];
  await Promise.all(processes.map((s) => s.started));
}, 180_000);

afterAll(async () => {
  await Promise.all(processes.map((s) => stop(s.child)));
  rx?.close();
  await prisma.$disconnect();
  await pool.end();
  for (const topic of ['inbound.events', 'outbound.deliveries']) {
    for (const suffix of ['', '.retry', '.dead']) execFileSync('rabbitmqctl', ['-q', 'delete_queue', `${prefix}.${topic}${suffix}`]);
  }
});

describe('two API and two worker processes', () => {
  it('share one rate limit per tenant: 20 a minute across both APIs, not 20 each', async () => {
    const { apiKey } = await tenantWithKey(prisma, 'growth');
    // One request per process first, under another tenant, so that both have loaded what a first request loads.
    const warm = await tenantWithKey(prisma, 'growth');
    for (const api of apis) await fetch(`${api}/api/v1/customers`, { headers: { 'x-api-key': warm.apiKey } });
    const statuses = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        fetch(`${apis[i % 2]}/api/v1/customers`, { headers: { 'x-api-key': apiKey } }).then((r) => r.status),
      ),
    );
    expect(statuses.filter((s) => s === 200), JSON.stringify(statuses)).toHaveLength(20);
    expect(statuses.filter((s) => s === 429)).toHaveLength(10);
  });

  it('take a provider event posted ten times to both APIs at once exactly once', async () => {
    const { tenantId } = await tenantWithKey(prisma);
    const { secret } = await createInboundSecretStore(prisma, box, { cacheMs: 0 }).put({ tenantId, provider: 'stripe' }, operator(tenantId));
    const event = p.stripeEvent('customer.created', p.stripeCustomer('cus_scale', 'ops@scale.example', 'Scale Co'));
    const statuses = await Promise.all(
      Array.from({ length: 10 }, (_, i) => {
        const s = p.signStripe(secret, event);
        return fetch(`${apis[i % 2]}/api/v1/webhooks/in/stripe/${tenantId}`, { method: 'POST', headers: s.headers, body: s.body }).then(
          (r) => r.status,
        );
      }),
    );
    expect(statuses.filter((s) => s === 202)).toHaveLength(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(9);
    await expect
      .poll(() => prisma.inboxEvent.findMany({ where: { tenantId }, select: { status: true } }), { timeout: 30_000 })
      .toEqual([{ status: 'processed' }]);
    expect(await prisma.customer.count({ where: { tenantId } })).toBe(1);
  });

  it('relay and deliver 60 outbox events through both workers: every one delivered, repeats only with the same X-Webhook-Id', async () => {
    const { tenantId, apiKey } = await tenantWithKey(prisma);
    const created = await fetch(`${apis[0]}/api/v1/webhook-endpoints`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ url: rx.url, events: ['invoice.paid'] }),
    });
    expect(created.status).toBe(201);
    const endpointId = ((await created.json()) as { id: string }).id;
    await inTransaction(pool, (sql) =>
      enqueueEvents(
        sql,
        Array.from({ length: 60 }, (_, i) => exampleEvent(tenantId, 'invoice.paid', `scale:${i}`)),
      ),
    );
    await expect
      .poll(() => prisma.webhookDelivery.count({ where: { endpointId, status: 'succeeded' } }), { timeout: 60_000, interval: 250 })
      .toBe(60);
    expect(await prisma.webhookDelivery.count({ where: { endpointId } })).toBe(60);
    const ids = new Set((await prisma.webhookDelivery.findMany({ where: { endpointId }, select: { id: true } })).map((d) => d.id));
    const hits = rx.hits.filter((h) => ids.has(String(h.headers['x-webhook-id'])));
    expect(new Set(hits.map((h) => String(h.headers['x-webhook-id']))).size).toBe(60);
    const attempts = await prisma.webhookAttempt.count({ where: { delivery: { endpointId } } });
    // Each receiver hit is one recorded attempt: no worker sent a delivery another was sending.
    expect(hits.length).toBe(attempts);
  });

  it('score every customer once the signals land, with both workers draining the queue and running the daily pass', async () => {
    const { tenantId } = await tenantWithKey(prisma);
    const ids: string[] = [];
    for (let i = 0; i < 150; i++) {
      const c = await customer(prisma, tenantId);
      ids.push(c.id);
      await signals(prisma, tenantId, c.id, spread('usage.event', 5 + (i % 20), 30));
    }
    await expect.poll(() => prisma.healthSnapshot.count({ where: { tenantId } }), { timeout: 90_000, interval: 500 }).toBe(150);
    await expect.poll(() => prisma.scoringQueue.count({ where: { tenantId, dueAt: { lte: new Date() } } }), { timeout: 30_000 }).toBe(0);
    const history = await prisma.healthHistory.groupBy({ by: ['customerId'], where: { tenantId }, _count: true });
    expect(history).toHaveLength(150);
    expect(history.every((h) => h._count === 1)).toBe(true);
    // One announcement of each customer's first score, not one per worker. A customer scored before its
    // signals landed has a snapshot without a score, and its first score may still be being written.
    const announced = () =>
      prisma.outboxEvent.groupBy({ by: ['subject'], where: { tenantId, type: 'customer.health_changed' }, _count: true });
    await expect.poll(async () => (await announced()).length, { timeout: 30_000, interval: 500 }).toBe(150);
    expect((await announced()).every((a) => a._count === 1)).toBe(true);
  });

  it('logged no error in any process', () => {
    for (const s of processes) expect(s.output()).not.toMatch(/"level":(50|60)/);
  });
});
