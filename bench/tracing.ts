// What tracing costs: the same reads and the same inbound accepts, on two API processes over one database,
// one with tracing off and one exporting every span over OTLP/HTTP to a receiver that discards them, in
// alternating rounds (lib.ts alternate), so a busy spell of the machine falls on both.
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import pg from 'pg';
import { issueApiKey } from '../src/services/api-keys.ts';
import { createPrisma } from '../src/db/prisma.ts';
import {
  BENCH_ENCRYPTION_KEY as ENCRYPTION_KEY,
  alternate,
  freshDatabase,
  insertCustomers,
  report,
  rssMiB,
  serviceEnv,
  signedStripeInvoices,
  spreadOf,
  startProcess,
  alternatingRounds,
} from './lib.ts';

const url = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/chs_bench';
const amqp = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
const { rounds, roundS, connections } = alternatingRounds();
const SECRET = 'whsec_bench_secret_0123456789';
const prefix = `chs-bench-${randomUUID().slice(0, 6)}`;

await freshDatabase(url);
const prisma = createPrisma({ url, poolSize: 2 });
const tenant = await prisma.tenant.create({ data: { name: 'Bench', plan: 'scale' } });
const { secret: apiKey } = await issueApiKey(prisma, { tenantId: tenant.id, name: 'bench' });
await prisma.$disconnect();
const db = new pg.Client(url);
await db.connect();
await insertCustomers(db, tenant.id, 10_000);
await db.query('ANALYZE');
await db.end();

// A collector that takes every export and keeps nothing: what is measured is the service's side.
let exports = 0;
const sink = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    exports++;
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});
await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
const sinkUrl = `http://127.0.0.1:${(sink.address() as { port: number }).port}`;

const start = async (tracing: Record<string, string>) => {
  const port = 3900 + Math.floor(Math.random() * 90);
  const api = await startProcess(
    ['src/main.ts', 'api'],
    serviceEnv(url, { PORT: String(port), RATE_LIMIT_SCALE: '100000000', AMQP_URL: amqp, AMQP_PREFIX: prefix, ...tracing }),
    /listening on/,
  );
  return { api, base: `http://127.0.0.1:${port}` };
};
const off = await start({});
const on = await start({ OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl });
await startProcess(
  ['src/cli/admin.ts', 'inbound:secret', '--tenant', tenant.id, '--provider', 'stripe', '--secret', SECRET],
  { DATABASE_URL: url, ENCRYPTION_KEY },
  /"secret"/,
);

const headers = { authorization: `Bearer ${apiKey}` };
let sequence = 0;
const path = `/api/v1/webhooks/in/stripe/${tenant.id}`;
const accepts = () => [signedStripeInvoices(path, SECRET, () => `cus_bench_${sequence++ % 1000}`)];
const sides = (name: string, opts: (s: typeof on) => object) =>
  alternate(
    { baseline: `${name}, tracing off`, server: `${name}, tracing on (every span exported)` },
    {
      baseline: { ...opts(off), connections, pids: [off.api.child.pid!] } as never,
      server: { ...opts(on), connections, pids: [on.api.child.pid!] } as never,
      rounds,
      durationS: roundS,
    },
  );

const results = [];
const TARGET = 'CPU/req and p99 of tracing on vs off, reported';
for (const [name, opts] of [
  ['GET /api/v1/customers (25 per page)', (s: typeof on) => ({ url: `${s.base}/api/v1/customers?limit=25`, headers })],
  ['POST /api/v1/webhooks/in/stripe/{tenant}', (s: typeof on) => ({ url: s.base, requests: accepts() })],
] as const) {
  const { baseline, server, rounds: measured } = await sides(name, opts);
  results.push({ m: baseline }, { m: server, baseline, target: TARGET, met: `rounds: ${spreadOf(measured, (x) => x.cpuUs!)}` });
}
const rss = { off: rssMiB(off.api.child.pid!), on: rssMiB(on.api.child.pid!) };
off.api.child.kill('SIGTERM');
on.api.child.kill('SIGTERM');
sink.close();
for (const topic of ['inbound.events', 'outbound.deliveries'])
  for (const suffix of ['', '.retry', '.dead'])
    spawnSync('rabbitmqctl', ['-q', 'delete_queue', `${prefix}.${topic}${suffix}`], { stdio: 'ignore' });
report('Tracing on vs off', results, [`RSS after the load: ${rss.off} MiB off, ${rss.on} MiB on; OTLP exports received: ${exports}`]);
process.exit(0);
