// One tenant's heavy work against another tenant's ordinary reads, in one API process. Tenant B reads pages
// of its customers at a steady pace, alone and then while tenant A (Scale, 20,000 customers) uses what its
// plan allows of one kind of heavy work, far inside its rate limit:
// - `csv`, `ndjson`: 16 exports of A's customers at once, each started again as soon as it ends;
// - `graphql`: 8 clients each sending, again and again, a document of 10 aliased customer searches with
//   their `totalCount` (close to the cost limit);
// - `training`: churn training on 5,000 labelled customers, started again as soon as it ends.
// Reports B's success rate, p50 and p99 alone and beside each, the longest the process's event loop was
// held during the run beside (from its own /metrics), and what A got done meanwhile. A's clients run in a
// process of their own (bench/fairness-a.ts), so that reading A's answers never delays the timing of B's.
// BENCH_FAIRNESS_SCENARIOS picks scenarios (comma-separated); BENCH_FAIRNESS_LABEL names the build measured.
// BENCH_FAIRNESS_BASELINES=<label>=<checkout>,... measures other builds too, over the same database in the
// same run: each measurement is taken of one build after the other, the order turning each round, for
// BENCH_ROUNDS rounds (default 2).
import { durationS, startApi, statusList, successRate, twoTenants, url } from './budgets.ts';
import { insertChurnLabels, insertCustomers, load, type Measured, writeResult } from './lib.ts';
import { spawn } from 'node:child_process';
import pg from 'pg';

const EXPORTS = Number(process.env.BENCH_FAIRNESS_EXPORTS ?? 16);
const GRAPHQL_CLIENTS = Number(process.env.BENCH_FAIRNESS_GRAPHQL_CLIENTS ?? 8);
const A_CUSTOMERS = Number(process.env.BENCH_FAIRNESS_CUSTOMERS ?? 20_000);
const LABELS = Number(process.env.BENCH_FAIRNESS_LABELS ?? 5_000);
const SCENARIOS = (process.env.BENCH_FAIRNESS_SCENARIOS ?? 'csv,ndjson,graphql,training').split(',');
const LABEL = process.env.BENCH_FAIRNESS_LABEL ?? 'this build';
const BASELINES = (process.env.BENCH_FAIRNESS_BASELINES ?? '')
  .split(',')
  .filter(Boolean)
  .map((b) => {
    const at = b.lastIndexOf('=');
    return { label: b.slice(0, at), root: b.slice(at + 1) };
  });
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 2));
const METRICS_TOKEN = 'bench-fairness-metrics-token';
const { a, b } = await twoTenants();

const admin = new pg.Client({ connectionString: url });
await admin.connect();
await insertCustomers(admin, a.tenantId, A_CUSTOMERS);
await insertChurnLabels(admin, a.tenantId, LABELS);
await admin.query('ANALYZE');
await admin.end();

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What each scenario has tenant A do (bench/fairness-a.ts does it), as the results name it. */
const heavy: Record<string, { what: string; unit: string }> = {
  csv: { what: `${EXPORTS} CSV exports`, unit: 'rows' },
  ndjson: { what: `${EXPORTS} NDJSON exports`, unit: 'rows' },
  graphql: { what: `${GRAPHQL_CLIENTS} clients of 10-alias searches`, unit: 'customers answered' },
  training: { what: `training on ${LABELS.toLocaleString('en')} labels`, unit: 'labels trained on' },
};

/**
 * Tenant A's work in a process of its own, as another tenant's client would be: in this process, reading
 * A's exports kept the event loop that times B's answers busy, and B's latencies were partly the bench's.
 * Stopped with SIGTERM, it finishes the calls in hand and prints what it got done.
 */
