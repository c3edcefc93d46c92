import { operator } from '../../src/services/audit.ts';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSecretBox } from '../../src/crypto/secret-box.ts';
import { createPool, createPrisma } from '../../src/db/prisma.ts';
import { inTransaction } from '../../src/db/sql.ts';
import { createInboundSecretStore } from '../../src/services/integrations.ts';
import { enqueueEvents } from '../../src/outbox/events/enqueue.ts';
import { fileDatabaseUrl } from '../support/database.ts';
import { exampleEvent, tenantWithKey } from '../support/factories.ts';
import * as p from '../support/providers.ts';
import { startReceiver, testCertificate } from '../support/receiver.ts';
import { freePort, startService, stop } from '../support/spawn.ts';

// The faults that take a whole process or PostgreSQL away. They run apart from `npm test`
// (`npm run test:faults`), because restarting PostgreSQL would break every other test running beside
// them. Each counts what was accepted against what took effect and what was delivered.
const AMQP_URL = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
const prefix = `chs-faults-${randomUUID().slice(0, 8)}`;
const key = Buffer.alloc(32, 5);
const databaseUrl = await fileDatabaseUrl();
const pool = createPool(databaseUrl, 4);
const prisma = createPrisma({ url: databaseUrl, poolSize: 4, pool });
const env = {
  DATABASE_URL: databaseUrl,
  AMQP_URL,
  AMQP_PREFIX: prefix,
  REDIS_URL: '',
  ENCRYPTION_KEY: `faults:${key.toString('base64')}`,
  SESSION_SECRET: 'faults-session-secret-0123456789abcdefghij',
  SEED_DEMO: 'never',
  LOG_LEVEL: 'info',
  API_KEY_CACHE_MS: '0',
  INBOX_SWEEP_MS: '300',
  DELIVERY_LEASE_SECONDS: '3',
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  NODE_EXTRA_CA_CERTS: join(import.meta.dirname, '..', '..', 'test-output', 'tls', 'cert.pem'),
};

let rx: Awaited<ReturnType<typeof startReceiver>>;
let worker: ReturnType<typeof startService>;

async function api() {
  const port = await freePort();
  const s = startService('api', { ...env, PORT: String(port), HOST: '127.0.0.1' }, /listening on/);
  await s.started;
  return { ...s, url: `http://127.0.0.1:${port}` };
}

async function githubTenant() {
  const { tenantId } = await tenantWithKey(prisma);
  const { secret } = await createInboundSecretStore(prisma, createSecretBox([{ id: 'faults', key }]), { cacheMs: 0 }).put(
    { tenantId, provider: 'github' },
    operator(tenantId),
  );
  return { tenantId, secret };
}

interface Outcome {
  delivery: string;
  status: number | 'error';
  /** A refusal's problem detail, so that a failing expectation says why. */
  detail?: string;
}

/** Posts `n` distinct GitHub pushes, `concurrency` at a time, to whichever base URL `target()` names. */
async function post(target: () => string, tenantId: string, secret: string, n: number, concurrency = 10): Promise<Outcome[]> {
  const out: Outcome[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        const i = next++;
        const delivery = randomUUID();
        const s = p.signGithub(secret, 'push', p.githubPush(`org-${i % 5}`, 1), delivery);
        try {
          const res = await fetch(`${target()}/api/v1/webhooks/in/github/${tenantId}`, {
            method: 'POST',
            headers: s.headers,
            body: s.body,
            signal: AbortSignal.timeout(10_000),
          });
          const text = await res.text();
          out.push(res.status === 202 ? { delivery, status: 202 } : { delivery, status: res.status, detail: text.slice(0, 300) });
        } catch {
          out.push({ delivery, status: 'error' });
        }
      }
    }),
  );
  return out;
}

