import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createClient, type ExecutionResult } from 'graphql-sse';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSessions } from '../../src/auth/sessions.ts';
import { createPool, createPrisma } from '../../src/db/prisma.ts';
import { inTransaction } from '../../src/db/sql.ts';
import { enqueueEvents, type OutboxInput } from '../../src/outbox/events/enqueue.ts';
import { EVENTS } from '../../src/outbox/events/registry.ts';
import { fileDatabaseUrl } from '../support/database.ts';
import { customer, tenantWithKey, userWithSession } from '../support/factories.ts';
import { freePort, startService, stop } from '../support/spawn.ts';

// Two API processes and a worker on one PostgreSQL, RabbitMQ and Redis: a change committed through the outbox
// reaches the subscribers of its tenant on either process, read with graphql-sse's own client.
const AMQP_URL = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const SESSION_SECRET = 'live-session-secret-0123456789-abcdefghijkl';
const prefix = `chs-live-${randomUUID().slice(0, 8)}`;
const key = Buffer.alloc(32, 5);
const databaseUrl = await fileDatabaseUrl();
const pool = createPool(databaseUrl, 4);
const prisma = createPrisma({ url: databaseUrl, poolSize: 4, pool });
const sessions = createSessions({ secret: SESSION_SECRET, ttlSeconds: 3600 });

const shared = {
  DATABASE_URL: databaseUrl,
  AMQP_URL,
  AMQP_PREFIX: prefix,
  REDIS_URL,
  ENCRYPTION_KEY: `live:${key.toString('base64')}`,
  SESSION_SECRET,
  SEED_DEMO: 'never',
  LOG_LEVEL: 'info',
  MAX_EVENT_LOOP_DELAY_MS: '0',
  API_KEY_CACHE_MS: '0',
  LIVE_RECHECK_MS: '300',
  LIVE_SUBSCRIPTIONS_PER_TENANT: '2',
};

let apis: string[] = [];
let processes: ReturnType<typeof startService>[] = [];

beforeAll(async () => {
  const ports = [await freePort(), await freePort()];
  apis = ports.map((port) => `http://127.0.0.1:${port}`);
  processes = [
    ...ports.map((port) => startService('api', { ...shared, PORT: String(port), HOST: '127.0.0.1' }, /listening on/, 240_000)),
    startService('worker', shared, /worker started/, 240_000),
  ];
  await Promise.all(processes.map((s) => s.started));
}, 300_000);

// When a test fails, what the processes printed is the likeliest explanation: the failure shows its tail, and a
// process that died fails the test it died in and every test after it.
afterEach(({ task }) => {
  const said = (s: (typeof processes)[number], i: number) =>
    `${['api 0', 'api 1', 'worker'][i]} (${s.child.exitCode ?? s.child.signalCode ?? 'running'}):\n${s.output().slice(-3000)}`;
  if (task.result?.state === 'fail') processes.forEach((s, i) => console.log(said(s, i)));
  expect(processes.map(said).filter((_, i) => processes[i]!.child.exitCode !== null || processes[i]!.child.signalCode !== null)).toEqual(
    [],
  );
});

afterAll(async () => {
  await Promise.all(processes.map((s) => stop(s.child)));
  await prisma.$disconnect();
  await pool.end();
  for (const topic of ['inbound.events', 'outbound.deliveries']) {
    for (const suffix of ['', '.retry', '.dead']) {
      try {
        execFileSync('rabbitmqctl', ['-q', 'delete_queue', `${prefix}.${topic}${suffix}`], { stdio: 'ignore' });
      } catch {
        // Never declared: the processes did not get that far.
      }
    }
  }
}, 60_000);

const CHANGES = `subscription Changes($customerId: UUID) {
  customerChanged(customerId: $customerId) { id kind customerId occurredAt customer { id name healthScore } }
}`;

type Change = { customerChanged: { id: string; kind: string; customerId: string; customer: { id: string; name: string } | null } | null };

