// One tenant's heavy work against another tenant's ordinary reads, in one API process. Tenant B reads pages
// of its customers at a steady pace, alone and then while tenant A (Scale, 20,000 customers) uses what its
// plan allows of one kind of heavy work, far inside its rate limit:
// - `csv`, `ndjson`: 16 exports of A's customers at once, each started again as soon as it ends;
// - `graphql`: 8 clients each sending, again and again, a document of 10 aliased customer searches with
//   their `totalCount` (close to the cost limit);
// - `training`: churn training on 5,000 labelled customers, started again as soon as it ends.
// Reports B's success rate, p50 and p99 alone and beside each, the longest the process's event loop was
// held during the run beside (from its own /metrics), and what A got done meanwhile.
// BENCH_FAIRNESS_SCENARIOS picks scenarios (comma-separated); BENCH_FAIRNESS_LABEL names the build measured.
import { durationS, startApi, statusList, successRate, twoTenants, url } from './budgets.ts';
import { insertCustomers, load, type Measured, writeResult } from './lib.ts';
import pg from 'pg';

const EXPORTS = Number(process.env.BENCH_FAIRNESS_EXPORTS ?? 16);
const GRAPHQL_CLIENTS = Number(process.env.BENCH_FAIRNESS_GRAPHQL_CLIENTS ?? 8);
const A_CUSTOMERS = Number(process.env.BENCH_FAIRNESS_CUSTOMERS ?? 20_000);
const LABELS = Number(process.env.BENCH_FAIRNESS_LABELS ?? 5_000);
const SCENARIOS = (process.env.BENCH_FAIRNESS_SCENARIOS ?? 'csv,ndjson,graphql,training').split(',');
const LABEL = process.env.BENCH_FAIRNESS_LABEL ?? 'this build';
const METRICS_TOKEN = 'bench-fairness-metrics-token';
const { a, b } = await twoTenants();

const admin = new pg.Client({ connectionString: url });
await admin.connect();
await insertCustomers(admin, a.tenantId, A_CUSTOMERS);
// Labels for training, half of them churned.
await admin.query(
  `INSERT INTO churn_outcomes (id, tenant_id, customer_id, churned, at, source, created_at)
   SELECT gen_random_uuid(), c.tenant_id, c.id, (row_number() OVER () % 2 = 0), now() - interval '1 day', 'api', now()
   FROM (SELECT id, tenant_id FROM customers WHERE tenant_id = $1 ORDER BY id LIMIT $2) c`,
  [a.tenantId, LABELS],
);
await admin.query('ANALYZE');
await admin.end();

const auth = { authorization: `Bearer ${a.apiKey}` };
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs `once` on `clients` loops until `stop` says so; answers what each call reported done and how many were refused. */
async function loops(clients: number, stop: () => boolean, once: () => Promise<number | null>) {
  let done = 0;
  let refused = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (!stop()) {
        const n = await once().catch(() => null);
        if (n === null) {
          refused++;
          await pause(200);
        } else done += n;
      }
    }),
  );
  return { done, refused };
}

const exportOnce = (base: string, format: 'csv' | 'ndjson') => async () => {
  const res = await fetch(`${base}/api/v1/exports/customers?format=${format}`, { headers: auth });
  if (!res.ok || !res.body) {
    await res.body?.cancel();
    return null;
  }
  let rows = 0;
  const reader = res.body.getReader();
  for (let r = await reader.read(); !r.done; r = await reader.read()) rows += r.value.reduce((n, byte) => n + (byte === 10 ? 1 : 0), 0);
  return rows;
};

const SEARCHES = Array.from(
  { length: 10 },
  (_, i) =>
    `s${i}: customers(search: "customer ${i + 1}", first: 50) { totalCount nodes { id name email domain healthScore healthStatus } }`,
).join('\n');
const graphqlOnce = (base: string) => async () => {
  const res = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ query: `query Searches {\n${SEARCHES}\n}` }),
  });
  const body = (await res.json().catch(() => null)) as { data?: Record<string, { nodes: unknown[] }>; errors?: unknown[] } | null;
  if (!res.ok || !body?.data || body.errors) return null;
  return Object.values(body.data).reduce((n, c) => n + c.nodes.length, 0);
};

