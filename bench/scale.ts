// The cost curve of one tenant as it grows: the tenant has 10,000, 100,000 and 1,000,000 customers
// (BENCH_SCALE_SIZES), loaded in bulk, each with a health snapshot computed a day ago, and 90 days of daily
// history up to BENCH_SCALE_HISTORY_UP_TO customers, 90 days of signals up to BENCH_SCALE_SIGNALS_UP_TO
// (BENCH_SCALE_SIGNAL_DAYS_ABOVE days past it). At each size, in turn (BENCH_SCALE_STAGES, each stage
// optionally `:<largest size>`):
// - `reads`: each read the dashboard and the API make of customers, against a bare route answering a body
//   of the same size, in alternating rounds; the figures at each size are set against the first size's;
// - `export`: the tenant's customers exported through the API as NDJSON and as CSV (time, API peak RSS);
// - `training`: churn training on BENCH_SCALE_LABELS labels, once, at the first size that has them;
// - `scoring`: the daily pass over the tenant in a worker process of its own (time, peak RSS);
// - `retention`: the retention pass in a process of its own, its clock moved on so that the oldest 30 of
//   the 90 days of signals and history are due at once (time, rows, peak RSS);
// and then `tenants`: 10, 100 and 1,000 tenants (BENCH_SCALE_TENANTS) sending signed inbound events at
// once, accepted by one API process and drained by one worker (bench/scale-tenants.ts). The database's
// size per customer per day is measured where signals and history are loaded.
import pg from 'pg';
import { issueApiKey } from '../src/services/api-keys.ts';
import { createPrisma } from '../src/db/prisma.ts';
import {
  alternate,
  freshDatabase,
  insertChurnLabels,
  load1,
  type Measured,
  measureStream,
  rssMiB,
  serviceEnv,
  startProcess,
  writeResult,
} from './lib.ts';
import { manyTenants, type TenantsRow } from './scale-tenants.ts';

const url = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/chs_bench';
const SIZES = (process.env.BENCH_SCALE_SIZES ?? '10000,100000,1000000').split(',').map(Number);
const HISTORY_UP_TO = Number(process.env.BENCH_SCALE_HISTORY_UP_TO ?? 100_000);
const SIGNALS_UP_TO = Number(process.env.BENCH_SCALE_SIGNALS_UP_TO ?? 10_000);
const SIGNAL_DAYS_ABOVE = Number(process.env.BENCH_SCALE_SIGNAL_DAYS_ABOVE ?? 0);
const DAYS = 90;
const LABELS = Number(process.env.BENCH_SCALE_LABELS ?? 10_000);
const TENANTS = (process.env.BENCH_SCALE_TENANTS ?? '10,100,1000').split(',').map(Number);
// Each stage, with the largest size it runs at (none: every size).
const STAGES = new Map(
  (process.env.BENCH_SCALE_STAGES ?? 'reads,export,training,scoring,retention,tenants').split(',').map((x) => {
    const [name, upTo] = x.split(':');
    return [name!, upTo ? Number(upTo) : Infinity] as const;
  }),
);
const runs = (stage: string, size = 0) => size <= (STAGES.get(stage) ?? -1);
// Signals are kept 400 days by default; the retention pass runs with its clock this far ahead, so that
// the oldest third of the days of signals loaded is due (history, kept 400 days, from the same day).
const retentionAheadDays = (signalDays: number) => 400 - Math.round((signalDays * 2) / 3);
const rounds = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 2));
const roundS = Math.max(1, Number(process.env.BENCH_DURATION_S ?? 3));
const connections = Number(process.env.BENCH_CONNECTIONS ?? 4);

