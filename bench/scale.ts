// The cost curve of one tenant's reads as it grows: the tenant has 10,000, 100,000 and 1,000,000 customers
// (BENCH_SCALE_SIZES), loaded in bulk, each with a health snapshot, and 90 days of daily history up to
// BENCH_SCALE_HISTORY_UP_TO customers, 90 days of signals up to BENCH_SCALE_SIGNALS_UP_TO. Each read the
// dashboard and the API make of customers is measured against a bare route answering a body of the same
// size, in alternating rounds, at every size; the figures at each size are then set against the first
// size's. The database's size per customer per day is measured where signals and history are loaded.
import pg from 'pg';
import { issueApiKey } from '../src/services/api-keys.ts';
import { createPrisma } from '../src/db/prisma.ts';
import { alternate, freshDatabase, type Measured, rssMiB, serviceEnv, startProcess, writeResult } from './lib.ts';

const url = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/chs_bench';
const SIZES = (process.env.BENCH_SCALE_SIZES ?? '10000,100000,1000000').split(',').map(Number);
const HISTORY_UP_TO = Number(process.env.BENCH_SCALE_HISTORY_UP_TO ?? 100_000);
const SIGNALS_UP_TO = Number(process.env.BENCH_SCALE_SIGNALS_UP_TO ?? 10_000);
const DAYS = 90;
const rounds = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 2));
const roundS = Math.max(1, Number(process.env.BENCH_DURATION_S ?? 3));
const connections = Number(process.env.BENCH_CONNECTIONS ?? 4);

/** One tenant of `n` customers, with snapshots, and history and signals where the size allows; seconds per step. */
async function seed(db: pg.Client, tenantId: string, n: number): Promise<{ history: boolean; signals: number }> {
  const step = async (what: string, sql: string, values: unknown[] = []) => {
    const t = Date.now();
    await db.query(sql, values);
    console.log(`  ${n}: ${what} (${((Date.now() - t) / 1000).toFixed(1)} s)`);
  };
  // The recompute triggers stay off while seeding: seeding is not what is measured.
  await db.query('ALTER TABLE signals DISABLE TRIGGER USER');
  await step(
    'customers',
    `INSERT INTO customers (id, tenant_id, external_id, name, email, domain, health_score, health_status, churn_probability, churn_risk_level, created_at, updated_at)
     SELECT gen_random_uuid(), $1, 'ext-' || g, 'Customer ' || g, 'ops@c' || g || '.example', 'c' || g || '.example',
            (g % 101), (CASE WHEN g % 101 >= 75 THEN 'healthy' WHEN g % 101 >= 50 THEN 'neutral' ELSE 'at_risk' END)::"HealthStatus",
            (g % 100) / 100.0, (CASE WHEN g % 100 < 25 THEN 'low' WHEN g % 100 < 50 THEN 'medium' WHEN g % 100 < 75 THEN 'high' ELSE 'critical' END)::"RiskLevel",
            now() - g * interval '1 second', now()
     FROM generate_series(1, $2::int) g`,
    [tenantId, n],
  );
  await step(
    'health snapshots',
    `INSERT INTO health_snapshots (id, tenant_id, customer_id, score, status, dimensions, trend_7d, trend_30d, weakest_dimension, computed_at)
     SELECT gen_random_uuid(), tenant_id, id, health_score, health_status,
            jsonb_build_array(jsonb_build_object('key', 'usage', 'score', health_score, 'weight', 0.3, 'contribution', health_score * 0.3, 'trend', 1,
              'signals', jsonb_build_array(jsonb_build_object('key', 'active_users_30d', 'label', 'Active users', 'value', health_score)))),
            1, -2, 'usage', now()
     FROM customers WHERE tenant_id = $1`,
    [tenantId],
  );
  const history = n <= HISTORY_UP_TO;
  if (history)
    await step(
      `${DAYS} days of history`,
      `INSERT INTO health_history (customer_id, day, tenant_id, score, status, usage, engagement, support, billing, growth, churn_probability, computed_at)
       SELECT c.id, current_date - d, c.tenant_id, c.health_score, c.health_status, 60, 70, 80, 100, 70, c.churn_probability, now() - d * interval '1 day'
       FROM customers c, generate_series(1, ${DAYS}) d WHERE c.tenant_id = $1`,
      [tenantId],
    );
  let signals = 0;
  if (n <= SIGNALS_UP_TO) {
    // About two a day each, as the scoring bench's month of signals: product use, chat, pushes, support, billing.
    await step(
      `${DAYS} days of signals`,
      `INSERT INTO signals (id, tenant_id, customer_id, source, kind, occurred_at, value, sentiment, attributes)
       SELECT gen_random_uuid(), c.tenant_id, c.id, k.source, k.kind, now() - random() * interval '${DAYS} days', 1,
              CASE WHEN k.source IN ('slack', 'intercom') THEN random() - 0.4 END, jsonb_build_object('actor', 'u' || floor(random() * 8))
       FROM customers c, generate_series(1, ${DAYS}) d,
            (VALUES ('api', 'usage.event'), ('slack', 'chat.message')) AS k(source, kind)
       WHERE c.tenant_id = $1`,
      [tenantId],
    );
    signals = Number((await db.query('SELECT count(*) AS n FROM signals')).rows[0].n);
  }
  await db.query('ALTER TABLE signals ENABLE TRIGGER USER');
  await step('vacuum analyze', 'VACUUM ANALYZE');
  return { history, signals };
}

