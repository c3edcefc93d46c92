// Product usage events under load: POST /api/v1/events with one event and with batches of 50, against
// a bare Fastify route that parses the same body and answers 202. The API runs alone (events go
// straight to PostgreSQL; the scoring worker is another process and not started here).
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { Request } from 'autocannon';
import { issueApiKey } from '../src/services/api-keys.ts';
import { createPrisma } from '../src/db/prisma.ts';
import { freshDatabase, load, report, serviceEnv, startProcess } from './lib.ts';

const url = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/chs_bench';
const amqp = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
const durationS = Number(process.env.BENCH_DURATION_S ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 20);
const CUSTOMERS = 1000;

await freshDatabase(url);
const prisma = createPrisma({ url, poolSize: 2 });
const tenant = await prisma.tenant.create({ data: { name: 'Bench', plan: 'scale' } });
const { secret } = await issueApiKey(prisma, { tenantId: tenant.id, name: 'bench' });
await prisma.customer.createMany({
  data: Array.from({ length: CUSTOMERS }, (_, i) => ({ tenantId: tenant.id, name: `Customer ${i}`, externalId: `ext-${i}` })),
});
await prisma.$disconnect();

const prefix = `chs-bench-${randomUUID().slice(0, 6)}`;
const port = 3950 + Math.floor(Math.random() * 40);
const api = await startProcess(
  ['src/main.ts', 'api'],
  serviceEnv(url, {
    AMQP_URL: amqp,
    AMQP_PREFIX: prefix,
    PORT: String(port),
    // The plan limit would answer 429 within a second; the benchmark measures the work behind it.
    RATE_LIMIT_SCALE: '1000000000',
  }),
  /listening on/,
);

const events = (n: number): Request[] => [
  {
    method: 'POST',
    path: '/api/v1/events',
    setupRequest: (req) => ({
      ...req,
      headers: { 'content-type': 'application/json', 'x-api-key': secret },
      body: JSON.stringify({
        events: Array.from({ length: n }, () => ({
          external_id: `ext-${Math.floor(Math.random() * CUSTOMERS)}`,
          event: 'report.exported',
          properties: { format: 'pdf', pages: 3 },
          user_id: `user-${Math.floor(Math.random() * 20)}`,
        })),
      }),
    }),
  },
];
const barePath = (r: Request[]) => r.map((x) => ({ ...x, path: '/bare' }));

const bare = await startProcess(['bench/bare-server.ts'], { PORT: '0' }, /bare listening on (\d+)/);
const bareUrl = `http://127.0.0.1:${/bare listening on (\d+)/.exec(bare.output)![1]}`;
const apiUrl = `http://127.0.0.1:${port}`;
await load('warm-up', { url: apiUrl, requests: events(1), durationS: 2, connections });

const rows = [];
for (const n of [1, 50]) {
  const baseline = await load(`bare route, ${n} event${n > 1 ? 's' : ''} per request`, {
    url: bareUrl,
    requests: barePath(events(n)),
    durationS,
    connections,
  });
  const m = await load(`POST /api/v1/events, ${n} event${n > 1 ? 's' : ''} per request`, {
    url: apiUrl,
    requests: events(n),
    durationS,
    connections,
  });
  rows.push({ m: baseline }, { m: { ...m, name: `${m.name} (${(m.rps * n).toLocaleString('en')} events/s)` }, baseline });
  // Latency where it matters: at half the throughput just measured, not at saturation.
  const rate = Math.max(1, Math.floor(m.rps / 2));
  const paced = await load(`… paced at ${rate} req/s (${(rate * n).toLocaleString('en')} events/s)`, {
    url: apiUrl,
    requests: events(n),
    durationS,
    connections,
    rate,
  });
  rows.push({ m: paced, target: 'p99 < 50 ms' });
}
bare.child.kill();
api.child.kill('SIGTERM');
for (const topic of ['inbound.events', 'outbound.deliveries']) {
  for (const suffix of ['', '.retry', '.dead'])
    spawnSync('rabbitmqctl', ['-q', 'delete_queue', `${prefix}.${topic}${suffix}`], { stdio: 'ignore' });
}
report('Usage events', rows);
process.exit(0);