/** One tenant of `n` customers, with snapshots, and history and signals where the size allows; seconds per step. */
async function seed(db: pg.Client, tenantId: string, n: number): Promise<{ history: boolean; signals: number; signalDays: number }> {
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
            1, -2, 'usage', now() - interval '1 day'
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
  const signalDays = n <= SIGNALS_UP_TO ? DAYS : SIGNAL_DAYS_ABOVE;
  if (signalDays > 0) {
    // Two a day each: product use and chat.
    await step(
      `${signalDays} days of signals`,
      `INSERT INTO signals (id, tenant_id, customer_id, source, kind, occurred_at, value, sentiment, attributes)
       SELECT gen_random_uuid(), c.tenant_id, c.id, k.source, k.kind, now() - random() * interval '${signalDays} days', 1,
              CASE WHEN k.source IN ('slack', 'intercom') THEN random() - 0.4 END, jsonb_build_object('actor', 'u' || floor(random() * 8))
       FROM customers c, generate_series(1, ${signalDays}) d,
            (VALUES ('api', 'usage.event'), ('slack', 'chat.message')) AS k(source, kind)
       WHERE c.tenant_id = $1`,
      [tenantId],
    );
    signals = Number((await db.query('SELECT count(*) AS n FROM signals')).rows[0].n);
  }
  await db.query('ALTER TABLE signals ENABLE TRIGGER USER');
  await step('vacuum analyze', 'VACUUM ANALYZE');
  return { history, signals, signalDays };
}

interface Row {
  size: number;
  scenario: string;
  m: Measured;
  baseline: Measured;
}
const rows: Row[] = [];
const sizes: string[] = [];
const exports: (Awaited<ReturnType<typeof measureStream>> & { size: number; format: string; load: number })[] = [];
interface PassResult {
  seconds: number;
  rssStart: number;
  rssMax: number;
  rssEnd: number;
  computed?: number;
  processed?: Record<string, number>;
  finished?: boolean;
  samples?: number;
  outcome?: string;
  /** Retention: rows older than this many days were due. */
  dueAfterDays?: number;
}
const passes: (PassResult & { size: number; mode: 'scoring' | 'retention'; load: number })[] = [];
let trained: (PassResult & { size: number; load: number }) | undefined;
let trainedByApi: (Awaited<ReturnType<typeof trainThroughApi>> & { size: number; load: number }) | undefined;

/**
 * A training as a tenant starts it (GraphQL `startChurnTraining`, not put in use, so the scoring pass after
 * it finds nothing queued by it), then read every 2 s until it has ended: how long the request took to be
 * answered, and how long the training ran.
 */
async function trainThroughApi(base: string, headers: Record<string, string>) {
  const gql = async (query: string, variables: object = {}) => {
    const res = await fetch(`${base}/graphql`, { method: 'POST', headers, body: JSON.stringify({ query, variables }) });
    const body = (await res.json()) as {
      data?: Record<string, { id: string; status: string; result: { samples: number; kind: string } | null }>;
    };
    if (!body.data) throw new Error(`training through the API: ${res.status} ${JSON.stringify(body)}`);
    return Object.values(body.data)[0]!;
  };
  const fields = 'id status result { samples kind }';
  const started = performance.now();
  let run = await gql(`mutation { startChurnTraining(activate: false, wait: true) { ${fields} } }`);
  const answeredS = (performance.now() - started) / 1000;
  while (run.status === 'running') {
    await new Promise((r) => setTimeout(r, 2000));
    run = await gql(`query($id: UUID!) { churnTraining(id: $id) { ${fields} } }`, { id: run.id });
  }
  return {
    answeredS,
    endedS: (performance.now() - started) / 1000,
    status: run.status,
    samples: run.result?.samples,
    kind: run.result?.kind,
  };
}

/** A worker pass (bench/scale-pass.ts) in a process of its own, under tsx as bench/scoring.ts runs its pass. */
async function pass(mode: 'scoring' | 'training' | 'retention', env: Record<string, string> = {}): Promise<PassResult> {
  const child = await startProcess(
    ['bench/scale-pass.ts', mode],
    {
      DATABASE_URL: url,
      RETENTION_MAX_S: process.env.BENCH_SCALE_RETENTION_MAX_S ?? '600',
      ...env,
    },
    /RESULT (\{.*\})\n/,
    { fromSource: true, readyTimeoutMs: 3_600_000 },
  );
  const result = JSON.parse(/RESULT (\{.*\})\n/.exec(child.output)![1]!) as PassResult;
  await new Promise((r) => (child.child.exitCode === null ? child.child.once('exit', r) : r(null)));
  return result;
}
const tenantRows: TenantsRow[] = [];