interface Row {
  size: number;
  scenario: string;
  m: Measured;
  baseline: Measured;
}
const rows: Row[] = [];
const sizes: string[] = [];

for (const n of SIZES) {
  await freshDatabase(url);
  const prisma = createPrisma({ url, poolSize: 2 });
  const tenant = await prisma.tenant.create({ data: { name: 'Bench', plan: 'scale' } });
  const { secret } = await issueApiKey(prisma, { tenantId: tenant.id, name: 'bench' });
  await prisma.$disconnect();
  const db = new pg.Client(url);
  await db.connect();
  const loaded = await seed(db, tenant.id, n);
  const ids = (await db.query<{ id: string }>('SELECT id FROM customers ORDER BY random() LIMIT 1000')).rows.map((r) => r.id);
  const sizeOf = async (relations: string[]) =>
    Number((await db.query('SELECT sum(pg_total_relation_size(r))::bigint AS b FROM unnest($1::regclass[]) r', [relations])).rows[0].b);
  const perCustomer = Math.round((await sizeOf(['customers', 'health_snapshots'])) / n);
  const perDay = [
    loaded.history ? `history ${Math.round((await sizeOf(['health_history'])) / n / DAYS)} B` : null,
    loaded.signals
      ? `signals ${Math.round((await sizeOf(['signals', 'signal_rollups'])) / n / DAYS)} B (${(loaded.signals / n / DAYS).toFixed(1)} a day)`
      : null,
  ].filter(Boolean);
  sizes.push(
    `- ${n.toLocaleString('en')} customers: ${perCustomer} B per customer (row, snapshot, indexes)${perDay.length ? `; per customer per day: ${perDay.join(', ')}` : ''}; database ${Math.round(Number((await db.query('SELECT pg_database_size(current_database()) AS b')).rows[0].b) / 1048576)} MiB`,
  );
  await db.end();

  const port = 3900 + Math.floor(Math.random() * 50);
  const service = await startProcess(
    ['src/main.ts', 'api'],
    // Load shedding off: on a shared machine a neighbour's burst would otherwise turn a measured read into a 503.
    serviceEnv(url, {
      PORT: String(port),
      RATE_LIMIT_SCALE: '100000000',
      AMQP_URL: process.env.AMQP_URL ?? '',
      MAX_EVENT_LOOP_DELAY_MS: '0',
    }),
    /listening on/,
  );
  const base = `http://127.0.0.1:${port}`;
  const headers = { authorization: `Bearer ${secret}`, 'content-type': 'application/json' };
  const pick = () => ids[Math.floor(Math.random() * ids.length)]!;
  const gql = (query: string) => ({ method: 'POST' as const, path: '/graphql', body: JSON.stringify({ query }) });
  const NODES = 'nodes { id name healthScore healthStatus churnProbability churnRiskLevel createdAt } pageInfo { hasNextPage endCursor }';
  const scenarios: { name: string; request: () => { method?: 'GET' | 'POST'; path: string; body?: string } }[] = [
    { name: 'customers page, default order (REST)', request: () => ({ path: '/api/v1/customers?limit=25' }) },
    ...(['name', 'healthScore', 'churnProbability'] as const).map((field) => ({
      name: `customers page by ${field} (GraphQL)`,
      request: () => gql(`{ customers(first: 25, orderBy: { field: ${field}, direction: asc }) { ${NODES} } }`),
    })),
    { name: 'customers page, risk_level=high (REST)', request: () => ({ path: '/api/v1/customers?limit=25&risk_level=high' }) },
    {
      name: 'dashboard search with totalCount (GraphQL)',
      request: () => gql(`{ customers(first: 25, search: "Customer ${1 + Math.floor(Math.random() * n)}") { totalCount ${NODES} } }`),
    },
    { name: 'totalCount (GraphQL)', request: () => gql('{ customers(first: 1) { totalCount nodes { id } } }') },
    {
      name: 'portfolio (GraphQL)',
      request: () => gql('{ portfolio { customers healthy neutral atRisk unscored highRisk averageScore openAlerts criticalAlerts } }'),
    },
    { name: "a customer's health (REST)", request: () => ({ path: `/api/v1/customers/${pick()}/health` }) },
    ...(loaded.history
      ? [{ name: "a customer's history, 30 days (REST)", request: () => ({ path: `/api/v1/customers/${pick()}/health/history?limit=30` }) }]
      : []),
  ];
  for (const s of scenarios) {
    const sample = s.request();
    // Asked again once: a connection kept alive from the last run may have been closed by the server meanwhile.
    const init = { method: sample.method ?? 'GET', headers, body: sample.body };
    const body = await (await fetch(`${base}${sample.path}`, init).catch(() => fetch(`${base}${sample.path}`, init))).text();
    if (body.includes('"errors"') || body.includes('"status":4') || body.includes('"status":5'))
      throw new Error(`${s.name}: ${body.slice(0, 400)}`);
    const bare = await startProcess(['bench/bare-server.ts'], { PORT: '0', BARE_BODY: body }, /bare listening on (\d+)/);
    const bareUrl = `http://127.0.0.1:${/bare listening on (\d+)/.exec(bare.output)![1]}/bare`;
    const { baseline, server } = await alternate(
      { baseline: `bare route, same body (${body.length} B)`, server: s.name },
      {
        baseline: { url: bareUrl, connections, pids: [bare.child.pid!] },
        server: {
          url: base,
          headers,
          connections,
          pids: [service.child.pid!],
          // A copy each time: autocannon writes the body's Content-Length into the headers it is given, which
          // the next read's sample request would then send with a body of another length.
          requests: [{ setupRequest: (r: object) => ({ ...r, ...s.request(), headers: { ...headers } }) }] as never,
        },
        rounds,
        durationS: roundS,
      },
    );
    bare.child.kill('SIGTERM');
    if (server.errors || server.non2xx) throw new Error(`${s.name}: ${server.errors} errors, ${server.non2xx} non-2xx`);
    rows.push({ size: n, scenario: s.name, m: server, baseline });
    console.log(`${n} ${s.name}: p50 ${server.p50} ms, p99 ${server.p99} ms, ${server.cpuUs} µs CPU/req (bare ${baseline.cpuUs})`);
  }
  console.log(`API RSS after ${n}: ${rssMiB(service.child.pid!)} MiB`);
  // Gone before the next size's process starts, which may draw the same port.
  const exited = new Promise((r) => service.child.once('exit', r));
  service.child.kill('SIGTERM');
  await exited;
}

