// Read API under load: 10,000 customers, a page of 25 over REST and over GraphQL and a health
// breakdown, each against a bare route answering the same body.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { issueApiKey } from '../src/services/api-keys.ts';
import { createPrisma } from '../src/db/prisma.ts';
import { overallHealth } from '../src/scoring/overall-score.ts';
import { DEFAULT_WEIGHTS, riskLevelFor } from '../src/scoring/dimensions.ts';
import { alternate, alternatingRounds, freshDatabase, report, rssMiB, serviceEnv, spreadOf, startProcess } from './lib.ts';

const url = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/chs_bench';
const { rounds, roundS, connections } = alternatingRounds();
const CUSTOMERS = 10_000;

await freshDatabase(url);
const prisma = createPrisma({ url, poolSize: 4 });
const tenant = await prisma.tenant.create({ data: { name: 'Bench', plan: 'scale' } });
const { secret } = await issueApiKey(prisma, { tenantId: tenant.id, name: 'bench' });
const ids: string[] = [];
for (let start = 0; start < CUSTOMERS; start += 1000) {
  const customers = [];
  const snapshots = [];
  for (let i = start; i < start + 1000; i++) {
    const id = randomUUID();
    ids.push(id);
    const s = (k: number) => (i * 7 + k * 13) % 101;
    const h = overallHealth(
      {
        usage: { score: s(1), signals: [{ key: 'active_users_30d', label: 'Active users', value: s(1) }] },
        engagement: { score: s(2) },
        support: { score: s(3) },
        billing: { score: s(4) },
        growth: { score: i % 5 ? s(5) : null },
      },
      DEFAULT_WEIGHTS,
    );
    const p = (100 - (h.score ?? 50)) / 100;
    customers.push({
      id,
      tenantId: tenant.id,
      name: `Customer ${i}`,
      externalId: `ext-${i}`,
      email: `ops@c${i}.example`,
      domain: `c${i}.example`,
      healthScore: h.score,
      healthStatus: h.status,
      churnProbability: p,
      churnRiskLevel: riskLevelFor(p),
    });
    snapshots.push({
      tenantId: tenant.id,
      customerId: id,
      score: h.score ?? 0,
      status: h.status ?? 'at_risk',
      dimensions: h.dimensions as object[],
      trend7d: 1,
      trend30d: -2,
      weakestDimension: h.weakestDimension,
    });
  }
  await prisma.customer.createMany({ data: customers });
  await prisma.healthSnapshot.createMany({ data: snapshots });
}
await prisma.$executeRawUnsafe('ANALYZE');
await prisma.$disconnect();

const port = 3900 + Math.floor(Math.random() * 50);
const service = await startProcess(
  ['src/main.ts', 'api'],
  serviceEnv(url, { PORT: String(port), RATE_LIMIT_SCALE: '100000000', AMQP_URL: process.env.AMQP_URL ?? '' }),
  /listening on/,
);
const base = `http://127.0.0.1:${port}`;
const headers = { authorization: `Bearer ${secret}` };
const idleRss = rssMiB(service.child.pid!);
const bare = await startProcess(
  ['bench/bare-read-server.ts'],
  { DATABASE_URL: url, TENANT_ID: tenant.id, PORT: '0' },
  /bare listening on (\d+)/,
);
const bareBase = `http://127.0.0.1:${/bare listening on (\d+)/.exec(bare.output)![1]}`;

const GRAPHQL = JSON.stringify({
  query:
    '{ customers(first: 25) { nodes { id name externalId healthScore healthStatus churnProbability churnRiskLevel createdAt } pageInfo { hasNextPage endCursor } } }',
});
const gqlRequest = { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: GRAPHQL };
/** A health read of a random customer, on either server. */
const randomHealth = (prefix: string) => [
  { setupRequest: (r: { path: string }) => ({ ...r, path: `${prefix}/customers/${ids[Math.floor(Math.random() * ids.length)]}/health` }) },
];
const scenarios = [
  { name: 'GET /api/v1/customers (25 per page)', path: '/api/v1/customers?limit=25', barePath: '/customers' },
  {
    name: 'GET /api/v1/customers/{id}/health',
    path: `/api/v1/customers/${ids[42]}/health`,
    barePath: `/customers/${ids[42]}/health`,
    requests: randomHealth('/api/v1'),
    bareRequests: randomHealth(''),
  },
  {
    name: 'POST /graphql, customers(first: 25)',
    path: '/graphql',
    barePath: '/graphql',
    init: gqlRequest,
    requests: [{ ...gqlRequest, path: '/graphql' }],
    bareRequests: [{ ...gqlRequest, path: '/graphql' }],
  },
];

// Statements per request, from PostgreSQL's count of transactions in the database (each statement outside a
// transaction is one): the baseline runs one per request; the service shares statements between requests.
const counter = new pg.Client(url);
await counter.connect();
const transactions = async () =>
  Number(
    (await counter.query('SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = current_database()')).rows[0].n,
  );

const READ_TARGET = 'CPU/req ≤ 1.5× baseline, p99 < 50 ms';
const results = [];
for (const { name, path, barePath, init, requests, bareRequests } of scenarios) {
  // The baseline must answer what the service answers, byte for byte, or the comparison means nothing.
  const ours = await (await fetch(`${base}${path}`, { headers, ...init })).text();
  const theirs = await (await fetch(`${bareBase}${barePath}`, init)).text();
  if (ours !== theirs) throw new Error(`the baseline answers differently for ${name}:\n${ours.slice(0, 400)}\n${theirs.slice(0, 400)}`);
  const bareOpts = { url: `${bareBase}${barePath}`, connections, requests: bareRequests as never, pids: [bare.child.pid!], transactions };
  const opts = { url: `${base}${path}`, headers, connections, requests: requests as never, pids: [service.child.pid!], transactions };
  const {
    baseline,
    server: m,
    rounds: measured,
  } = await alternate(
    { baseline: `baseline: bare Fastify + pg, same SQL, same body (${ours.length} B)`, server: name },
    { baseline: bareOpts, server: opts, rounds, durationS: roundS },
  );
  const met = m.cpuUs! <= 1.5 * baseline.cpuUs! && m.p99 < 50;
  const spread = spreadOf(measured, (x) => x.cpuUs!);
  results.push({ m: baseline }, { m, baseline, target: READ_TARGET, met: `${met ? 'yes' : 'no'} (rounds: ${spread})` });
}
const loadedRss = rssMiB(service.child.pid!);
bare.child.kill('SIGTERM');
service.child.kill('SIGTERM');
await counter.end();
report('Read API', results);
console.log(`API RSS: ${idleRss} MiB idle after start, ${loadedRss} MiB after the load`);
process.exit(0);
