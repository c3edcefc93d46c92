import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { migrateDeploy } from '../src/db/migrate.ts';

export const ROOT = join(import.meta.dirname, '..');

export async function freshDatabase(url: string): Promise<void> {
  const u = new URL(url);
  const name = u.pathname.slice(1);
  const admin = new pg.Client({ connectionString: Object.assign(new URL(url), { pathname: '/postgres' }).toString() });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  await migrateDeploy(url);
}

/** Starts a TypeScript entry point in its own process (so the load generator never shares its event loop). */
/** The key every bench encrypts secrets with (a fixed value: bench databases are thrown away). */
/**
 * How long and how wide the alternating benches run (`alternate` below): BENCH_ROUNDS rounds a side that
 * together last 1.5 × BENCH_DURATION_S seconds (3 of 5 s by default), over BENCH_CONNECTIONS connections.
 */
export function alternatingRounds() {
  const durationS = Number(process.env.BENCH_DURATION_S ?? 10);
  const rounds = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
  const roundS = Math.max(1, Math.round((1.5 * durationS) / rounds));
  const connections = Number(process.env.BENCH_CONNECTIONS ?? 20);
  return { durationS, rounds, roundS, connections };
}

export const BENCH_ENCRYPTION_KEY = `bench:${Buffer.alloc(32, 9).toString('base64')}`;

/**
 * The environment a bench starts a service process with: production mode on its own database, no demo
 * seed, in-process queue and limits unless `extra` says otherwise.
 */
export function serviceEnv(databaseUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    NODE_ENV: 'production',
    DATABASE_URL: databaseUrl,
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    SESSION_SECRET: 'bench-session-secret-0123456789abcdefghijkl',
    ENCRYPTION_KEY: BENCH_ENCRYPTION_KEY,
    SEED_DEMO: 'never',
    REDIS_URL: '',
    AMQP_URL: '',
    ...extra,
  };
}

const compiled = new Set<string>();
/**
 * The JavaScript a TypeScript entry point compiles to, as production runs it (`npm run build`): the
 * service's sources and the bare baselines are compiled once per scenario into `.bench-build/`, with the
 * same compiler settings as the build, so neither side pays for a loader the other does not. `root` is
 * the checkout compiled: this one, or another build measured beside it.
 */
function compiledEntry(entry: string, root = ROOT): string {
  if (!compiled.has(root)) {
    execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.bench.json')], {
      cwd: root,
      stdio: 'inherit',
    });
    compiled.add(root);
  }
  const js = join(root, '.bench-build', entry.replace(/\.ts$/, '.js'));
  if (!existsSync(js)) throw new Error(`${entry} is not in tsconfig.bench.json`);
  return js;
}