/** Every answered 202 took effect exactly once; nothing stored was left unprocessed or applied twice. */
async function expectEffects(tenantId: string, outcomes: Outcome[]) {
  const accepted = outcomes.filter((o) => o.status === 202).map((o) => o.delivery);
  await expect
    .poll(() => prisma.inboxEvent.count({ where: { tenantId, status: { not: 'processed' } } }), { timeout: 60_000, interval: 250 })
    .toBe(0);
  const stored = await prisma.inboxEvent.findMany({ where: { tenantId }, select: { id: true, dedupKey: true } });
  const storedKeys = new Set(stored.map((e) => e.dedupKey));
  const lost = accepted.filter((d) => !storedKeys.has(d));
  expect(lost).toEqual([]);
  const perEvent = await prisma.signal.groupBy({ by: ['inboxEventId'], where: { tenantId }, _count: true });
  expect(perEvent).toHaveLength(stored.length);
  expect(perEvent.every((g) => g._count === 1)).toBe(true);
  return { accepted: accepted.length, stored: stored.length, refused: outcomes.length - accepted.length };
}

beforeAll(async () => {
  rx = await startReceiver(testCertificate());
  worker = startService('worker', env, /worker started/);
  await worker.started;
}, 120_000);

afterAll(async () => {
  await stop(worker.child);
  rx?.close();
  await prisma.$disconnect().catch(() => undefined);
  await pool.end().catch(() => undefined);
  for (const topic of ['inbound.events', 'outbound.deliveries']) {
    for (const suffix of ['', '.retry', '.dead']) execFileSync('rabbitmqctl', ['-q', 'delete_queue', `${prefix}.${topic}${suffix}`]);
  }
});