const trainingOnce = (base: string) => async () => {
  const res = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ query: 'mutation { trainChurnModel(activate: false) { modelVersion samples } }' }),
  });
  const body = (await res.json().catch(() => null)) as { data?: { trainChurnModel?: { samples: number } }; errors?: unknown[] } | null;
  return body?.data?.trainChurnModel?.samples ?? null;
};

const heavy: Record<string, { what: string; unit: string; run: (base: string, stop: () => boolean) => ReturnType<typeof loops> }> = {
  csv: { what: `${EXPORTS} CSV exports`, unit: 'rows', run: (base, stop) => loops(EXPORTS, stop, exportOnce(base, 'csv')) },
  ndjson: { what: `${EXPORTS} NDJSON exports`, unit: 'rows', run: (base, stop) => loops(EXPORTS, stop, exportOnce(base, 'ndjson')) },
  graphql: {
    what: `${GRAPHQL_CLIENTS} clients of 10-alias searches`,
    unit: 'customers answered',
    run: (base, stop) => loops(GRAPHQL_CLIENTS, stop, graphqlOnce(base)),
  },
  training: {
    what: `training on ${LABELS.toLocaleString('en')} labels`,
    unit: 'labels trained on',
    run: (base, stop) => loops(1, stop, trainingOnce(base)),
  },
};

const reads = (base: string, name: string) =>
  load(name, {
    url: `${base}/api/v1/customers?limit=50`,
    headers: { authorization: `Bearer ${b.apiKey}` },
    durationS,
    connections: 10,
    rate: 100,
  });

/** The longest the event loop was held since the last reading, in ms (prom-client resets its histogram when read). */
async function loopMaxMs(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
  const max = /^nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(text)?.[1];
  return max === undefined ? NaN : Math.round(Number(max) * 1000);
}

const rows: string[] = [];
const row = (m: Measured, load: string, loop = '–', got = '–') =>
  `| ${LABEL} | ${load} | ${m.rps} | ${successRate(m)} % (${statusList(m)}) | ${m.p50} | ${m.p99} | ${loop} | ${got} |`;
// Shedding on event-loop delay off: what is measured is how the process shares itself, not what it refuses.
const api = await startApi({ RATE_LIMIT_SCALE: '100000000', METRICS_TOKEN, MAX_EVENT_LOOP_DELAY_MS: '0' });
await reads(api.base, 'warm-up');
await loopMaxMs(api.base);
rows.push(row(await reads(api.base, 'B alone'), 'B alone', `${await loopMaxMs(api.base)} ms`));
for (const scenario of SCENARIOS) {
  const h = heavy[scenario];
  if (!h) throw new Error(`unknown scenario ${scenario}`);
  let done = false;
  const work = h.run(api.base, () => done);
  // A's work gets going before B's reads are measured.
  await pause(1000);
  await loopMaxMs(api.base);
  const beside = await reads(api.base, `B beside ${h.what} of A`);
  const loop = `${await loopMaxMs(api.base)} ms`;
  done = true;
  const got = await work;
  rows.push(
    row(beside, `beside ${h.what}`, loop, `${got.done.toLocaleString('en')} ${h.unit}${got.refused ? `, ${got.refused} refused` : ''}`),
  );
  await pause(1000);
}
api.stop();

writeResult(`Fair share of CPU: heavy work beside reads (${LABEL})`, [
  `Tenant B: \`GET /api/v1/customers?limit=50\`, 10 connections paced at 100/s, ${durationS} s. Tenant A (Scale, ${A_CUSTOMERS.toLocaleString('en')} customers) meanwhile, one kind of heavy work at a time. One API process, default settings but for rate limits and shedding on event-loop delay out of the way. "Loop held" is the longest event-loop delay the process saw during B's run.`,
  '',
  '| build | B’s load | req/s | success (answers) | p50 ms | p99 ms | loop held, max | A got meanwhile |',
  '|---|---|---|---|---|---|---|---|',
  ...rows,
]);
process.exit(0);