export function startProcess(
  args: string[],
  env: Record<string, string>,
  ready: RegExp,
  opts: { plainNode?: boolean; fromSource?: boolean; root?: string; readyTimeoutMs?: number } = {},
): Promise<{ child: ChildProcess; output: string }> {
  // The service and the bare baselines run compiled, under plain Node, as `npm run start:prod` runs; from
  // source through tsx's loader, as `npm start` runs, with `fromSource` or BENCH_TSX=1. Either way Node
  // itself is the child, so child.pid is the process measured (RSS, CPU). `plainNode` runs JavaScript
  // given as is. BENCH_NODE_ARGS passes flags to the processes, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`.
  const nodeArgs = process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const fromSource = !opts.plainNode && (opts.fromSource || process.env.BENCH_TSX === '1');
  const [entry, ...rest] = args;
  const root = opts.root ?? ROOT;
  const argv = opts.plainNode || fromSource ? args : [compiledEntry(entry!, root), ...rest];
  const child = spawn(process.execPath, [...nodeArgs, ...(fromSource ? ['--import', 'tsx'] : []), ...argv], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not ready:\n${output}`)), opts.readyTimeoutMs ?? 120_000);
    const on = (c: Buffer) => {
      output += c.toString();
      if (ready.test(output)) {
        clearTimeout(timer);
        resolve({ child, output });
      }
    };
    child.stdout!.on('data', on);
    child.stderr!.on('data', on);
    child.on('exit', (code) => reject(new Error(`exited ${code}:\n${output}`)));
  });
}

/** Resident memory of a process in MiB, from /proc (Linux). */
export function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : NaN;
}

/**
 * Runs `work` in this process with its resident memory sampled every 250 ms: wall time, and RSS in MiB at
 * the start, the end and the highest sample. What a worker's pass costs in memory, when the pass runs here.
 */
export async function withRss<T>(work: () => Promise<T>) {
  const rss: number[] = [process.memoryUsage().rss];
  const sampler = setInterval(() => rss.push(process.memoryUsage().rss), 250);
  const started = Date.now();
  const result = await work();
  const seconds = (Date.now() - started) / 1000;
  clearInterval(sampler);
  rss.push(process.memoryUsage().rss);
  const mb = (b: number) => Math.round(b / 1048576);
  return { result, seconds, rssStart: mb(rss[0]!), rssMax: mb(Math.max(...rss)), rssEnd: mb(rss.at(-1)!) };
}

/**
 * Reads the stream `target` answers to its end, keeping only counts, while the server `pid`'s RSS is
 * sampled every 20 ms and its CPU time read before and after: an export's cost in time and memory.
 */
export async function measureStream(name: string, pid: number, target: string, headers: Record<string, string> = {}) {
  const idle = rssMiB(pid);
  const cpu0 = cpuMicros(pid);
  let peak = idle;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMiB(pid))), 20);
  const started = Date.now();
  const res = await fetch(target, { headers });
  let bytes = 0;
  let lines = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.length;
    for (const b of chunk) if (b === 10) lines++;
  }
  clearInterval(sampler);
  peak = Math.max(peak, rssMiB(pid));
  const seconds = (Date.now() - started) / 1000;
  const r = { name, status: res.status, lines, mib: bytes / 1048576, seconds, idle, peak, cpu: (cpuMicros(pid) - cpu0) / 1e6 };
  console.log(r);
  return r;
}

/** CPU time (user + system) a process has used so far, in microseconds, from /proc (Linux, 100 ticks/s). */
export function cpuMicros(pid: number): number {
  return cpuOfStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
}

/** User + system time, in microseconds, from the text of /proc/<pid>/stat. */
function cpuOfStat(stat: string): number {
  // Fields after the command name (which may hold spaces): utime is the 14th field, stime the 15th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

/**
 * CPU time used so far by what shares the machine with the server measured, in microseconds: PostgreSQL's
 * processes, the broker's, this process (the load generator runs in it), everything else busy, and idle
 * time, from /proc (Linux). The difference of two readings says where a run's CPU went.
 */
export interface MachineCpu {
  database: number;
  broker: number;
  loadGenerator: number;
  /** Busy time of every process not named above, the measured server included, and of the kernel. */
  rest: number;
  idle: number;
}
export function machineCpu(): MachineCpu {
  const cpu = { database: 0, broker: 0, loadGenerator: cpuMicros(process.pid), rest: 0, idle: 0 };
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // ended meanwhile
    }
    const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const used = cpuOfStat(stat);
    if (comm === 'postgres') cpu.database += used;
    else if (comm === 'beam.smp') cpu.broker += used;
  }
  // The first line of /proc/stat: user nice system idle iowait irq softirq steal, in ticks, for all cores.
  const ticks = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  const busy = ticks[0]! + ticks[1]! + ticks[2]! + ticks[5]! + ticks[6]! + ticks[7]!;
  cpu.idle = (ticks[3]! + ticks[4]!) * 10_000;
  cpu.rest = busy * 10_000 - cpu.database - cpu.broker - cpu.loadGenerator;
  return cpu;
}
const MACHINE_PARTS = ['database', 'broker', 'loadGenerator', 'rest', 'idle'] as const;
const combined = (a: MachineCpu, b: MachineCpu, f: (x: number, y: number) => number): MachineCpu =>
  Object.fromEntries(MACHINE_PARTS.map((k) => [k, f(a[k], b[k])])) as unknown as MachineCpu;
/** What was used between two readings of `machineCpu`. */
export const machineDelta = (before: MachineCpu, after: MachineCpu) => combined(before, after, (x, y) => y - x);

/** The 1-minute load average, as the machine is shared: a figure means little without it. */
export const load1 = () => Math.round(loadavg()[0]! * 100) / 100;

export interface Measured {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  bytes: number;
  /** Requests answered in the whole run (not per second). */
  total?: number;
  /** CPU time of the measured process(es) per answered request, in microseconds. */
  cpuUs?: number;
  /** CPU time of the measured process(es) over the whole run, in microseconds. */
  cpuTotalUs?: number;
  /** The 1-minute load average at the end of the run. */
  loadAvg?: number;
  /** Responses by HTTP status, where measured with `load`. */
  statuses?: Record<string, number>;
  /** Transactions PostgreSQL counted in the measured database during the run, where asked for. */
  transactions?: number;
  /** Where the machine's CPU went over the run, summed in µs (divide by `total` for per request). */
  machine?: MachineCpu;
}

export async function load(
  name: string,
  opts: {
    url: string;
    headers?: Record<string, string>;
    requests?: autocannon.Request[];
    durationS: number;
    connections: number;
    /** Requests per second across all connections; unset is as fast as the server answers. */
    rate?: number;
    /** Processes whose CPU time is charged to the requests (the server under test). */
    pids?: number[];
    /** The database's count of transactions (each statement outside one is one), read before and after the run. */
    transactions?: () => Promise<number>;
  },
): Promise<Measured> {
  const cpu = () => (opts.pids ?? []).reduce((sum, pid) => sum + cpuMicros(pid), 0);
  const transactionsBefore = await opts.transactions?.();
  const cpuBefore = cpu();
  const machineBefore = machineCpu();
  const r = await autocannon({
    url: opts.url,
    headers: opts.headers,
    requests: opts.requests,
    duration: opts.durationS,
    connections: opts.connections,
    pipelining: 1,
    ...(opts.rate ? { overallRate: opts.rate } : {}),
  });
  const cpuUsed = cpu() - cpuBefore;
  const machine = machineDelta(machineBefore, machineCpu());
  const total = r.requests.total;
  // A backend reports its counts once it is idle, within a second; the reading before is a transaction of its own.
  if (transactionsBefore !== undefined) await new Promise((r) => setTimeout(r, 1200));
  const transactions = transactionsBefore === undefined ? undefined : (await opts.transactions!()) - transactionsBefore - 1;
  return {
    name,
    total,
    ...(opts.pids?.length ? { cpuUs: Math.round(cpuUsed / Math.max(total, 1)), cpuTotalUs: cpuUsed } : {}),
    loadAvg: load1(),
    rps: Math.round(r.requests.average),
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: r.errors + r.timeouts,
    non2xx: r.non2xx,
    bytes: Math.round(r.throughput.average / Math.max(r.requests.average, 1)),
    ...(transactions === undefined ? {} : { transactions }),
    machine,
    statuses: Object.fromEntries(
      Object.entries((r as unknown as { statusCodeStats?: Record<string, { count: number }> }).statusCodeStats ?? {}).map(([k, v]) => [
        k,
        v.count,
      ]),
    ),
  };
}

type LoadOptions = Parameters<typeof load>[1];

/**
 * A server and its baseline measured in alternating rounds (baseline, server, baseline, server...) after
 * a warm-up of each, so that a neighbour's burst or a slow spell of the machine falls on both rather than
 * on one. Each side's figures pool its rounds: requests and CPU time summed (CPU per request is their
 * quotient), p50 the median round's, p99 the worst round's; `rounds` keeps each pair as measured.
 */
export async function alternate(
  names: { baseline: string; server: string },
  opts: { baseline: Omit<LoadOptions, 'durationS'>; server: Omit<LoadOptions, 'durationS'>; rounds: number; durationS: number },
): Promise<{ baseline: Measured; server: Measured; rounds: { baseline: Measured; server: Measured }[] }> {
  await load('warm-up', { ...opts.baseline, durationS: 2 });
  await load('warm-up', { ...opts.server, durationS: 2 });
  const b: Measured[] = [];
  const s: Measured[] = [];
  for (let i = 0; i < opts.rounds; i++) {
    b.push(await load(names.baseline, { ...opts.baseline, durationS: opts.durationS }));
    s.push(await load(names.server, { ...opts.server, durationS: opts.durationS }));
  }
  const seconds = opts.rounds * opts.durationS;
  return {
    baseline: pooled(names.baseline, b, seconds),
    server: pooled(names.server, s, seconds),
    rounds: s.map((server, i) => ({ baseline: b[i]!, server })),
  };
}

function pooled(name: string, rounds: Measured[], seconds: number): Measured {
  const sum = (f: (m: Measured) => number) => rounds.reduce((n, m) => n + f(m), 0);
  const total = sum((m) => m.total ?? 0);
  const byP50 = [...rounds].sort((a, b) => a.p50 - b.p50);
  const statuses: Record<string, number> = {};
  for (const m of rounds) for (const [k, v] of Object.entries(m.statuses ?? {})) statuses[k] = (statuses[k] ?? 0) + v;
  return {
    name,
    total,
    rps: Math.round(total / seconds),
    p50: byP50[Math.floor(byP50.length / 2)]!.p50,
    p99: Math.max(...rounds.map((m) => m.p99)),
    errors: sum((m) => m.errors),
    non2xx: sum((m) => m.non2xx),
    bytes: Math.round(sum((m) => m.bytes * (m.total ?? 0)) / Math.max(total, 1)),
    cpuUs: Math.round(sum((m) => m.cpuTotalUs ?? 0) / Math.max(total, 1)),
    cpuTotalUs: sum((m) => m.cpuTotalUs ?? 0),
    ...(rounds.every((m) => m.transactions !== undefined) ? { transactions: sum((m) => m.transactions!) } : {}),
    ...(rounds.every((m) => m.machine) ? { machine: rounds.map((m) => m.machine!).reduce((a, b) => combined(a, b, (x, y) => x + y)) } : {}),
    loadAvg: Math.max(...rounds.map((m) => m.loadAvg ?? 0)),
    statuses,
  };
}

/** The lowest and highest of each round's figure over its baseline's, e.g. "1.52–1.61×". */
export function spreadOf(rounds: { baseline: Measured; server: Measured }[], figure: (m: Measured) => number): string {
  const r = rounds.map((x) => figure(x.server) / figure(x.baseline));
  return `${Math.min(...r).toFixed(2)}–${Math.max(...r).toFixed(2)}×`;
}

const ratio = (a: number | undefined, b: number | undefined) => (a && b ? `${(a / b).toFixed(2)}×` : '–');

/**
 * A table of scenarios: req/s, latency, and CPU time per request beside each, with both ratios to the
 * scenario's baseline from the same run. On a shared machine CPU per request is the steadier figure.
 */
export function report(title: string, rows: { m: Measured; baseline?: Measured; target?: string; met?: string }[], after: string[] = []) {
  writeResult(title, [
    '| scenario | req/s | p50 ms | p99 ms | CPU µs/req | req/s vs baseline | CPU/req vs baseline | statements/req | bytes/resp | errors | non-2xx | load avg | target | met |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map(
      ({ m, baseline, target, met }) =>
        `| ${m.name} | ${m.rps} | ${m.p50} | ${m.p99} | ${m.cpuUs ?? '–'} | ${baseline ? `${Math.round((m.rps / baseline.rps) * 100)} %` : '–'} | ${baseline ? ratio(m.cpuUs, baseline.cpuUs) : '–'} | ${m.transactions === undefined ? '–' : (m.transactions / Math.max(m.total ?? 0, 1)).toFixed(2)} | ${m.bytes} | ${m.errors} | ${m.non2xx} | ${m.loadAvg ?? '–'} | ${target ?? ''} | ${met ?? ''} |`,
    ),
    ...(after.length ? ['', ...after] : []),
  ]);
}

/**
 * Where the whole machine's CPU went per request in each scenario: the server measured, PostgreSQL, the
 * broker, the load generator, everything else, and the cores' idle time. A server that saves work in the
 * database or the broker shows it here, not in its own CPU per request.
 */
export function machineTable(rows: Measured[]): string[] {
  const per = (m: Measured, us: number) => Math.round(us / Math.max(m.total ?? 0, 1));
  return [
    '| scenario (µs per request) | server | PostgreSQL | broker | load generator | everything else | idle |',
    '|---|---|---|---|---|---|---|',
    ...rows
      .filter((m) => m.machine)
      .map((m) => {
        const c = m.machine!;
        return `| ${m.name} | ${m.cpuUs ?? '–'} | ${per(m, c.database)} | ${per(m, c.broker)} | ${per(m, c.loadGenerator)} | ${per(m, c.rest - (m.cpuTotalUs ?? 0))} | ${per(m, c.idle)} |`;
      }),
  ];
}

/** Prints a result and writes it to bench/results/<title>.md, with when and where it ran. */
export function writeResult(title: string, body: string[]) {
  const text = [
    `# ${title}`,
    '',
    `Run ${new Date().toISOString()} on ${process.platform}/${process.arch}, Node ${process.version}.`,
    '',
    ...body,
  ].join('\n');
  console.log(`\n${text}\n`);
  mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
  writeFileSync(join(ROOT, 'bench', 'results', `${title.toLowerCase().replace(/[^a-z0-9]+/g, '-')}.md`), `${text}\n`);
}

