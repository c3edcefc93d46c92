// Outbound deliveries: throughput to a local HTTPS receiver that answers after 20 ms, against a bare
// sender posting the same signed requests at the worker's concurrency in the same run; then the latency
// from a signed Stripe event posted inbound to its delivery arriving, at a steady moderate rate.
import { spawnSync } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import https from 'node:https';
import { join } from 'node:path';
import { createPrisma } from '../src/db/prisma.ts';
import { createPool } from '../src/db/prisma.ts';
import { inTransaction } from '../src/db/sql.ts';
import { enqueueEvents } from '../src/outbox/events/enqueue.ts';
import { makeTestCertificate } from '../test/support/receiver.ts';
import { BENCH_ENCRYPTION_KEY as ENCRYPTION_KEY, freshDatabase, report, ROOT, startProcess } from './lib.ts';

const url = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/chs_bench';
const amqp = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
const ENDPOINTS = 10;
const EVENTS = Number(process.env.BENCH_OUTBOUND_EVENTS ?? 1000);
const RATE = Number(process.env.BENCH_LATENCY_RATE ?? 20);
const LATENCY_SECONDS = Number(process.env.BENCH_DURATION_S ?? 10);
const prefix = `chs-bench-${randomUUID().slice(0, 6)}`;
const tlsDir = join(ROOT, 'test-output', 'tls');
if (!existsSync(join(tlsDir, 'cert.pem'))) makeTestCertificate();

// The receiver: answers 200 after 20 ms; records when each delivery (by id) first arrived.
const arrivals = new Map<string, { at: number; total: string }>();
const receiver = https.createServer(
  { key: readFileSync(join(tlsDir, 'key.pem')), cert: readFileSync(join(tlsDir, 'cert.pem')) },
  (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const id = String(req.headers['x-webhook-id']);
      if (!arrivals.has(id)) arrivals.set(id, { at: Date.now(), total: JSON.parse(Buffer.concat(chunks).toString()).total });
      setTimeout(() => res.writeHead(200).end('ok'), 20);
    });
  },
);
await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
const hook = `https://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;

await freshDatabase(url);
const prisma = createPrisma({ url, poolSize: 2 });
const tenant = await prisma.tenant.create({ data: { name: 'Bench', plan: 'scale' } });
const { createSecretBox, parseEncryptionKeys } = await import('../src/crypto/secret-box.ts');
const box = createSecretBox(parseEncryptionKeys(ENCRYPTION_KEY));
for (let i = 0; i < ENDPOINTS; i++) {
  await prisma.webhookEndpoint.create({
    data: { tenantId: tenant.id, url: hook, events: ['invoice.created'], secret: box.seal(`whsec_bench_${i}`) },
  });
}
const pool = createPool(url, 2);
for (let i = 0; i < EVENTS; i += 500) {
  await inTransaction(pool, (sql) =>
    enqueueEvents(
      sql,
      Array.from({ length: Math.min(500, EVENTS - i) }, (_, j) => ({
        tenantId: tenant.id,
        type: 'invoice.created',
        payload: {
          tenant_id: tenant.id,
          invoice_id: randomUUID(),
          status: 'draft' as const,
          total: `${i + j}.00`,
          currency: 'usd',
          customer_id: null,
          due_at: null,
        },
        dedupKey: `b${i + j}`,
      })),
    ),
  );
}

const common = {
  DATABASE_URL: url,
  ENCRYPTION_KEY,
  AMQP_URL: amqp,
  AMQP_PREFIX: prefix,
  SESSION_SECRET: 'bench-session-secret-0123456789abcdefghijkl',
  SEED_DEMO: 'never',
  REDIS_URL: '',
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  // One tenant here: the measure is the worker's 64 slots, not how they are shared between tenants.
  DELIVERY_CONCURRENCY_PER_TENANT: '64',
  NODE_EXTRA_CA_CERTS: join(tlsDir, 'cert.pem'),
};
const expected = EVENTS * ENDPOINTS;
// Baseline: what this receiver takes from a bare sender on this machine, as many requests, same concurrency.
const bare = await startProcess(
  ['bench/bare-sender.ts'],
  { TARGET: hook, REQUESTS: String(expected), CONCURRENCY: '64', NODE_EXTRA_CA_CERTS: join(tlsDir, 'cert.pem') },
  /"rps"/,
);
const baseline = JSON.parse(/\{"rps".*\}/.exec(bare.output)![0]) as { rps: number; p50: number; p99: number };
arrivals.clear();

// Throughput: the worker works through the backlog of EVENTS × ENDPOINTS deliveries.
const worker = await startProcess(['src/main.ts', 'worker'], { ...common, LOG_LEVEL: 'info', WORKER_PREFETCH: '16' }, /worker started/);
const t0 = Date.now();
while (arrivals.size < expected && Date.now() - t0 < 300_000) await new Promise((r) => setTimeout(r, 100));
const throughput = Math.round(arrivals.size / ((Date.now() - t0) / 1000));

// Latency: signed Stripe invoice.created posted inbound at a steady rate, until delivered.
const port = 3960 + Math.floor(Math.random() * 30);
const api = await startProcess(
  ['src/main.ts', 'api'],
  { ...common, NODE_ENV: 'production', LOG_LEVEL: 'warn', PORT: String(port), HOST: '127.0.0.1' },
  /listening on/,
);
const SECRET = 'whsec_bench_inbound';
await startProcess(
  ['src/cli/admin.ts', 'inbound:secret', '--tenant', tenant.id, '--provider', 'stripe', '--secret', SECRET],
  common,
  /"secret"/,
);
const post = (i: number, amount: number) => {
  const body = JSON.stringify({
    id: `evt_l${i}_${randomUUID()}`,
    object: 'event',
    type: 'invoice.created',
    created: Math.floor(Date.now() / 1000),
    data: { object: { id: `in_l${i}_${randomUUID()}`, object: 'invoice', customer: 'cus_bench', total: amount, currency: 'usd' } },
  });
  const ts = Math.floor(Date.now() / 1000);
  return fetch(`http://127.0.0.1:${port}/api/v1/webhooks/in/stripe/${tenant.id}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'stripe-signature': `t=${ts},v1=${createHmac('sha256', SECRET).update(`${ts}.${body}`).digest('hex')}`,
    },
    body,
  });
};
// Warm-up: the first events load and compile the inbound path in both processes; they are not measured.
const before = arrivals.size;
for (let i = 0; i < 10; i++) await post(-1 - i, 500_000 + i);
while (arrivals.size < before + 10 * ENDPOINTS && Date.now() - t0 < 400_000) await new Promise((r) => setTimeout(r, 50));

