// Inbound webhooks under load: signed Stripe events accepted (stored + confirmed on RabbitMQ) against a
// bare Fastify route that only checks the HMAC and answers 202; then how fast the worker drains them.
import { spawnSync } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import type { Request } from 'autocannon';
import { createPrisma } from '../src/db/prisma.ts';
import { freshDatabase, load, report, startProcess } from './lib.ts';

const url = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/chs_bench';
const amqp = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
const durationS = Number(process.env.BENCH_DURATION_S ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 20);
const SECRET = 'whsec_bench_secret_0123456789';
const ENCRYPTION_KEY = `bench:${Buffer.alloc(32, 9).toString('base64')}`;
const prefix = `chs-bench-${randomUUID().slice(0, 6)}`;

await freshDatabase(url);
const prisma = createPrisma({ url, poolSize: 2 });
const tenant = await prisma.tenant.create({ data: { name: 'Bench', plan: 'scale' } });
await prisma.$disconnect();

const common = {
  DATABASE_URL: url,
  ENCRYPTION_KEY,
  AMQP_URL: amqp,
  AMQP_PREFIX: prefix,
  LOG_LEVEL: 'info',
  SESSION_SECRET: 'bench-session-secret-0123456789abcdefghijkl',
  SEED_DEMO: 'never',
  REDIS_URL: '',
};
const port = 3950 + Math.floor(Math.random() * 40);
const api = await startProcess(
  ['src/main.ts', 'api'],
  {
    ...common,
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    PORT: String(port),
    HOST: '127.0.0.1',
    // BENCH_NO_SHEDDING=1 shows the same overload with load shedding off, for comparison.
    ...(process.env.BENCH_NO_SHEDDING ? { MAX_IN_FLIGHT: '1000000', MAX_EVENT_LOOP_DELAY_MS: '0' } : {}),
  },
  /listening on/,
);
await startProcess(
  ['src/cli/admin.ts', 'inbound:secret', '--tenant', tenant.id, '--provider', 'stripe', '--secret', SECRET],
  common,
  /"secret"/,
);

/**
 * Each request is a fresh, correctly signed Stripe event (unique id), as Stripe would send, for one of
 * BENCH_INBOUND_CUSTOMERS (1,000) customers: a tenant's traffic spreads over its customers. With 1, every
 * event queues on the same customer's locks, which is the hot-customer worst case.
 */
const CUSTOMERS = Number(process.env.BENCH_INBOUND_CUSTOMERS ?? 1000);
let sequence = 0;
function signedRequests(path: string): Request[] {
  return [
    {
      method: 'POST',
      path,
      setupRequest: (req) => {
        const body = JSON.stringify({
          id: `evt_${randomUUID().replaceAll('-', '')}`,
          object: 'event',
          type: 'invoice.created',
          created: Math.floor(Date.now() / 1000),
          data: {
            object: {
              id: `in_${randomUUID().replaceAll('-', '')}`,
              object: 'invoice',
              customer: `cus_bench_${sequence++ % CUSTOMERS}`,
              status: 'draft',
              total: 12345,
              currency: 'usd',
            },
          },
        });
        const t = Math.floor(Date.now() / 1000);
        const sig = createHmac('sha256', SECRET).update(`${t}.${body}`).digest('hex');
        return { ...req, body, headers: { 'content-type': 'application/json', 'stripe-signature': `t=${t},v1=${sig}` } };
      },
    },
  ];
}

const bare = await startProcess(['bench/bare-hmac-server.ts'], { SECRET, PORT: '0' }, /bare listening on (\d+)/);
const barePort = /bare listening on (\d+)/.exec(bare.output)![1];
await load('warm-up', { url: `http://127.0.0.1:${barePort}`, requests: signedRequests('/in'), durationS: 2, connections });
const baseline = await load('bare route: HMAC check + 202', {
  url: `http://127.0.0.1:${barePort}`,
  requests: signedRequests('/in'),
  durationS,
  connections,
});
bare.child.kill();

const path = `/api/v1/webhooks/in/stripe/${tenant.id}`;
const accepted = await load('POST /api/v1/webhooks/in/stripe/{tenant} (stored + confirmed)', {
  url: `http://127.0.0.1:${port}`,
  requests: signedRequests(path),
  durationS,
  connections,
});

// Overload: twice the rate just sustained, from many more connections. The service should refuse the
// excess with a quick 503 (Retry-After) rather than let every request queue until it times out.
const offered = Math.max(100, Math.round(accepted.rps * 2));
const overload = await load(`same, offered at 2x (${offered}/s) from 400 connections`, {
  url: `http://127.0.0.1:${port}`,
  requests: signedRequests(path),
  durationS,
  connections: 400,
  rate: offered,
});

// Drain: a worker alone works through the backlog the load left behind.
const db = createPrisma({ url, poolSize: 2 });
const backlog = await db.inboxEvent.count({ where: { status: 'received' } });
const started = Date.now();
const worker = await startProcess(
  ['src/main.ts', 'worker'],
  { ...common, WORKER_PREFETCH: process.env.BENCH_PREFETCH ?? '64', DATABASE_POOL_SIZE: process.env.BENCH_POOL ?? '24' },
  /worker started/,
);
const drainStart = Date.now();
while ((await db.inboxEvent.count({ where: { status: 'received' } })) > 0 && Date.now() - drainStart < 300_000)
  await new Promise((r) => setTimeout(r, 250));
const drainSeconds = (Date.now() - drainStart) / 1000;
const processed = await db.inboxEvent.count({ where: { status: 'processed' } });
await db.$disconnect();
worker.child.kill('SIGTERM');
api.child.kill('SIGTERM');
// The run's queues were named for it; remove them.
for (const topic of ['inbound.events', 'outbound.deliveries']) {
  for (const suffix of ['', '.retry', '.dead'])
    spawnSync('rabbitmqctl', ['-q', 'delete_queue', `${prefix}.${topic}${suffix}`], { stdio: 'ignore' });
}

report('Inbound webhooks', [
  { m: baseline },
  { m: accepted, baseline, target: '≥ 2,000 accepted/s, p99 < 50 ms' },
  { m: overload, target: 'excess refused with 503, p99 < 1 s, no timeouts' },
  {
    m: {
      name: `worker drain (${backlog} events, startup ${((drainStart - started) / 1000).toFixed(1)} s excluded)`,
      rps: Math.round(processed / drainSeconds),
      p50: 0,
      p99: 0,
      errors: 0,
      non2xx: 0,
      bytes: 0,
    },
    target: '≥ the accept rate',
  },
]);
process.exit(0);
