// Soak: an API and a worker process under steady mixed traffic for BENCH_SOAK_S seconds (default 600):
// signed inbound events, REST reads and GraphQL queries, paced well under capacity. It samples each
// process's RSS and reports growth from the first to the last minute, then checks every queue drains.
import { spawnSync } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import type { Request } from 'autocannon';
import { issueApiKey } from '../src/services/api-keys.ts';
import { createPrisma } from '../src/db/prisma.ts';
import { freshDatabase, load, rssMiB, startProcess, writeResult, type Measured } from './lib.ts';

const url = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/chs_bench';
const amqp = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
const seconds = Number(process.env.BENCH_SOAK_S ?? 600);
const SECRET = 'whsec_soak_secret_0123456789';
const prefix = `chs-soak-${randomUUID().slice(0, 6)}`;

await freshDatabase(url);
const db = createPrisma({ url, poolSize: 2 });
const tenant = await db.tenant.create({ data: { name: 'Soak', plan: 'scale' } });
const { secret: apiKey } = await issueApiKey(db, { tenantId: tenant.id, name: 'soak' });
for (let i = 0; i < 200; i++) {
  const c = await db.customer.create({ data: { tenantId: tenant.id, name: `Soak customer ${i}`, externalId: `soak-${i}` } });
  await db.customerIdentity.create({ data: { tenantId: tenant.id, customerId: c.id, provider: 'stripe', externalId: `cus_soak_${i}` } });
}

const common = {
  DATABASE_URL: url,
  ENCRYPTION_KEY: `soak:${Buffer.alloc(32, 3).toString('base64')}`,
  AMQP_URL: amqp,
  AMQP_PREFIX: prefix,
  SESSION_SECRET: 'soak-session-secret-0123456789abcdefghijkl',
  SEED_DEMO: 'never',
  REDIS_URL: '',
  NODE_ENV: 'production',
  LOG_LEVEL: 'warn',
  RATE_LIMIT_SCALE: '100000000',
};
const port = 3900 + Math.floor(Math.random() * 40);
const api = await startProcess(
  ['src/main.ts', 'api'],
  { ...common, LOG_LEVEL: 'info', PORT: String(port), HOST: '127.0.0.1' },
  /listening on/,
);
const worker = await startProcess(['src/main.ts', 'worker'], { ...common, LOG_LEVEL: 'info' }, /worker started/);
await startProcess(
  ['src/cli/admin.ts', 'inbound:secret', '--tenant', tenant.id, '--provider', 'stripe', '--secret', SECRET],
  common,
  /"secret"/,
);

let n = 0;
const inbound: Request[] = [
  {
    method: 'POST',
    path: `/api/v1/webhooks/in/stripe/${tenant.id}`,
    setupRequest: (req) => {
      const i = n++;
      const body = JSON.stringify({
        id: `evt_${randomUUID().replaceAll('-', '')}`,
        object: 'event',
        type: i % 3 === 0 ? 'invoice.payment_failed' : 'invoice.paid',
        created: Math.floor(Date.now() / 1000),
        data: {
          object: {
            id: `in_soak_${i}`,
            object: 'invoice',
            customer: `cus_soak_${i % 200}`,
            status: i % 3 === 0 ? 'open' : 'paid',
            total: 4900,
            amount_due: 4900,
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
const auth = { 'x-api-key': apiKey };
const graphql: Request[] = [
  {
    method: 'POST',
    path: '/graphql',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({
      query:
        '{ customers(first: 25, orderBy: { field: healthScore, direction: asc }) { nodes { id name healthScore churnProbability health { trend { d7 } } } } portfolio { customers atRisk openAlerts } }',
    }),
  },
];

const samples: { at: number; api: number; worker: number }[] = [];
const started = Date.now();
const sampler = setInterval(
  () => samples.push({ at: (Date.now() - started) / 1000, api: rssMiB(api.child.pid!), worker: rssMiB(worker.child.pid!) }),
  5000,
);
const base = `http://127.0.0.1:${port}`;
const results: Measured[] = await Promise.all([
  load('inbound Stripe events, paced at 200/s', { url: base, requests: inbound, durationS: seconds, connections: 40, rate: 200 }),
  load('GET /api/v1/customers, paced at 100/s', {
    url: `${base}/api/v1/customers?limit=25`,
    headers: auth,
    durationS: seconds,
    connections: 20,
    rate: 100,
  }),
  load('GraphQL customers + portfolio, paced at 50/s', { url: base, requests: graphql, durationS: seconds, connections: 10, rate: 50 }),
]);
clearInterval(sampler);

// Drained: nothing received but unprocessed, no outbox row waiting, no customer due for scoring.
const drainStart = Date.now();
let backlog = { inbox: -1, outbox: -1, scoring: -1 };
while (Date.now() - drainStart < 120_000) {
  const [inbox, outbox, scoring] = await Promise.all([
    db.inboxEvent.count({ where: { status: 'received' } }),
    db.outboxPending.count(),
    db.scoringQueue.count({ where: { dueAt: { lte: new Date() } } }),
  ]);
  backlog = { inbox, outbox, scoring };
  if (inbox + outbox + scoring === 0) break;
  await new Promise((r) => setTimeout(r, 1000));
}
const drainS = ((Date.now() - drainStart) / 1000).toFixed(1);
const processed = await db.inboxEvent.count({ where: { status: 'processed' } });
const scored = await db.healthSnapshot.count();
await db.$disconnect();
api.child.kill('SIGTERM');
worker.child.kill('SIGTERM');
for (const topic of ['inbound.events', 'outbound.deliveries']) {
  for (const suffix of ['', '.retry', '.dead'])
    spawnSync('rabbitmqctl', ['-q', 'delete_queue', `${prefix}.${topic}${suffix}`], { stdio: 'ignore' });
}

// Growth compares the second minute (after warm-up) with the last minute.
const window = (from: number, to: number, key: 'api' | 'worker') => {
  const xs = samples.filter((s) => s.at >= from && s.at < to).map((s) => s[key]);
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN;
};
const growth = (key: 'api' | 'worker') => {
  const early = window(60, 120, key);
  const late = window(seconds - 60, seconds + 1, key);
  return { early: Math.round(early), late: Math.round(late), pct: ((late / early - 1) * 100).toFixed(1) };
};
const g = { api: growth('api'), worker: growth('worker') };
writeResult('Soak', [
  `${seconds} s of mixed traffic against one API and one worker process (RabbitMQ, PostgreSQL on the same 2 cores).`,
  '',
  '| traffic | req/s | p50 ms | p99 ms | errors | non-2xx |',
  '|---|---|---|---|---|---|',
  ...results.map((m) => `| ${m.name} | ${m.rps} | ${m.p50} | ${m.p99} | ${m.errors} | ${m.non2xx} |`),
  '',
  '| process | RSS MiB, 2nd minute | RSS MiB, last minute | growth | target |',
  '|---|---|---|---|---|',
  `| API | ${g.api.early} | ${g.api.late} | ${g.api.pct} % | < 10 % |`,
  `| worker | ${g.worker.early} | ${g.worker.late} | ${g.worker.pct} % | < 10 % |`,
  '',
  `After the load: ${processed} inbound events processed, ${scored} customers scored; queues ${
    backlog.inbox + backlog.outbox + backlog.scoring === 0
      ? `drained in ${drainS} s`
      : `NOT drained after ${drainS} s: ${JSON.stringify(backlog)}`
  }.`,
]);
process.exit(0);
