// Read API under load: 10,000 customers, a page of 25 and a health breakdown, against a bare route.
import { randomUUID } from 'node:crypto';
import { issueApiKey } from '../src/auth/api-key-store.ts';
import { createPrisma } from '../src/db/prisma.ts';
import { composeHealth } from '../src/scoring/compose.ts';
import { DEFAULT_WEIGHTS, riskLevelFor } from '../src/scoring/dimensions.ts';
import { freshDatabase, load, report, startProcess } from './lib.ts';

const url = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/chs_bench';
const durationS = Number(process.env.BENCH_DURATION_S ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 20);
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
    const h = composeHealth(
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
  {
    NODE_ENV: 'production',
    DATABASE_URL: url,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    SESSION_SECRET: 'bench-session-secret-0123456789abcdefghijkl',
    ENCRYPTION_KEY: `bench:${Buffer.alloc(32, 9).toString('base64')}`,
    SEED_DEMO: 'never',
    RATE_LIMIT_SCALE: '100000000',
    REDIS_URL: '',
  },
  /listening on/,
);
const base = `http://127.0.0.1:${port}`;
const headers = { authorization: `Bearer ${secret}` };
const page = await (await fetch(`${base}/api/v1/customers?limit=25`, { headers })).text();
const health = await (await fetch(`${base}/api/v1/customers/${ids[42]}/health`, { headers })).text();

const results = [];
for (const [name, path, body] of [
  ['GET /api/v1/customers (25 per page)', '/api/v1/customers?limit=25', page],
  ['GET /api/v1/customers/{id}/health', null, health],
] as const) {
  const bare = await startProcess(['bench/bare-server.ts'], { BARE_BODY: body, PORT: '0' }, /bare listening on (\d+)/);
  const barePort = /bare listening on (\d+)/.exec(bare.output)![1];
  await load('warm-up', { url: `http://127.0.0.1:${barePort}/bare`, durationS: 2, connections });
  const baseline = await load(`bare route, same body (${body.length} B)`, {
    url: `http://127.0.0.1:${barePort}/bare`,
    durationS,
    connections,
  });
  bare.child.kill();
  const requests = path
    ? undefined
    : [
        {
          setupRequest: (r: { path: string }) => ({
            ...r,
            path: `/api/v1/customers/${ids[Math.floor(Math.random() * ids.length)]}/health`,
          }),
        },
      ];
  await load('warm-up', {
    url: `${base}${path ?? `/api/v1/customers/${ids[0]}/health`}`,
    headers,
    durationS: 2,
    connections,
    requests: requests as never,
  });
  const m = await load(name, {
    url: `${base}${path ?? `/api/v1/customers/${ids[0]}/health`}`,
    headers,
    durationS,
    connections,
    requests: requests as never,
  });
  results.push({ m: baseline }, { m, baseline, target: '≥ 40 % of bare, p99 < 50 ms' });
}
service.child.kill('SIGTERM');
report('Read API', results);
process.exit(0);