/**
 * POSTs of Stripe events for autocannon, signed with `secret` as Stripe signs them: `next()` gives each
 * request's event type and invoice object; every request is a new event (its own event id).
 */
function signedStripeEvents(path: string, secret: string, next: () => { type: string; object: object }): autocannon.Request {
  return {
    method: 'POST',
    path,
    setupRequest: (req) => {
      const { type, object } = next();
      const t = Math.floor(Date.now() / 1000);
      const body = JSON.stringify({ id: `evt_${randomUUID().replaceAll('-', '')}`, object: 'event', type, created: t, data: { object } });
      const sig = createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
      return { ...req, body, headers: { 'content-type': 'application/json', 'stripe-signature': `t=${t},v1=${sig}` } };
    },
  };
}

const invoiceObject = (id: string, customer: string, status: string) => ({
  id,
  object: 'invoice',
  customer,
  status,
  total: 12345,
  currency: 'usd',
});

/** New Stripe `invoice.created` events, each for a new invoice of the customer `customer()` names. */
export const signedStripeInvoices = (path: string, secret: string, customer: () => string) =>
  signedStripeEvents(path, secret, () => ({
    type: 'invoice.created',
    object: invoiceObject(`in_${randomUUID().replaceAll('-', '')}`, customer(), 'draft'),
  }));