/** A subscription through graphql-sse's client, collecting what it is sent until `close`. */
function subscribe(api: string, credential: string, variables: Record<string, unknown> = {}) {
  const client = createClient({ url: `${api}/graphql/stream`, headers: { authorization: `Bearer ${credential}` }, retryAttempts: 0 });
  const results: ExecutionResult<Change, unknown>[] = [];
  let ended: (v: unknown) => void;
  const end = new Promise((resolve) => (ended = resolve));
  let connected: () => void;
  const open = new Promise<void>((resolve) => (connected = resolve));
  const dispose = client.subscribe<Change>(
    { query: CHANGES, variables },
    { next: (r) => void results.push(r), error: (e) => ended({ error: e }), complete: () => ended({ complete: true }) },
    { connected: () => connected() },
  );
  return {
    results,
    open,
    end,
    close: () => {
      dispose();
      client.dispose();
    },
    changes: () => results.map((r) => r.data?.customerChanged).filter(Boolean),
  };
}

const healthChanged = (tenantId: string, customerId: string): OutboxInput =>
  ({
    tenantId,
    type: 'customer.health_changed',
    payload: { ...EVENTS['customer.health_changed'].example, tenant_id: tenantId, id: customerId },
    dedupKey: `health:${randomUUID()}`,
  }) as OutboxInput;

const commit = (events: OutboxInput[]) => inTransaction(pool, (sql) => enqueueEvents(sql, events));

