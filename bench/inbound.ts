// Inbound webhooks under load: signed Stripe events accepted (stored + confirmed on RabbitMQ) against two
// bare Fastify routes in the same run: one that only checks the HMAC, and the honest baseline that checks
// it, inserts the raw event with a synchronous commit and publishes it with a confirm, one request at a
// time; then how fast one worker drains the backlog, of invoice.created and of invoice lifecycles. CPU time per request is charged to the server measured.
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { Request } from 'autocannon';
import { createPrisma } from '../src/db/prisma.ts';
import {
  BENCH_ENCRYPTION_KEY as ENCRYPTION_KEY,
  alternate,
  drainInbox,
  freshDatabase,
  load,
  machineTable,
  report,
  rssMiB,
  signedStripeInvoices,
  signedStripeLifecycles,
  spreadOf,
  startProcess,
  alternatingRounds,
} from './lib.ts';

const url = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/chs_bench';
const amqp = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
// The accept and its baseline alternate (lib.ts alternate).
const { durationS, rounds, roundS, connections } = alternatingRounds();
const SECRET = 'whsec_bench_secret_0123456789';
const prefix = `chs-bench-${randomUUID().slice(0, 6)}`;

await freshDatabase(url);
const prisma = createPrisma({ url, poolSize: 2 });
const tenant = await prisma.tenant.create({ data: { name: 'Bench', plan: 'scale' } });
// The honest baseline writes to a copy of the inbox table, with its indexes, so the worker never sees its rows.
await prisma.$executeRawUnsafe('CREATE TABLE bench_bare_inbox (LIKE inbox_events INCLUDING ALL)');
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
  return [signedStripeInvoices(path, SECRET, () => `cus_bench_${sequence++ % CUSTOMERS}`)];
}

const bare = await startProcess(['bench/bare-hmac-server.ts'], { SECRET, PORT: '0' }, /bare listening on (\d+)/);
const barePort = /bare listening on (\d+)/.exec(bare.output)![1];
const hmacOpts = { url: `http://127.0.0.1:${barePort}`, requests: signedRequests('/in'), connections, pids: [bare.child.pid!] };
await load('warm-up', { ...hmacOpts, durationS: 2 });
const hmacOnly = await load('bare route: HMAC check + 202 (no storage)', { ...hmacOpts, durationS });
bare.child.kill();

const honest = await startProcess(
  ['bench/bare-inbound-server.ts'],
  { SECRET, PORT: '0', DATABASE_URL: url, TENANT_ID: tenant.id, AMQP_URL: amqp, QUEUE: `${prefix}.bare` },
  /bare listening on (\d+)/,
);
const honestPort = /bare listening on (\d+)/.exec(honest.output)![1];
const honestOpts = { url: `http://127.0.0.1:${honestPort}`, requests: signedRequests('/in'), connections, pids: [honest.child.pid!] };
const path = `/api/v1/webhooks/in/stripe/${tenant.id}`;
const idleRss = rssMiB(api.child.pid!);
const apiOpts = { url: `http://127.0.0.1:${port}`, requests: signedRequests(path), connections, pids: [api.child.pid!] };
const {
  baseline,
  server: accepted,
  rounds: acceptRounds,
} = await alternate(
  {
    baseline: 'baseline: HMAC + INSERT (synchronous commit) + publish with confirm, one at a time',
    server: 'POST /api/v1/webhooks/in/stripe/{tenant} (stored + confirmed)',
  },
  { baseline: honestOpts, server: apiOpts, rounds, durationS: roundS },
);
honest.child.kill();
const loadedRss = rssMiB(api.child.pid!);

// Overload: twice the rate just sustained, from many more connections. The service should refuse the
// excess with a quick 503 (Retry-After) rather than let every request queue until it times out.
const offered = Math.max(100, Math.round(accepted.rps * 2));
const overload = await load(`same, offered at 2x (${offered}/s) from 400 connections`, {
  url: `http://127.0.0.1:${port}`,
  requests: signedRequests(path),
  durationS,
  connections: 400,
  rate: offered,
  pids: [api.child.pid!],
});

/** `workers` worker processes (one alone, unless asked) work through the backlog the load left behind (lib.ts drainInbox). */
const drainBacklog = (name: string, workers = 1) =>
  drainInbox(
    url,
    {
      ...common,
      ...(process.env.BENCH_PREFETCH ? { WORKER_PREFETCH: process.env.BENCH_PREFETCH } : {}),
      DATABASE_POOL_SIZE: process.env.BENCH_POOL ?? '24',
    },
    name,
    workers,
  );

const { m: drain, rss: workerRss } = await drainBacklog('one worker draining the backlog, invoice.created');
// The same, for invoices going draft → open → paid: three events per invoice, moments apart, in the same
// batches, each a transition of the one before (the accept itself costs the same for any event).
const lifecycleBacklog = (name: string) =>
  load(name, {
    url: `http://127.0.0.1:${port}`,
    requests: [signedStripeLifecycles(path, SECRET, (invoice) => `cus_bench_${invoice % CUSTOMERS}`)],
    durationS,
    connections,
    pids: [api.child.pid!],
  });
await lifecycleBacklog('invoice lifecycles, accepted to make a backlog');
const { m: lifecycleDrain } = await drainBacklog('one worker draining the backlog, invoices draft → open → paid');
// Scale-out: a backlog of the same kind drained by two worker processes.
await lifecycleBacklog('invoice lifecycles, accepted again to make a backlog');
const { m: twoWorkerDrain } = await drainBacklog('two workers draining the backlog, invoices draft → open → paid', 2);
api.child.kill('SIGTERM');
// The run's queues were named for it; remove them.
for (const topic of ['inbound.events', 'outbound.deliveries']) {
  for (const suffix of ['', '.retry', '.dead'])
    spawnSync('rabbitmqctl', ['-q', 'delete_queue', `${prefix}.${topic}${suffix}`], { stdio: 'ignore' });
}
spawnSync('rabbitmqctl', ['-q', 'delete_queue', `${prefix}.bare`], { stdio: 'ignore' });

report(
  'Inbound webhooks',
  [
    { m: hmacOnly },
    { m: baseline },
    {
      m: accepted,
      baseline,
      target: '≥ 1.5× the baseline accepted/s, p99 < 50 ms',
      met: `${accepted.rps >= 1.5 * baseline.rps && accepted.p99 < 50 ? 'yes' : 'no'} (rounds: ${spreadOf(acceptRounds, (m) => m.rps)})`,
    },
    {
      m: overload,
      target: 'excess refused with 503, p99 < 1 s, no timeouts',
      met: overload.p99 < 1000 && overload.errors === 0 ? 'yes' : 'no',
    },
    ...[drain, lifecycleDrain].map((m) => ({ m, target: '≥ 1.5× the accept rate', met: m.rps >= 1.5 * accepted.rps ? 'yes' : 'no' })),
    {
      m: twoWorkerDrain,
      target: 'faster than one worker',
      met: `${twoWorkerDrain.rps > lifecycleDrain.rps ? 'yes' : 'no'} (${(twoWorkerDrain.rps / Math.max(1, lifecycleDrain.rps)).toFixed(2)}× one worker)`,
    },
  ],
  ["Where the machine's CPU went (same runs):", '', ...machineTable([hmacOnly, baseline, accepted, drain, lifecycleDrain, twoWorkerDrain])],
);
console.log(`API RSS: ${idleRss} MiB idle, ${loadedRss} MiB after the accept load; worker RSS ${workerRss} MiB after the drain`);
process.exit(0);