// Without a stage of its own, no size is loaded (a run of `tenants` alone).
const perSize = ['reads', 'export', 'training', 'scoring', 'retention'].some((x) => STAGES.has(x));
for (const n of perSize ? SIZES : []) {
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
      ? `signals ${Math.round((await sizeOf(['signals', 'signal_rollups'])) / n / loaded.signalDays)} B (${(loaded.signals / n / loaded.signalDays).toFixed(1)} a day, ${loaded.signalDays} days, ${loaded.signals.toLocaleString('en')} rows)`
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
  for (const s of runs('reads', n) ? scenarios : []) {
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

  if (runs('export', n)) {
    // A first small export warms the code paths, so the peak is the stream's, not the first load's.
    await fetch(`${base}/api/v1/exports/alerts`, { headers }).then((r) => r.text());
    for (const format of ['ndjson', 'csv'] as const) {
      const r = await measureStream(`export ${format}`, service.child.pid!, `${base}/api/v1/exports/customers?format=${format}`, headers);
      if (r.status !== 200 || r.lines < n) throw new Error(`export ${format}: ${r.status}, ${r.lines} lines`);
      exports.push({ size: n, format, ...r, load: load1() });
    }
  }

  const trainingHere = runs('training', n) && !trained && n >= LABELS;
  if (trainingHere) {
    // Labels for training, half of them churned: trained first through the API, as a tenant trains, then
    // in a process of its own for its memory alone.
    const db = new pg.Client(url);
    await db.connect();
    await insertChurnLabels(db, tenant.id, LABELS);
    await db.query('ANALYZE churn_outcomes');
    await db.end();
    trainedByApi = { size: n, ...(await trainThroughApi(base, headers)), load: load1() };
    console.log('training through the API', trainedByApi);
  }

  // Gone before the next size's process starts, which may draw the same port.
  const exited = new Promise((r) => service.child.once('exit', r));
  service.child.kill('SIGTERM');
  await exited;

  if (trainingHere) {
    const r = await pass('training', { TENANT_ID: tenant.id });
    trained = { size: n, load: load1(), ...r };
    console.log('training', trained);
  }

  for (const mode of ['scoring', 'retention'] as const) {
    if (!runs(mode, n)) continue;
    const ahead = retentionAheadDays(loaded.signalDays);
    const result = await pass(mode, { RETENTION_AHEAD_DAYS: String(ahead) });
    if (mode === 'retention') result.dueAfterDays = 400 - ahead;
    passes.push({ size: n, mode, ...result, load: load1() });
    console.log(mode, n, result);
  }
  writeAll();
}

if (runs('tenants')) {
  tenantRows.push(
    ...(await manyTenants(url, TENANTS, {
      durationS: Number(process.env.BENCH_SCALE_TENANT_SECONDS ?? 10),
      connections: Number(process.env.BENCH_SCALE_TENANT_CONNECTIONS ?? 20),
      customersPerTenant: 100,
    })),
  );
  writeAll();
}
process.exit(0);

function writeAll() {
  const first = SIZES[0]!;
  const of = (size: number, scenario: string) => rows.find((r) => r.size === size && r.scenario === scenario);
  const TARGET = 1.5;
  const mib = (x: { idle: number; peak: number }) => `${x.idle} → ${x.peak} (+${x.peak - x.idle})`;
  const passRow = (p: (typeof passes)[number]) =>
    p.mode === 'scoring'
      ? `| ${p.size.toLocaleString('en')} | scoring | ${p.computed!.toLocaleString('en')} customers | ${p.seconds.toFixed(1)} | ${Math.round(p.computed! / p.seconds).toLocaleString('en')} customers/s | ${p.rssStart} → ${p.rssEnd} (max ${p.rssMax}) | ${p.load} |`
      : `| ${p.size.toLocaleString('en')} | retention, older than ${p.dueAfterDays} days${p.finished ? '' : ' (stopped: time bound)'} | ${Object.entries(
          p.processed!,
        )
          .filter(([, v]) => v > 0)
          .map(([k, v]) => `${k} ${v.toLocaleString('en')}`)
          .join(
            ', ',
          )} | ${p.seconds.toFixed(1)} | ${Math.round(Object.values(p.processed!).reduce((a, b) => a + b, 0) / p.seconds).toLocaleString('en')} rows/s | ${p.rssStart} → ${p.rssEnd} (max ${p.rssMax}) | ${p.load} |`;
  writeResult('Scale', [
    `One tenant of ${SIZES.map((s) => s.toLocaleString('en')).join(', ')} customers; stages ${[...STAGES].map(([k, v]) => (v === Infinity ? k : `${k} up to ${v.toLocaleString('en')}`)).join(', ')}.`,
    '',
    `Reads: ${connections} connections, ${rounds} alternating rounds of ${roundS} s against a bare route answering the same body.`,
    `"vs ${first.toLocaleString('en')}" sets each figure against the same read at the first size (target: ≤ ${TARGET}× for CPU per request and p50). The machine is shared: single figures are noisy.`,
    '',
    '| customers | read | p50 ms | p99 ms | CPU µs/req | CPU/req vs bare | p50 vs first size | CPU/req vs first size | met | load avg |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map((r) => {
      const base = of(first, r.scenario);
      const p50 = base ? r.m.p50 / Math.max(base.m.p50, 1) : NaN;
      const cpu = base ? r.m.cpuUs! / base.m.cpuUs! : NaN;
      const met = r.size === first ? '' : p50 <= TARGET && cpu <= TARGET ? 'yes' : 'no';
      return `| ${r.size.toLocaleString('en')} | ${r.scenario} | ${r.m.p50} | ${r.m.p99} | ${r.m.cpuUs} | ${(r.m.cpuUs! / r.baseline.cpuUs!).toFixed(2)}× | ${p50.toFixed(2)}× | ${cpu.toFixed(2)}× | ${met} | ${r.m.loadAvg} |`;
    }),
    '',
    "Exports of the tenant's customers through the API (the client keeps nothing; API RSS sampled every 20 ms):",
    '',
    '| customers | format | lines | MiB | seconds | rows/s | API CPU s | API RSS MiB idle → peak | load avg |',
    '|---|---|---|---|---|---|---|---|---|',
    ...exports.map(
      (e) =>
        `| ${e.size.toLocaleString('en')} | ${e.format} | ${e.lines.toLocaleString('en')} | ${e.mib.toFixed(1)} | ${e.seconds.toFixed(1)} | ${Math.round(e.lines / e.seconds).toLocaleString('en')} | ${e.cpu.toFixed(1)} | ${mib(e)} | ${e.load} |`,
    ),
    '',
    'Worker passes, each in a process of its own (RSS sampled every 250 ms); retention with its clock moved ahead, so that the oldest third of the days of signals loaded, and history as old, are due at once:',
    '',
    '| customers | pass | work | seconds | rate | RSS MiB start → end (max) | load avg |',
    '|---|---|---|---|---|---|---|',
    ...passes.map(passRow),
    '',
    trained
      ? `Churn training (not put in use) in a process of its own on ${trained.samples?.toLocaleString('en')} labels of the ${trained.size.toLocaleString('en')}-customer tenant (${trained.outcome}): ${trained.seconds.toFixed(1)} s, RSS ${trained.rssStart} → ${trained.rssEnd} (max ${trained.rssMax}) MiB (load avg ${trained.load}).`
      : 'Churn training: not run.',
    '',
    trainedByApi
      ? `The same training through the API (\`startChurnTraining(activate: false)\`, which waits about 20 s, then read every 2 s): answered in ${trainedByApi.answeredS.toFixed(1)} s, ${trainedByApi.status} (${trainedByApi.kind ?? '–'}, ${trainedByApi.samples?.toLocaleString('en') ?? '–'} labels) after ${trainedByApi.endedS.toFixed(1)} s (load avg ${trainedByApi.load}).`
      : 'Churn training through the API: not run.',
    '',
    ...(tenantRows.length
      ? [
          'Many tenants: each sends signed Stripe events to its own inbound route, spread evenly, to one API process; then one worker drains the backlog.',
          '',
          '| tenants | accepted/s | p50 ms | p99 ms | API CPU µs/req | non-2xx | API RSS MiB | drained/s (one worker) | worker CPU µs/event | worker RSS MiB | load avg |',
          '|---|---|---|---|---|---|---|---|---|---|---|',
          ...tenantRows.map(
            (t) =>
              `| ${t.tenants.toLocaleString('en')} | ${t.accept.rps} | ${t.accept.p50} | ${t.accept.p99} | ${t.accept.cpuUs} | ${t.accept.non2xx} | ${t.apiRss} | ${t.drain.rps} (${t.drain.total} events) | ${t.drain.cpuUs} | ${t.workerRss} | ${t.drain.loadAvg} |`,
          ),
          '',
        ]
      : []),
    'Storage:',
    ...sizes,
  ]);
}