function tenantA(base: string, scenario: string) {
  const child = spawn(process.execPath, ['--import', 'tsx', new URL('./fairness-a.ts', import.meta.url).pathname], {
    env: {
      ...process.env,
      BASE: base,
      API_KEY: a.apiKey,
      SCENARIO: scenario,
      EXPORTS: String(EXPORTS),
      GRAPHQL_CLIENTS: String(GRAPHQL_CLIENTS),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  const ended = new Promise<{ done: number; refused: number }>((resolve, reject) =>
    child.once('exit', (code) => {
      const m = /RESULT (\{.*\})/.exec(output);
      if (m) resolve(JSON.parse(m[1]!));
      else reject(new Error(`tenant A's process ended (${code}) without its result:\n${output}`));
    }),
  );
  return {
    stop: () => {
      child.kill('SIGTERM');
      return ended;
    },
  };
}

const reads = (api: Api, name: string) =>
  load(name, {
    url: `${api.base}/api/v1/customers?limit=50`,
    headers: { authorization: `Bearer ${b.apiKey}` },
    durationS,
    connections: 10,
    rate: 100,
    // The API process's CPU, its threads' included, A's work beside B's reads with it.
    pids: [api.pid],
  });

/** The longest the event loop was held since the last reading, in ms (prom-client resets its histogram when read). */
async function loopMaxMs(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
  const max = /^nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(text)?.[1];
  return max === undefined ? NaN : Math.round(Number(max) * 1000);
}

type Api = Awaited<ReturnType<typeof startApi>> & { label: string };

const rows: string[] = [];
/** B's p99 per build and load (`alone`, or a scenario), one entry per round. */
const p99s = new Map<string, number[]>();
const keep = (api: Api, load: string, m: Measured) =>
  p99s.set(`${api.label}\u0000${load}`, [...(p99s.get(`${api.label}\u0000${load}`) ?? []), m.p99]);
const median = (xs: number[]) => {
  const s = [...xs].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const row = (api: Api, round: number, m: Measured, load: string, alone: Measured | undefined, loop: string, got = '–') =>
  `| ${round} | ${api.label} | ${load} | ${m.rps} | ${successRate(m)} % (${statusList(m)}) | ${m.p50} | ${m.p99} | ${alone ? `${(m.p99 / Math.max(alone.p99, 1)).toFixed(1)}×` : '–'} | ${loop} | ${m.cpuUs ?? '–'} | ${m.loadAvg ?? '–'} | ${got} |`;
// Shedding on event-loop delay off: what is measured is how the process shares itself, not what it refuses.
const env = { RATE_LIMIT_SCALE: '100000000', METRICS_TOKEN, MAX_EVENT_LOOP_DELAY_MS: '0' };
const apis: Api[] = [{ ...(await startApi(env)), label: LABEL }];
for (const { label, root } of BASELINES) apis.push({ ...(await startApi(env, { root })), label });
for (const api of apis) {
  await reads(api, 'warm-up');
  await loopMaxMs(api.base);
}

/** B's reads beside one kind of A's heavy work (none: B alone), on one API process. */
async function measure(api: Api, round: number, scenario: string | null, alone?: Measured): Promise<Measured> {
  if (!scenario) {
    const m = await reads(api, `B alone (${api.label})`);
    keep(api, 'alone', m);
    rows.push(row(api, round, m, 'B alone', undefined, `${await loopMaxMs(api.base)} ms`));
    return m;
  }
  const h = heavy[scenario];
  if (!h) throw new Error(`unknown scenario ${scenario}`);
  const work = tenantA(api.base, scenario);
  // A's process starts and its work gets going before B's reads are measured.
  await pause(2500);
  await loopMaxMs(api.base);
  const beside = await reads(api, `B beside ${h.what} of A (${api.label})`);
  const loop = `${await loopMaxMs(api.base)} ms`;
  const got = await work.stop();
  keep(api, scenario, beside);
  rows.push(
    row(
      api,
      round,
      beside,
      `beside ${h.what}`,
      alone,
      loop,
      `${got.done.toLocaleString('en')} ${h.unit}${got.refused ? `, ${got.refused} refused` : ''}`,
    ),
  );
  await pause(1000);
  return beside;
}

for (let round = 1; round <= ROUNDS; round++) {
  // The builds take turns, the order turning each round.
  const order = apis.map((_, i) => apis[(i + round - 1) % apis.length]!);
  const alone = new Map<Api, Measured>();
  for (const api of order) alone.set(api, await measure(api, round, null));
  for (const scenario of SCENARIOS) for (const api of order) await measure(api, round, scenario, alone.get(api));
}
for (const api of apis) api.stop();

// One round's p99 is the tenth-slowest of B's thousand answers, so it moves by a factor of two between rounds
// on a quiet machine: the verdict is taken on the medians over the rounds.
const summary = apis.flatMap((api) => {
  const alone = median(p99s.get(`${api.label}\u0000alone`)!);
  return [
    `| ${api.label} | B alone | ${alone} | – |`,
    ...SCENARIOS.map((scenario) => {
      const beside = median(p99s.get(`${api.label}\u0000${scenario}`)!);
      return `| ${api.label} | beside ${heavy[scenario]!.what} | ${beside} | ${(beside / Math.max(alone, 1)).toFixed(1)}× |`;
    }),
  ];
});

writeResult(`Fair share of CPU: heavy work beside reads (${LABEL})`, [
  `Tenant B: \`GET /api/v1/customers?limit=50\`, 10 connections paced at 100/s, ${durationS} s. Tenant A (Scale, ${A_CUSTOMERS.toLocaleString('en')} customers) meanwhile, one kind of heavy work at a time. One API process per build, default settings but for rate limits and shedding on event-loop delay out of the way; the builds take turns, over the same database. "Loop held" is the longest event-loop delay the process saw during B's run; "API CPU" is the API process's CPU time (its threads' included, A's work too) per request of B's.`,
  '',
  '| round | build | B’s load | req/s | success (answers) | p50 ms | p99 ms | p99 against B alone | loop held, max | API CPU µs per B request | load avg | A got meanwhile |',
  '|---|---|---|---|---|---|---|---|---|---|---|---|',
  ...rows,
  '',
  `Medians over the ${ROUNDS} rounds:`,
  '',
  '| build | B’s load | p99 ms, median | against B alone |',
  '|---|---|---|---|',
  ...summary,
]);
process.exit(0);
