import { type ChildProcess, spawn } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
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

export function startProcess(
  args: string[],
  env: Record<string, string>,
  ready: RegExp,
  opts: { plainNode?: boolean } = {},
): Promise<{ child: ChildProcess; output: string }> {
  // Node with tsx's loader rather than the tsx CLI, so child.pid is the service itself (RSS, signals);
  // `plainNode` runs compiled JavaScript without it.
  // BENCH_NODE_ARGS passes flags to the service processes, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`.
  const nodeArgs = process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const child = spawn(process.execPath, [...nodeArgs, ...(opts.plainNode ? [] : ['--import', 'tsx']), ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not ready:\n${output}`)), 120_000);
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

/** CPU time (user + system) a process has used so far, in microseconds, from /proc (Linux, 100 ticks/s). */
export function cpuMicros(pid: number): number {
  // Fields after the command name (which may hold spaces): utime is the 14th field, stime the 15th.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

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
  /** The 1-minute load average at the end of the run. */
  loadAvg?: number;
  /** Responses by HTTP status, where measured with `load`. */
  statuses?: Record<string, number>;
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
  },
): Promise<Measured> {
  const cpu = () => (opts.pids ?? []).reduce((sum, pid) => sum + cpuMicros(pid), 0);
  const cpuBefore = cpu();
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
  const total = r.requests.total;
  return {
    name,
    total,
    ...(opts.pids?.length ? { cpuUs: Math.round(cpuUsed / Math.max(total, 1)) } : {}),
    loadAvg: load1(),
    rps: Math.round(r.requests.average),
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: r.errors + r.timeouts,
    non2xx: r.non2xx,
    bytes: Math.round(r.throughput.average / Math.max(r.requests.average, 1)),
    statuses: Object.fromEntries(
      Object.entries((r as unknown as { statusCodeStats?: Record<string, { count: number }> }).statusCodeStats ?? {}).map(([k, v]) => [
        k,
        v.count,
      ]),
    ),
  };
}

const ratio = (a: number | undefined, b: number | undefined) => (a && b ? `${(a / b).toFixed(2)}×` : '–');

/**
 * A table of scenarios: req/s, latency, and CPU time per request beside each, with both ratios to the
 * scenario's baseline from the same run. On a shared machine CPU per request is the steadier figure.
 */
export function report(title: string, rows: { m: Measured; baseline?: Measured; target?: string; met?: string }[]) {
  writeResult(title, [
    '| scenario | req/s | p50 ms | p99 ms | CPU µs/req | req/s vs baseline | CPU/req vs baseline | bytes/resp | errors | non-2xx | load avg | target | met |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map(
      ({ m, baseline, target, met }) =>
        `| ${m.name} | ${m.rps} | ${m.p50} | ${m.p99} | ${m.cpuUs ?? '–'} | ${baseline ? `${Math.round((m.rps / baseline.rps) * 100)} %` : '–'} | ${baseline ? ratio(m.cpuUs, baseline.cpuUs) : '–'} | ${m.bytes} | ${m.errors} | ${m.non2xx} | ${m.loadAvg ?? '–'} | ${target ?? ''} | ${met ?? ''} |`,
    ),
  ]);
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
 * A POST of a new Stripe `invoice.created` event, signed with `secret`, for autocannon: every request is a
 * new event (its own event and invoice ids) for the customer `customer()` names.
 */
export function signedStripeInvoices(path: string, secret: string, customer: () => string): autocannon.Request {
  return {
    method: 'POST',
    path,
    setupRequest: (req) => {
      const body = JSON.stringify({
        id: `evt_${randomUUID().replaceAll('-', '')}`,
        object: 'event',
        type: 'invoice.created',
        created: Math.floor(Date.now() / 1000),
        data: {
          object: {
            id: `in_${randomUUID().replaceAll('-', '')}`,
            object: 'invoice',
            customer: customer(),
            status: 'draft',
            total: 12345,
            currency: 'usd',
          },
        },
      });
      const t = Math.floor(Date.now() / 1000);
      const sig = createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
      return { ...req, body, headers: { 'content-type': 'application/json', 'stripe-signature': `t=${t},v1=${sig}` } };
    },
  };
}