async function until(check: () => boolean, ms = 60_000) {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('live customer changes across two API processes', () => {
  it('a subscriber hears its own tenant’s committed changes on either process, and never another tenant’s', async () => {
    const a = await tenantWithKey(prisma);
    const b = await tenantWithKey(prisma);
    const ca = await customer(prisma, a.tenantId, { name: 'Acme' });
    const cb = await customer(prisma, b.tenantId, { name: 'Bolt' });
    const subs = [subscribe(apis[0]!, a.apiKey), subscribe(apis[1]!, a.apiKey), subscribe(apis[1]!, b.apiKey)];
    await Promise.all(subs.map((s) => s.open));
    // A process subscribes to a tenant's Redis channel as its first subscriber of that tenant arrives, and a
    // change is not replayed: both tenants change until every subscriber has heard one.
    const deadline = Date.now() + 90_000;
    while (!subs.every((s) => s.changes().length >= 1) && Date.now() < deadline) {
      await commit([healthChanged(b.tenantId, cb.id)]);
      await commit([healthChanged(a.tenantId, ca.id)]);
      await new Promise((r) => setTimeout(r, 500));
    }
    // Time for a stray change of the other tenant to arrive, had it been sent.
    await new Promise((r) => setTimeout(r, 500));
    const [a1, a2, b2] = subs.map((s) => s.changes());
    for (const seen of [a1, a2]) {
      expect(seen.length).toBeGreaterThan(0);
      for (const c of seen) expect([c!.kind, c!.customerId, c!.customer?.name]).toEqual(['health_changed', ca.id, 'Acme']);
    }
    expect(b2.length).toBeGreaterThan(0);
    for (const c of b2) expect([c!.kind, c!.customerId, c!.customer?.name]).toEqual(['health_changed', cb.id, 'Bolt']);
    for (const s of subs) s.close();
    // The first subscriptions of freshly started processes: they load the schema and connect to Redis first.
  }, 120_000);

  it('a change whose transaction rolled back is never announced', async () => {
    const t = await tenantWithKey(prisma);
    const c = await customer(prisma, t.tenantId);
    const sub = subscribe(apis[0]!, t.apiKey);
    await sub.open;
    const rolledBack = healthChanged(t.tenantId, c.id);
    await expect(
      inTransaction(pool, async (sql) => {
        await enqueueEvents(sql, [rolledBack]);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    const committed = healthChanged(t.tenantId, c.id);
    await commit([committed]);
    await until(() => sub.changes().length >= 1);
    await new Promise((r) => setTimeout(r, 300));
    const [row] = await pool
      .query<{ id: string }>('SELECT id FROM outbox_events WHERE dedup_key = $1', [committed.dedupKey])
      .then((r) => r.rows);
    expect(sub.changes().map((ch) => ch!.id)).toEqual([row!.id]);
    sub.close();
  });

  it('a subscription to one customer hears only that customer’s changes', async () => {
    const t = await tenantWithKey(prisma);
    const [one, other] = [await customer(prisma, t.tenantId), await customer(prisma, t.tenantId)];
    const sub = subscribe(apis[1]!, t.apiKey, { customerId: one.id });
    await sub.open;
    await commit([healthChanged(t.tenantId, other.id)]);
    await commit([healthChanged(t.tenantId, one.id)]);
    await until(() => sub.changes().length >= 1);
    await new Promise((r) => setTimeout(r, 300));
    expect(sub.changes().map((c) => c!.customerId)).toEqual([one.id]);
    sub.close();
  });
});

describe('a live subscription ends with its credential', () => {
  it('ends with invalid_credentials once its API key is revoked', async () => {
    const t = await tenantWithKey(prisma);
    const sub = subscribe(apis[0]!, t.apiKey);
    await sub.open;
    await prisma.apiKey.update({ where: { id: t.apiKeyId }, data: { revokedAt: new Date() } });
    await expect(Promise.race([sub.end, new Promise((r) => setTimeout(() => r('still open'), 5000))])).resolves.toEqual({ complete: true });
    expect(sub.results.at(-1)?.errors?.[0]?.extensions).toMatchObject({ code: 'invalid_credentials' });
  });

  it('ends once its session is signed out', async () => {
    const t = await tenantWithKey(prisma);
    const { token } = await userWithSession(prisma, sessions, t.tenantId, 'viewer');
    const sub = subscribe(apis[1]!, token);
    await sub.open;
    const out = await fetch(`${apis[0]}/api/v1/auth/logout`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    expect(out.status).toBeLessThan(300);
    await expect(Promise.race([sub.end, new Promise((r) => setTimeout(() => r('still open'), 5000))])).resolves.toEqual({ complete: true });
    expect(sub.results.at(-1)?.errors?.[0]?.extensions).toMatchObject({ code: 'invalid_credentials' });
  });
});

describe('admission of live subscriptions', () => {
  const open = (api: string, credential: string) =>
    fetch(`${api}/graphql/stream`, {
      method: 'POST',
      headers: { authorization: `Bearer ${credential}`, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: CHANGES }),
    });

  it('refuses a tenant’s subscription beyond its cap with a 429 problem, and admits one again once another closes', async () => {
    const t = await tenantWithKey(prisma);
    const held = [subscribe(apis[0]!, t.apiKey), subscribe(apis[0]!, t.apiKey)];
    await Promise.all(held.map((s) => s.open));
    const refused = await open(apis[0]!, t.apiKey);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('content-type')).toContain('application/problem+json');
    expect(await refused.json()).toMatchObject({ code: 'rate_limited' });
    // Another tenant is not held back by this one's streams.
    const other = await tenantWithKey(prisma);
    const theirs = await open(apis[0]!, other.apiKey);
    expect(theirs.status).toBe(200);
    await theirs.body?.cancel();
    held[0]!.close();
    await until(() => true);
    let again: Response | undefined;
    await until(() => again?.status === 200 || false, 5000).catch(() => {});
    for (let i = 0; i < 20 && again?.status !== 200; i++) {
      await again?.body?.cancel();
      await new Promise((r) => setTimeout(r, 100));
      again = await open(apis[0]!, t.apiKey);
    }
    expect(again?.status).toBe(200);
    await again?.body?.cancel();
    held[1]!.close();
  });

  it('refuses a subscription without a credential, and queries on the stream endpoint', async () => {
    const anonymous = await fetch(`${apis[0]}/graphql/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: CHANGES }),
    });
    expect(anonymous.status).toBe(401);
    const t = await tenantWithKey(prisma);
    const query = await fetch(`${apis[0]}/graphql/stream`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ query: '{ customers { totalCount } }' }),
    });
    expect((await query.json()).errors[0].extensions.code).toBe('validation_failed');
    const subscriptionOnGraphql = await fetch(`${apis[0]}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: CHANGES }),
    });
    expect(await subscriptionOnGraphql.text()).toContain('/graphql/stream');
  });
});