const sent = new Map<string, number>();
const started = Date.now();
for (let i = 0; i < RATE * LATENCY_SECONDS; i++) {
  const due = started + (i * 1000) / RATE;
  if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
  const amount = 1_000_000 + i;
  sent.set((amount / 100).toFixed(2), Date.now());
  void post(i, amount);
}
const wanted = sent.size * ENDPOINTS;
const t1 = Date.now();
const latencyArrivals = () => [...arrivals.values()].filter((a) => sent.has(a.total));
while (latencyArrivals().length < wanted && Date.now() - t1 < 60_000) await new Promise((r) => setTimeout(r, 100));
// The latency of an event is when its first delivery arrived.
const firstByTotal = new Map<string, number>();
for (const a of latencyArrivals()) firstByTotal.set(a.total, Math.min(firstByTotal.get(a.total) ?? Infinity, a.at));
const latencies = [...firstByTotal.entries()].map(([total, at]) => at - sent.get(total)!).sort((a, b) => a - b);
const pct = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;

worker.child.kill('SIGTERM');
api.child.kill('SIGTERM');
receiver.close();
await pool.end();
await prisma.$disconnect();
for (const topic of ['inbound.events', 'outbound.deliveries']) {
  for (const suffix of ['', '.retry', '.dead'])
    spawnSync('rabbitmqctl', ['-q', 'delete_queue', `${prefix}.${topic}${suffix}`], { stdio: 'ignore' });
}
report('Outbound webhooks', [
  {
    m: {
      name: `deliveries to a receiver answering after 20 ms (${expected} = ${EVENTS} events × ${ENDPOINTS} endpoints, 64 at once)`,
      rps: throughput,
      p50: 0,
      p99: 0,
      errors: expected - Math.min(expected, arrivals.size),
      non2xx: 0,
      bytes: 0,
    },
    baseline: { name: 'bare sender', ...baseline, errors: 0, non2xx: 0, bytes: 0 },
    target: '≥ 1,000 deliveries/s',
  },
  {
    m: {
      name: `bare sender: the same signed POSTs, 64 at once, no database or queue (${expected})`,
      ...baseline,
      errors: 0,
      non2xx: 0,
      bytes: 0,
    },
    target: '(baseline)',
  },
  {
    m: {
      name: `inbound Stripe event → first delivery at ${RATE}/s for ${LATENCY_SECONDS} s (${latencies.length} of ${sent.size} delivered)`,
      rps: RATE,
      p50: pct(0.5),
      p99: pct(0.99),
      errors: sent.size - latencies.length,
      non2xx: 0,
      bytes: 0,
    },
    target: 'p99 < 500 ms end to end',
  },
]);
process.exit(0);