describe('process faults', () => {
  it('an API process killed with SIGKILL mid-load: every event it accepted takes effect once; the other API carries on', async () => {
    const { tenantId, secret } = await githubTenant();
    const [a, b] = [await api(), await api()];
    let answered = 0;
    let victimAlive = true;
    // Half the traffic to the victim until it dies, then all of it to the survivor.
    const target = () => (victimAlive && answered++ % 2 === 0 ? a.url : b.url);
    const load = post(target, tenantId, secret, 600);
    await expect.poll(() => prisma.inboxEvent.count({ where: { tenantId } }), { timeout: 30_000, interval: 20 }).toBeGreaterThan(100);
    a.child.kill('SIGKILL');
    victimAlive = false;
    const outcomes = await load;
    await stop(b.child);
    const counts = await expectEffects(tenantId, outcomes);
    console.log('API SIGKILL', JSON.stringify(counts));
    expect(counts.accepted).toBeGreaterThan(300);
    // Refused requests are the ones cut off with the victim: the provider retries those.
    expect(outcomes.filter((o) => o.status !== 202 && o.status !== 'error')).toEqual([]);
  }, 120_000);

  it('PostgreSQL restarted under load: requests during the outage are refused, never half-accepted; everything accepted takes effect once', async () => {
    const { tenantId, secret } = await githubTenant();
    const server = await api();
    const load = post(() => server.url, tenantId, secret, 800, 8);
    await expect.poll(() => prisma.inboxEvent.count({ where: { tenantId } }), { timeout: 30_000, interval: 20 }).toBeGreaterThan(100);
    const cluster = execFileSync('ls', ['/etc/postgresql']).toString().trim().split('\n')[0]!;
    execFileSync('pg_ctlcluster', ['--skip-systemctl-redirect', '--mode', 'fast', cluster, 'main', 'restart'], { stdio: 'ignore' });
    const outcomes = await load;
    const counts = await expectEffects(tenantId, outcomes);
    console.log('PostgreSQL restart', JSON.stringify(counts));
    const statuses = new Set(outcomes.map((o) => o.status));
    // A refusal during the outage is a 5xx the provider retries, not a 2xx for an event that was not stored.
    for (const s of statuses) expect([202, 500, 503, 'error']).toContain(s);
    // After the restart the same API process accepts again.
    const after = await post(() => server.url, tenantId, secret, 20);
    expect(after.every((o) => o.status === 202)).toBe(true);
    await expectEffects(tenantId, [...outcomes, ...after]);
    await stop(server.child);
  }, 180_000);

  it('the outbox relay and deliveries resume after PostgreSQL restarts: every event delivered, repeats only with the same X-Webhook-Id', async () => {
    const { tenantId, apiKey } = await tenantWithKey(prisma);
    const server = await api();
    const created = await fetch(`${server.url}/api/v1/webhook-endpoints`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ url: rx.url, events: ['invoice.paid'] }),
    });
    const endpointId = ((await created.json()) as { id: string }).id;
    await stop(server.child);
    rx.set('ok', 100);
    const emit = (from: number, n: number) =>
      inTransaction(pool, (sql) =>
        enqueueEvents(
          sql,
          Array.from({ length: n }, (_, i) => exampleEvent(tenantId, 'invoice.paid', `fault:${from + i}`)),
        ),
      );
    await emit(0, 40);
    await expect
      .poll(() => prisma.webhookDelivery.count({ where: { endpointId, status: 'succeeded' } }), { timeout: 30_000 })
      .toBeGreaterThan(0);
    const cluster = execFileSync('ls', ['/etc/postgresql']).toString().trim().split('\n')[0]!;
    execFileSync('pg_ctlcluster', ['--skip-systemctl-redirect', '--mode', 'fast', cluster, 'main', 'restart'], { stdio: 'ignore' });
    await expect.poll(async () => emit(40, 40).then(() => true), { timeout: 30_000, interval: 500 }).toBe(true);
    await expect
      .poll(() => prisma.webhookDelivery.count({ where: { endpointId, status: 'succeeded' } }), { timeout: 90_000, interval: 500 })
      .toBe(80);
    const ids = new Set((await prisma.webhookDelivery.findMany({ where: { endpointId }, select: { id: true } })).map((d) => d.id));
    expect(ids.size).toBe(80);
    const hits = rx.hits.filter((h) => ids.has(String(h.headers['x-webhook-id'])));
    expect(new Set(hits.map((h) => String(h.headers['x-webhook-id']))).size).toBe(80);
    console.log('relay across PostgreSQL restart', JSON.stringify({ events: 80, delivered: 80, receiverHits: hits.length }));
    rx.set('ok', 0);
  }, 180_000);
  it('a receiver answering slowly holds back only its own endpoint: another tenant’s deliveries go out meanwhile, and each is delivered once', async () => {
    const slow = await startReceiver(testCertificate());
    // Well inside the 3 s lease this suite runs with, so a slow answer is never mistaken for a lost worker.
    slow.set('ok', 1500);
    const box = createSecretBox([{ id: 'faults', key }]);
    const endpointFor = async (url: string) => {
      const { tenantId } = await tenantWithKey(prisma);
      const e = await prisma.webhookEndpoint.create({
        data: { tenantId, url, events: ['invoice.paid'], secret: box.seal('whsec_faults') },
      });
      return { tenantId, endpointId: e.id };
    };
    const [slowTenant, fastTenant] = [await endpointFor(slow.url), await endpointFor(rx.url)];
    rx.set('ok', 0);
    const emit = (tenantId: string) =>
      inTransaction(pool, (sql) =>
        enqueueEvents(
          sql,
          Array.from({ length: 48 }, (_, i) => exampleEvent(tenantId, 'invoice.paid', `slow-fast:${i}`)),
        ),
      );
    await emit(slowTenant.tenantId);
    await emit(fastTenant.tenantId);
    const succeeded = (endpointId: string) => prisma.webhookDelivery.count({ where: { endpointId, status: 'succeeded' } });
    try {
      await expect.poll(() => succeeded(fastTenant.endpointId), { timeout: 30_000, interval: 50 }).toBe(48);
      // 48 answers of 1.5 s through at most 16 at once take at least 4.5 s; the fast tenant did not wait for them.
      const slowDone = await succeeded(slowTenant.endpointId);
      expect(slowDone).toBeLessThan(48);
      await expect.poll(() => succeeded(slowTenant.endpointId), { timeout: 90_000, interval: 250 }).toBe(48);
      const slowIds = new Set(slow.hits.map((h) => String(h.headers['x-webhook-id'])));
      console.log(
        'slow receiver',
        JSON.stringify({ fastDelivered: 48, slowDoneMeanwhile: slowDone, slowHits: slow.hits.length, slowIds: slowIds.size }),
      );
      // Turned-away attempts (the endpoint at its cap) never reach the receiver: each delivery arrived once.
      expect(slow.hits).toHaveLength(48);
      expect(slowIds.size).toBe(48);
    } finally {
      slow.close();
    }
  }, 180_000);
});