const first = SIZES[0]!;
const of = (size: number, scenario: string) => rows.find((r) => r.size === size && r.scenario === scenario);
const TARGET = 1.5;
writeResult('Scale', [
  `One tenant of ${SIZES.map((s) => s.toLocaleString('en')).join(', ')} customers; ${connections} connections, ${rounds} alternating rounds of ${roundS} s against a bare route answering the same body.`,
  `"vs ${first.toLocaleString('en')}" sets each figure against the same read at the first size (target: ≤ ${TARGET}× for CPU per request and p50). The machine is shared: single figures are noisy.`,
  '',
  '| customers | read | p50 ms | p99 ms | CPU µs/req | CPU/req vs bare | p50 vs first size | CPU/req vs first size | met |',
  '|---|---|---|---|---|---|---|---|---|',
  ...rows.map((r) => {
    const base = of(first, r.scenario);
    const p50 = base ? r.m.p50 / Math.max(base.m.p50, 1) : NaN;
    const cpu = base ? r.m.cpuUs! / base.m.cpuUs! : NaN;
    const met = r.size === first ? '' : p50 <= TARGET && cpu <= TARGET ? 'yes' : 'no';
    return `| ${r.size.toLocaleString('en')} | ${r.scenario} | ${r.m.p50} | ${r.m.p99} | ${r.m.cpuUs} | ${(r.m.cpuUs! / r.baseline.cpuUs!).toFixed(2)}× | ${p50.toFixed(2)}× | ${cpu.toFixed(2)}× | ${met} |`;
  }),
  '',
  'Storage:',
  ...sizes,
]);
process.exit(0);