const LIFECYCLE = [
  { type: 'invoice.created', status: 'draft' },
  { type: 'invoice.finalized', status: 'open' },
  { type: 'invoice.paid', status: 'paid' },
] as const;

/**
 * Invoices going draft → open → paid, as Stripe sends an invoice charged at once: three signed events per
 * invoice, in turn (the paid one naming its payment), so each invoice's events arrive moments apart over
 * different connections and share batches.
 */
export function signedStripeLifecycles(path: string, secret: string, customer: (invoice: number) => string): autocannon.Request {
  let sequence = 0;
  const run = randomUUID().slice(0, 8);
  return signedStripeEvents(path, secret, () => {
    const n = sequence++;
    const invoice = Math.floor(n / LIFECYCLE.length);
    const step = LIFECYCLE[n % LIFECYCLE.length]!;
    const object = invoiceObject(`in_${run}_${invoice}`, customer(invoice), step.status);
    return { type: step.type, object: step.status === 'paid' ? { ...object, payment_intent: `pi_${run}_${invoice}` } : object };
  });
}

/** `n` customers of the tenant, inserted in one statement, with spread scores, statuses and risk levels. */
export async function insertCustomers(db: { query(text: string, values: unknown[]): Promise<unknown> }, tenantId: string, n: number) {
  await db.query(
    `INSERT INTO customers (id, tenant_id, external_id, name, email, domain, health_score, health_status, churn_probability, churn_risk_level, created_at, updated_at)
   SELECT gen_random_uuid(), $1, 'ext-' || g, 'Customer ' || g, 'ops@c' || g || '.example', 'c' || g || '.example',
          (g % 101), (CASE WHEN g % 101 >= 75 THEN 'healthy' WHEN g % 101 >= 50 THEN 'neutral' ELSE 'at_risk' END)::"HealthStatus",
          (g % 100) / 100.0, (CASE WHEN g % 100 < 25 THEN 'low' WHEN g % 100 < 50 THEN 'medium' WHEN g % 100 < 75 THEN 'high' ELSE 'critical' END)::"RiskLevel",
          now(), now()
   FROM generate_series(1, $2) g`,
    [tenantId, n],
  );
}

/** Churn labels for `n` of the tenant's customers, half of them churned, as training reads them. */
export async function insertChurnLabels(db: { query(text: string, values: unknown[]): Promise<unknown> }, tenantId: string, n: number) {
  await db.query(
    `INSERT INTO churn_outcomes (id, tenant_id, customer_id, churned, at, source, created_at)
     SELECT gen_random_uuid(), c.tenant_id, c.id, (row_number() OVER () % 2 = 0), now() - interval '1 day', 'api', now()
     FROM (SELECT id, tenant_id FROM customers WHERE tenant_id = $1 ORDER BY id LIMIT $2) c`,
    [tenantId, n],
  );
}

/**
 * `workers` worker processes (`src/main.ts worker` with `env`) started on the inbox backlog of the
 * database at `url`, and stopped once nothing is left received (or after 300 s): events applied a second
 * and the workers' CPU per event, their startup excluded, and their largest RSS at the end.
 */
export async function drainInbox(
  url: string,
  env: Record<string, string>,
  name: string,
  workers = 1,
): Promise<{ m: Measured; rss: number; backlog: number }> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  const count = async (statuses: string[]) =>
    Number((await db.query('SELECT count(*)::int AS n FROM inbox_events WHERE status::text = ANY($1)', [statuses])).rows[0].n);
  const received = () => count(['received']);
  // Applied or, for an out-of-order event (an invoice already paid), kept as ignored.
  const done = () => count(['processed', 'ignored']);
  const processedBefore = await done();
  const backlog = await received();
  const started = Date.now();
  const processes = await Promise.all(
    Array.from({ length: workers }, () => startProcess(['src/main.ts', 'worker'], env, /worker started/)),
  );
  const cpuOfWorkers = () => processes.reduce((sum, w) => sum + cpuMicros(w.child.pid!), 0);
  const drainStart = Date.now();
  const workerCpuBefore = cpuOfWorkers();
  const machineBefore = machineCpu();
  while ((await received()) > 0 && Date.now() - drainStart < 300_000) await new Promise((r) => setTimeout(r, 250));
  const drainSeconds = (Date.now() - drainStart) / 1000;
  const workerCpu = cpuOfWorkers() - workerCpuBefore;
  const machine = machineDelta(machineBefore, machineCpu());
  const rss = Math.max(...processes.map((w) => rssMiB(w.child.pid!)));
  const loadAvg = load1();
  const processed = (await done()) - processedBefore;
  await db.end();
  await Promise.all(
    processes.map((w) => {
      const exited = new Promise((r) => w.child.once('exit', r));
      w.child.kill('SIGTERM');
      return exited;
    }),
  );
  return {
    rss,
    backlog,
    m: {
      name: `${name} (${backlog} events, startup ${((drainStart - started) / 1000).toFixed(1)} s excluded)`,
      total: processed,
      rps: Math.round(processed / drainSeconds),
      p50: 0,
      p99: 0,
      errors: 0,
      non2xx: 0,
      bytes: 0,
      cpuUs: Math.round(workerCpu / Math.max(processed, 1)),
      cpuTotalUs: workerCpu,
      loadAvg,
      machine,
    },
  };
}
