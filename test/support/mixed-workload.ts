// A mixed workload over the whole system: two API and two worker processes on one database, RabbitMQ and
// Redis, with every writing path at once over the same customers of several tenants — usage event batches
// (with and without Idempotency-Key), customer creates, updates and erasures, signed deliveries of all six
// providers (Stripe invoice lifecycles draft → open → paid as the worst case), churn labels and training,
// reads and exports, a retention change and one workspace deletion — while the worker's scoring loop,
// daily pass, retention and workspace purge run on short intervals. Afterwards it waits for the system to
// drain and checks what must hold whatever the interleaving (mixed-workload-checks.ts).
import { execFileSync } from 'node:child_process';
import { randomBytes, randomUUID, type KeyObject } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type pg from 'pg';
import { hashPassword } from '../../src/auth/passwords.ts';
import { createSessions } from '../../src/auth/sessions.ts';
import { createSecretBox } from '../../src/crypto/secret-box.ts';
import { createPool, createPrisma, type Db } from '../../src/db/prisma.ts';
import { EVENT_NAMES } from '../../src/outbox/events/registry.ts';
import { issueApiKey } from '../../src/services/api-keys.ts';
import { operator } from '../../src/services/audit.ts';
import { createInboundSecretStore } from '../../src/services/integrations.ts';
import { fileDatabaseUrl } from './database.ts';
import { runChecks, type Checks } from './mixed-workload-checks.ts';
import * as p from './providers.ts';
import { startReceiver, testCertificate } from './receiver.ts';
import { freePort, ROOT, startService, stop } from './spawn.ts';

// ---------------------------------------------------------------------------------------------------
// Size

export interface MixedSize {
  /** Length of the load phase. */
  seconds: number;
  /** Tenants that take the load to the end; one more tenant takes it until its workspace deletion falls due. */
  tenants: number;
  customersPerTenant: number;
  /** Clients sending at once, across every tenant and path. */
  concurrency: number;
  /** Usage events per POST /api/v1/events batch. */
  eventsPerBatch: number;
  /** Customers each tenant erases during the load. */
  erasuresPerTenant: number;
  /** Upper bound on the wait for the system to drain after the load. */
  quiesceSeconds: number;
}

/** The size `npm test` runs: a load phase of under a minute on a two-core machine. */
export const BOUNDED: MixedSize = {
  seconds: 45,
  tenants: 3,
  customersPerTenant: 48,
  concurrency: 10,
  eventsPerBatch: 250,
  erasuresPerTenant: 2,
  quiesceSeconds: 60,
};

/** `npm run test:mixed`: three minutes, more tenants and customers. */
export const LARGE: MixedSize = {
  seconds: 180,
  tenants: 5,
  customersPerTenant: 150,
  concurrency: 16,
  eventsPerBatch: 400,
  erasuresPerTenant: 5,
  quiesceSeconds: 300,
};

/** MIXED_SCALE=large picks LARGE; MIXED_SECONDS, MIXED_TENANTS, MIXED_CUSTOMERS, MIXED_CONCURRENCY, MIXED_BATCH, MIXED_ERASURES, MIXED_QUIESCE_SECONDS override one figure each. */
export function sizeFromEnv(env: NodeJS.ProcessEnv = process.env): MixedSize {
  const base = env.MIXED_SCALE === 'large' ? LARGE : BOUNDED;
  const num = (name: string, fallback: number) => {
    const v = Number(env[name]);
    return env[name] && Number.isFinite(v) && v > 0 ? Math.floor(v) : fallback;
  };
  return {
    seconds: num('MIXED_SECONDS', base.seconds),
    tenants: num('MIXED_TENANTS', base.tenants),
    // The first TRAINING_SET customers carry the churn labels; erasures take customers after them.
    customersPerTenant: Math.max(
      TRAINING_SET + num('MIXED_ERASURES', base.erasuresPerTenant),
      num('MIXED_CUSTOMERS', base.customersPerTenant),
    ),
    concurrency: num('MIXED_CONCURRENCY', base.concurrency),
    eventsPerBatch: Math.min(500, num('MIXED_BATCH', base.eventsPerBatch)),
    erasuresPerTenant: num('MIXED_ERASURES', base.erasuresPerTenant),
    quiesceSeconds: num('MIXED_QUIESCE_SECONDS', base.quiesceSeconds),
  };
}

/**
 * Customers of each tenant that carry churn labels, half churned: training needs 20 of each, and a
 * cancelled subscription may turn a retained label into a churned one. Erasures never take one of them.
 */
export const TRAINING_SET = 44;

/** How long a whole run may take, for the test's hook timeout: start, setup, load, drain, checks. */
export const runBudgetMs = (size: MixedSize) => (size.seconds + size.quiesceSeconds + 150) * 1000;

// ---------------------------------------------------------------------------------------------------
// What the run records

export const PROVIDERS = ['stripe', 'github', 'slack', 'discord', 'intercom', 'meta_ads'] as const;
export type Provider = (typeof PROVIDERS)[number];

export interface PathFigures {
  path: string;
  count: number;
  ok: number;
  /** 5xx other than a 503 that carries Retry-After. */
  serverErrors: number;
  /** 503 with Retry-After: load shedding, allowed and counted apart. */
  shed: number;
  rateLimited: number;
  otherClientErrors: number;
  /** No answer at all: connection error or the client's timeout. */
  noAnswer: number;
  statuses: Record<string, number>;
  /** Milliseconds from sending to the whole answer: 95th percentile and slowest. */
  p95Ms: number;
  maxMs: number;
  /** 5xx per tenant that sent the request. */
  serverErrorsByTenant: Record<string, number>;
  /** A few 5xx answers and requests left unanswered (status 0), with the request id to find them in the logs and the tenant that sent them. */
  samples: { status: number; requestId: string | null; tenant: string; body: string }[];
}

/** An inbound event the service took (202, or 200 as a duplicate of one it took). */
export interface AcceptedInbound {
  id: string;
  tenantId: string;
  provider: Provider;
  type: string;
  /** The order the harness saw the acceptances in. */
  seq: number;
  /** `invoice:<tenant>:<in_…>` or `subscription:<tenant>:<sub_…>` for Stripe events about one. */
  object: string | null;
  /** The Stripe account the event names, if any. */
  account: string | null;
  at: number;
}

export interface CustomerPlan {
  id: string;
  tenantId: string;
  name: string;
  externalId: string;
  domain: string;
  email: string;
  accounts: Record<Provider, string>;
}

export interface TenantPlan {
  id: string;
  name: string;
  tag: string;
  /** The tenant whose workspace deletion falls due during the load. */
  doomed: boolean;
  apiKey: string;
  ownerToken: string;
  adminToken: string;
  secrets: Record<Exclude<Provider, 'discord'>, string>;
  discordKey: KeyObject;
  /** Seeded before the load, identically in the serial replay's database. */
  seeded: CustomerPlan[];
  /** Customers created over REST during the load, whose accounts receive events before they exist. */
  late: CustomerPlan[];
  /** Domains whose events arrive before a PATCH gives a customer the domain. */
  orphanDomains: string[];
  endpoints: { ok: string; fail: string; hang: string };
}

interface TenantState {
  plan: TenantPlan;
  /** Customers new work may name: seeded, and late ones once created. */
  active: CustomerPlan[];
  lateLeft: CustomerPlan[];
  orphanLeft: string[];
  erased: Map<string, CustomerPlan & { at: number; done: number; status: number | 'none' }>;
  labelled: Map<string, boolean>;
  /** Usage events accepted per customer, from 2xx answers only, each Idempotency-Key counted once. */
  usageAccepted: Map<string, number>;
  usageAcceptedTotal: number;
  idempotency: Map<string, { body: string; accepted: number | null; sent: number }>;
  closed: boolean;
  seq: number;
}

export interface MixedReport {
  size: MixedSize;
  databaseUrl: string;
  logDir: string;
  startedAt: string;
  loadMs: number;
  tenants: { id: string; doomed: boolean; customers: number }[];
  doomedTenantId: string;
  figures: PathFigures[];
  accepted: AcceptedInbound[];
  /** Usage events the harness counts as stored, per tenant and customer. */
  usage: Record<string, { total: number; perCustomer: Record<string, number>; unanswered: number }>;
  /** Repeats of an Idempotency-Key whose answer differed from the first 2xx answer. */
  idempotencyMismatches: { tenantId: string; key: string; first: number; again: number; status: number }[];
  /** A duplicate inbound delivery answered other than 200 with the first's id. */
  duplicateMismatches: { tenantId: string; provider: string; firstId: string; status: number; body: string }[];
  /** Customers erased: when the DELETE was sent and when it was answered. */
  erased: Record<string, { id: string; stripe: string; at: number; done: number; status: number | 'none' }[]>;
  /** Customer ids seen in each tenant's read answers. */
  seen: Record<string, { path: string; ids: string[] }[]>;
  /** Customer id → tenant, from setup, REST answers and periodic snapshots of the customers table. */
  owners: Record<string, string>;
  quiesce: { drained: boolean; waitedMs: number; remaining: Record<string, number>; timeline: string[] };
  /** Service processes that ended before the harness stopped them. */
  exited: string[];
  /** Once drained (or the bound passed): database sessions still busy or holding advisory locks, which nothing should be. */
  lingering: string[];
  /** What the worker's background passes did during the run: retention and purge, scoring, rollups. */
  background: string[];
  /** Seconds spent starting the processes and setting up, loading, draining, stopping. */
  phases: Record<string, number>;
  deadlocks: { before: number; after: number };
  /**
   * Cycles of sessions waiting on each other's locks, as sampled from pg_stat_activity while the load ran and
   * drained: a deadlock shows here with each member's statement for the second PostgreSQL waits before ending it.
   */
  lockCycles: string[];
  /** Log lines of a deadlock (40P01) or serialization failure (40001), with where in src/ each arose. */
  logMatches: { process: string; count: number; sites: Record<string, number>; lines: string[] }[];
  /** Lines logged at error level, per process (count and a few). */
  logErrors: { process: string; count: number; lines: string[] }[];
  /** Exceptions of the harness itself (a bug here, not in the service). */
  harnessErrors: string[];
  milestones: { at: number; what: string; status?: number }[];
  checks: Checks;
}

// ---------------------------------------------------------------------------------------------------
// The run

const AMQP_URL = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const KEY = Buffer.alloc(32, 11);
const SESSION_SECRET = 'mixed-workload-session-secret-0123456789abcdef';
// Longer than any deadline of the service's own, so that a slow answer is measured rather than cut off.
const REQUEST_TIMEOUT_MS = 60_000;
const rid = () => randomBytes(8).toString('hex');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pick = <T>(xs: T[]): T => xs[Math.floor(Math.random() * xs.length)]!;
const pad = (n: number, w = 4) => String(n).padStart(w, '0');

export async function runMixedWorkload(size: MixedSize): Promise<MixedReport> {
  const runId = `${new Date().toISOString().replace(/[:.]/g, '-')}-${rid().slice(0, 6)}`;
  const logDir = join(ROOT, 'test-output', 'mixed-workload', runId);
  mkdirSync(logDir, { recursive: true });
  const databaseUrl = await fileDatabaseUrl();
  const pool = createPool(databaseUrl, 6);
  const prisma = createPrisma({ url: databaseUrl, poolSize: 4, pool });
  const box = createSecretBox([{ id: 'mixed', key: KEY }]);
  const prefix = `chs-mixed-${rid().slice(0, 8)}`;
  const harnessErrors: string[] = [];
  const milestones: MixedReport['milestones'] = [];

  const ok = await startReceiver(testCertificate());
  const fail = await startReceiver(testCertificate());
  const hang = await startReceiver(testCertificate());
  fail.set('fail');
  hang.set('hang');

  const env = {
    DATABASE_URL: databaseUrl,
    AMQP_URL,
    AMQP_PREFIX: prefix,
    REDIS_URL,
    ENCRYPTION_KEY: `mixed:${KEY.toString('base64')}`,
    SESSION_SECRET,
    SEED_DEMO: 'never',
    LOG_LEVEL: 'info',
    // Two cores shared by every process: a neighbour holding the event loop up must not shed requests
    // for a moment; shedding has a test of its own. 503s with Retry-After are still counted apart.
    MAX_EVENT_LOOP_DELAY_MS: '0',
    // Limits per tenant and per client address are not what this run measures, and all of it comes
    // from 127.0.0.1.
    RATE_LIMIT_SCALE: '1000000',
    AUTH_FAILURES_PER_ADDRESS: '1000000',
    MAX_UNAUTHENTICATED_PER_ADDRESS: '512',
    // Every background pass runs several times during the load.
    INBOX_SWEEP_MS: '500',
    SCORING_SWEEP_MS: '2000',
    RETENTION_EVERY_MS: '2000',
    // A deletion falls due as soon as it is asked for, so the worker's purge runs during the load.
    WORKSPACE_DELETION_DELAY_DAYS: '0',
    // Each tenant has a receiver that never answers, beside a healthy one, with the default delivery caps:
    // the hanging one must not hold the tenant's slots (outbox/sender/deliverer.ts).
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    NODE_EXTRA_CA_CERTS: join(ROOT, 'test-output', 'tls', 'cert.pem'),
  };
  const t0 = Date.now();
  const ports = [await freePort(), await freePort()];
  const apis = ports.map((port) => `http://127.0.0.1:${port}`);
  const processes = [
    ...ports.map((port, i) => ({
      name: `api-${i}`,
      ...startService('api', { ...env, PORT: String(port), HOST: '127.0.0.1' }, /listening on/, 150_000),
    })),
    { name: 'worker-0', ...startService('worker', env, /worker started/, 150_000) },
    { name: 'worker-1', ...startService('worker', env, /worker started/, 150_000) },
  ];
  let stopped = false;
  const stopAll = async () => {
    if (stopped) return;
    stopped = true;
    await Promise.all(processes.map((s) => stop(s.child)));
  };

  try {
    // While the processes start, the tenants are written.
    const plans: TenantPlan[] = [];
    for (let t = 0; t <= size.tenants; t++) plans.push(await setupTenant(prisma, box, t, size, t === size.tenants));
    await Promise.all(processes.map((s) => s.started));

    const http = createHttp(apis);
    // Endpoints through the API, as a tenant makes them; subscribed to every event type.
    for (const plan of plans) {
      for (const [which, rx] of [
        ['ok', ok],
        ['fail', fail],
        ['hang', hang],
      ] as const) {
        const res = await http.send('setup', 'POST', '/api/v1/webhook-endpoints', {
          headers: { 'x-api-key': plan.apiKey },
          json: { url: rx.url, events: [...EVENT_NAMES], description: `mixed ${which}` },
        });
        if (res.status !== 201) throw new Error(`creating the ${which} endpoint answered ${res.status}: ${res.text}`);
        plan.endpoints[which] = (res.json as { id: string }).id;
      }
    }
    await seedCustomers(prisma, plans);
    await seedLabels(prisma, plans);
    await seedOldData(pool, plans);
    http.figures.clear();

    const deadlocksBefore = await readDeadlocks(pool);
    const states = plans.map((plan): TenantState => ({
      plan,
      active: [...plan.seeded],
      lateLeft: [...plan.late],
      orphanLeft: [],
      erased: new Map(),
      labelled: new Map(),
      usageAccepted: new Map(),
      usageAcceptedTotal: 0,
      idempotency: new Map(),
      closed: false,
      seq: 0,
    }));
    const owners = new Map<string, string>();
    for (const plan of plans) for (const c of [...plan.seeded, ...plan.late]) owners.set(c.id, plan.id);
    const snapshotOwners = async () => {
      const rows = await pool.query<{ id: string; tenant_id: string }>('SELECT id, tenant_id FROM customers');
      for (const r of rows.rows) owners.set(r.id, r.tenant_id);
    };

    const load = new Load(http, states, size, milestones, harnessErrors, owners);
    const cycles = watchLockCycles(pool, (e) => harnessErrors.push(`lock watcher: ${String(e)}`));
    const started = Date.now();
    const deadline = started + size.seconds * 1000;
    const monitor = (async () => {
      while (Date.now() < deadline) {
        await snapshotOwners().catch((e) => harnessErrors.push(`owner snapshot: ${String(e)}`));
        await sleep(5000);
      }
    })();
    await Promise.all([
      ...Array.from({ length: size.concurrency }, () => load.worker(deadline)),
      load.milestones(started, deadline, snapshotOwners),
      monitor,
    ]);
    const loadMs = Date.now() - started;
    await snapshotOwners();

    const doomed = plans.find((p) => p.doomed)!;
    const live = plans.filter((p) => !p.doomed);
    const quiesce = await waitForQuiet(pool, live, doomed, size.quiesceSeconds * 1000);

    // Stopping the processes ends their database sessions, which flushes the statistics they hold,
    // deadlocks included (PostgreSQL 15 has no way to ask another backend to flush).
    const lockCycles = await cycles.stop();
    const lingering = await lingeringSessions(pool);
    const exited = processes
      .filter((p) => p.child.exitCode !== null || p.child.signalCode !== null)
      .map((p) => `${p.name} exited with ${p.child.exitCode ?? p.child.signalCode}`);
    const stopping = Date.now();
    await stopAll();
    const deadlocksAfter = await readDeadlocks(pool, true);
    const background = await backgroundWork(pool, new Date(started));
    const phases = {
      startAndSetup: (started - t0) / 1000,
      load: loadMs / 1000,
      drain: quiesce.waitedMs / 1000,
      stop: (Date.now() - stopping) / 1000,
      checks: 0,
    };
    const logMatches: MixedReport['logMatches'] = [];
    const logErrors: MixedReport['logErrors'] = [];
    for (const s of processes) {
      const out = s.output();
      writeFileSync(join(logDir, `${s.name}.log`), out);
      const lines = out.split('\n');
      const matches = lines.map(conflictSite).filter((m): m is string => m !== null);
      const sites: Record<string, number> = {};
      for (const m of matches) sites[m] = (sites[m] ?? 0) + 1;
      logMatches.push({
        process: s.name,
        count: matches.length,
        sites,
        lines: lines
          .filter((l) => conflictSite(l) !== null)
          .slice(0, 3)
          .map((l) => l.slice(0, 600)),
      });
      const errors = lines.filter((l) => /"level":(50|60)/.test(l));
      logErrors.push({ process: s.name, count: errors.length, lines: errors.slice(0, 5).map((l) => l.slice(0, 600)) });
    }

    const report: Omit<MixedReport, 'checks'> = {
      size,
      databaseUrl,
      logDir,
      startedAt: new Date(started).toISOString(),
      loadMs,
      tenants: plans.map((p) => ({ id: p.id, doomed: p.doomed, customers: p.seeded.length + p.late.length })),
      doomedTenantId: doomed.id,
      figures: http.figures.list(),
      accepted: load.accepted,
      usage: Object.fromEntries(
        states.map((s) => [
          s.plan.id,
          {
            total: s.usageAcceptedTotal,
            perCustomer: Object.fromEntries(s.usageAccepted),
            unanswered: load.unansweredUsage.get(s.plan.id) ?? 0,
          },
        ]),
      ),
      idempotencyMismatches: load.idempotencyMismatches,
      duplicateMismatches: load.duplicateMismatches,
      erased: Object.fromEntries(
        states.map((s) => [
          s.plan.id,
          [...s.erased.values()].map((c) => ({ id: c.id, stripe: c.accounts.stripe, at: c.at, done: c.done, status: c.status })),
        ]),
      ),
      seen: Object.fromEntries([...load.seen].map(([t, list]) => [t, list])),
      owners: Object.fromEntries(owners),
      quiesce,
      exited,
      lingering,
      phases,
      background,
      deadlocks: { before: deadlocksBefore, after: deadlocksAfter },
      lockCycles,
      logMatches,
      logErrors,
      harnessErrors,
      milestones,
    };
    const checking = Date.now();
    const checks = await runChecks({ report, pool, plans, okHits: ok.hits, endpoints: plans.map((p) => p.endpoints) });
    phases.checks = (Date.now() - checking) / 1000;
    const full: MixedReport = { ...report, checks };
    writeFileSync(
      join(logDir, 'report.json'),
      JSON.stringify({ ...full, accepted: full.accepted.length, owners: undefined, seen: undefined }, null, 2),
    );
    return full;
  } finally {
    await stopAll();
    ok.close();
    fail.close();
    hang.close();
    await prisma.$disconnect().catch(() => {});
    await pool.end().catch(() => {});
    for (const topic of ['inbound.events', 'outbound.deliveries']) {
      for (const suffix of ['', '.retry', '.dead']) {
        try {
          execFileSync('rabbitmqctl', ['-q', 'delete_queue', `${prefix}.${topic}${suffix}`], { stdio: 'ignore' });
        } catch {
          // A queue never declared (a run that failed early) is nothing to clean up.
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// Setup

const sessions = createSessions({ secret: SESSION_SECRET, ttlSeconds: 3600 });

function customerPlan(tenantId: string, tag: string, t: number, kind: 'c' | 'l', i: number): CustomerPlan {
  // Fixed-width ids: no id is a substring of another, so erasing one customer (which empties the raw
  // bodies that contain its ids) touches no other customer's events.
  const n = `${kind}${pad(i)}`;
  const domain = `${n}-${tag}.example`;
  return {
    id: randomUUID(),
    tenantId,
    name: `Mixed ${tag} ${n} Holdings`,
    externalId: `ext-${tag}-${n}`,
    domain,
    email: `billing@${domain}`,
    accounts: {
      stripe: `cus_${tag}${n}z`,
      github: `gh-${tag}-${n}`,
      slack: `T${tag.toUpperCase()}${n.toUpperCase()}`,
      discord: `8${t}${kind === 'c' ? 1 : 2}${pad(i, 6)}77`,
      intercom: `co_${tag}_${n}`,
      meta_ads: `6${t}${kind === 'c' ? 1 : 2}${pad(i, 6)}55`,
    },
  };
}

async function setupTenant(
  prisma: Db,
  box: ReturnType<typeof createSecretBox>,
  t: number,
  size: MixedSize,
  doomed: boolean,
): Promise<TenantPlan> {
  const tag = `t${t}${rid().slice(0, 3)}`;
  const name = `Mixed tenant ${tag}${doomed ? ' (deleted during the run)' : ''}`;
  const tenant = await prisma.tenant.create({ data: { name, plan: 'scale' } });
  const { secret: apiKey } = await issueApiKey(prisma, { tenantId: tenant.id, name: 'mixed workload' });
  const passwordHash = await hashPassword(`pw-${rid()}`);
  const tokens: Record<'owner' | 'admin', string> = { owner: '', admin: '' };
  for (const role of ['owner', 'admin'] as const) {
    const user = await prisma.user.create({ data: { tenantId: tenant.id, email: `${role}-${tag}@mixed.example`, role, passwordHash } });
    tokens[role] = (await sessions.issue({ userId: user.id, tenantId: tenant.id, role })).token;
  }
  const store = createInboundSecretStore(prisma, box, { cacheMs: 0 });
  const secrets = {} as TenantPlan['secrets'];
  for (const provider of ['stripe', 'github', 'slack', 'intercom', 'meta_ads'] as const) {
    secrets[provider] = (await store.put({ tenantId: tenant.id, provider }, operator(tenant.id))).secret;
  }
  const discord = p.discordKeys();
  await store.put({ tenantId: tenant.id, provider: 'discord', secret: discord.publicHex }, operator(tenant.id));
  const lateCount = Math.max(4, Math.floor(size.customersPerTenant / 6));
  return {
    id: tenant.id,
    name,
    tag,
    doomed,
    apiKey,
    ownerToken: tokens.owner,
    adminToken: tokens.admin,
    secrets,
    discordKey: discord.privateKey,
    seeded: Array.from({ length: size.customersPerTenant }, (_, i) => customerPlan(tenant.id, tag, t, 'c', i)),
    late: Array.from({ length: lateCount }, (_, i) => customerPlan(tenant.id, tag, t, 'l', i)),
    orphanDomains: Array.from({ length: lateCount }, (_, i) => `o${pad(i)}-${tag}.example`),
    endpoints: { ok: '', fail: '', hang: '' },
  };
}

/** The seeded customers with an identity of every provider; written the same way into the replay's database. */
export async function seedCustomers(prisma: Db, plans: Pick<TenantPlan, 'seeded'>[]) {
  const customers = plans.flatMap((p) => p.seeded);
  await prisma.customer.createMany({
    data: customers.map((c) => ({
      id: c.id,
      tenantId: c.tenantId,
      name: c.name,
      externalId: c.externalId,
      domain: c.domain,
      email: c.email,
    })),
  });
  await prisma.customerIdentity.createMany({
    data: customers.flatMap((c) =>
      PROVIDERS.map((provider) => ({ tenantId: c.tenantId, customerId: c.id, provider, externalId: c.accounts[provider] })),
    ),
  });
}

/** Labels for most of the training set, so that training has enough of them; the load adds and repeats labels. */
async function seedLabels(prisma: Db, plans: TenantPlan[]) {
  await prisma.churnOutcome.createMany({
    data: plans.flatMap((p) =>
      p.seeded.slice(0, TRAINING_SET - 4).map((c, i) => ({
        tenantId: p.id,
        customerId: c.id,
        churned: i % 2 === 0,
        at: new Date(Date.now() - 2 * 86_400_000),
        source: 'api',
      })),
    ),
  });
}

/**
 * Data old enough for the retention windows the load sets (signals 120 days, raw bodies 7): the worker's
 * retention pass then rolls up and deletes signals and empties bodies while the load runs, instead of
 * finding nothing to do. Kinds and providers the checks do not count.
 */
async function seedOldData(pool: pg.Pool, plans: TenantPlan[]) {
  for (const plan of plans) {
    const customers = plan.seeded.slice(0, 20);
    await pool.query(
      `INSERT INTO signals (id, tenant_id, customer_id, source, kind, occurred_at, value, attributes)
       SELECT gen_random_uuid(), $1, c, 'slack', 'chat.message', now() - make_interval(days => 125 + (g % 20)), 1, '{"actor":"U1"}'
       FROM unnest($2::uuid[]) AS c, generate_series(1, 10) AS g`,
      [plan.id, customers.map((c) => c.id)],
    );
    await pool.query(
      `INSERT INTO inbox_events (id, tenant_id, provider, dedup_key, event_type, body, status, received_at, processed_at)
       SELECT gen_random_uuid(), $1, 'github', 'old-' || g, 'push', '{"old":true}', 'processed', now() - interval '20 days', now() - interval '20 days'
       FROM generate_series(1, 50) AS g`,
      [plan.id],
    );
  }
}

// ---------------------------------------------------------------------------------------------------
// HTTP with figures

class Figures {
  private map = new Map<string, PathFigures>();
  private times = new Map<string, number[]>();
  clear() {
    this.map.clear();
    this.times.clear();
  }
  record(path: string, status: number | 'none', retryAfter: boolean, requestId: string | null, body: string, ms: number, tenant: string) {
    let f = this.map.get(path);
    if (!f) {
      f = {
        path,
        count: 0,
        ok: 0,
        serverErrors: 0,
        shed: 0,
        rateLimited: 0,
        otherClientErrors: 0,
        noAnswer: 0,
        statuses: {},
        p95Ms: 0,
        maxMs: 0,
        serverErrorsByTenant: {},
        samples: [],
      };
      this.map.set(path, f);
      this.times.set(path, []);
    }
    f.count++;
    this.times.get(path)!.push(ms);
    f.statuses[String(status)] = (f.statuses[String(status)] ?? 0) + 1;
    if (status === 'none') {
      f.noAnswer++;
      if (f.samples.length < 5) f.samples.push({ status: 0, requestId, tenant, body: body.slice(0, 400) });
    } else if (status < 300) f.ok++;
    else if (status === 503 && retryAfter) f.shed++;
    else if (status >= 500) {
      f.serverErrors++;
      f.serverErrorsByTenant[tenant] = (f.serverErrorsByTenant[tenant] ?? 0) + 1;
      if (f.samples.length < 5) f.samples.push({ status, requestId, tenant, body: body.slice(0, 400) });
    } else if (status === 429) f.rateLimited++;
    else f.otherClientErrors++;
  }
  list() {
    for (const f of this.map.values()) {
      const t = [...this.times.get(f.path)!].sort((a, b) => a - b);
      f.p95Ms = Math.round(t[Math.min(t.length - 1, Math.floor(t.length * 0.95))] ?? 0);
      f.maxMs = Math.round(t[t.length - 1] ?? 0);
    }
    return [...this.map.values()].sort((a, b) => a.path.localeCompare(b.path));
  }
}

interface Answer {
  status: number | 'none';
  text: string;
  json: unknown;
  headers: Headers | null;
  error?: string;
}

function createHttp(apis: string[]) {
  const figures = new Figures();
  let turn = 0;
  return {
    figures,
    /** `opts.tenant` labels the 5xx samples: which tenant asked (its tag, and whether its workspace was being deleted). */
    async send(
      path: string,
      method: string,
      url: string,
      opts: { headers?: Record<string, string>; json?: unknown; body?: string; stream?: boolean; tenant?: string } = {},
    ): Promise<Answer> {
      const tenant = opts.tenant ?? '-';
      const t0 = performance.now();
      const base = apis[turn++ % apis.length]!;
      // The service logs under the request id it is given: this one names the tenant, so its log lines can be told apart.
      const requestId = `mx-${tenant.split(' ')[0]}-${rid().slice(0, 10)}`;
      const headers: Record<string, string> = { 'x-request-id': requestId, ...(opts.headers ?? {}) };
      let body = opts.body;
      if (opts.json !== undefined) {
        body = JSON.stringify(opts.json);
        headers['content-type'] ??= 'application/json';
      }
      let res: Response;
      try {
        res = await fetch(`${base}${url}`, { method, headers, body, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
      } catch (e) {
        figures.record(path, 'none', false, requestId, `${String(e)} ${String((e as Error).cause ?? '')}`, performance.now() - t0, tenant);
        return { status: 'none', text: '', json: undefined, headers: null, error: String(e) };
      }
      let text = '';
      try {
        text = await res.text();
      } catch (e) {
        // A body cut off after its status line: the answer was not whole, so it counts as no answer. But for
        // the workspace deleted during the run: an export still streaming stops when its credential stops
        // working (checked between pages), and is counted as what the workspace then is, gone (410).
        const gone = tenant.includes('deleted during the run');
        figures.record(
          gone ? `${path} (cut off: workspace deleted)` : `${path} (cut off)`,
          gone ? 410 : 'none',
          false,
          res.headers.get('x-request-id'),
          String(e),
          performance.now() - t0,
          tenant,
        );
        return { status: 'none', text: '', json: undefined, headers: res.headers, error: `cut off after ${res.status}: ${String(e)}` };
      }
      figures.record(
        path,
        res.status,
        res.headers.has('retry-after'),
        res.headers.get('x-request-id'),
        text,
        performance.now() - t0,
        tenant,
      );
      let json: unknown;
      if (!opts.stream) {
        try {
          json = text ? JSON.parse(text) : undefined;
        } catch {
          json = undefined;
        }
      }
      return { status: res.status, text, json, headers: res.headers };
    },
  };
}
type Http = ReturnType<typeof createHttp>;

// ---------------------------------------------------------------------------------------------------
// The load

type Signed = { body: string; headers: Record<string, string> };
type GithubDelivery = { event: string; delivery: ReturnType<typeof randomUUID> };

class Load {
  accepted: AcceptedInbound[] = [];
  idempotencyMismatches: MixedReport['idempotencyMismatches'] = [];
  duplicateMismatches: MixedReport['duplicateMismatches'] = [];
  seen = new Map<string, { path: string; ids: string[] }[]>();
  unansweredUsage = new Map<string, number>();
  private seq = 0;

  constructor(
    private http: Http,
    private states: TenantState[],
    private size: MixedSize,
    private log: MixedReport['milestones'],
    private errors: string[],
    private owners: Map<string, string>,
  ) {}

  /** A request on behalf of a tenant, labelled with it. */
  private send(s: TenantState, path: string, method: string, url: string, opts: Parameters<Http['send']>[3] = {}) {
    return this.http.send(path, method, url, {
      ...opts,
      tenant: `${s.plan.tag}${s.plan.doomed ? ' (its workspace is deleted during the run)' : ''}`,
    });
  }

  private liveStates() {
    return this.states.filter((s) => !s.closed);
  }

  /** One client: picks a task, runs it, until the deadline. Tasks weighted toward the contested writes. */
  async worker(deadline: number) {
    const tasks: [number, (s: TenantState) => Promise<void>][] = [
      [26, (s) => this.invoiceLifecycle(s)],
      [16, (s) => this.usageBatch(s)],
      [22, (s) => this.providerEvent(s)],
      [9, (s) => this.stripeOther(s)],
      [7, (s) => this.customerWrite(s)],
      [4, (s) => this.label(s)],
      [14, (s) => this.read(s)],
      [2, (s) => this.exportDataset(s)],
    ];
    const total = tasks.reduce((a, [w]) => a + w, 0);
    while (Date.now() < deadline) {
      const live = this.liveStates();
      if (live.length === 0) return;
      const s = pick(live);
      let r = Math.random() * total;
      const task = tasks.find(([w]) => (r -= w) < 0)![1];
      try {
        await task(s);
      } catch (e) {
        this.errors.push(`${(e as Error).stack ?? String(e)}`.slice(0, 800));
        if (this.errors.length > 50) throw new Error(`the harness failed 50 times; first: ${this.errors[0]}`);
      }
    }
  }

  /** The one-off steps, each at its share of the load: retention change, erasures, deletion, training. */
  async milestones(started: number, deadline: number, snapshotOwners: () => Promise<void>) {
    const span = deadline - started;
    const steps: { at: number; run: () => Promise<void> }[] = [
      { at: 0.25, run: () => this.changeRetention() },
      { at: 0.4, run: () => this.deleteDoomedWorkspace(snapshotOwners) },
      { at: 0.55, run: () => this.train() },
      { at: 0.8, run: () => this.train() },
    ];
    for (let e = 0; e < this.size.erasuresPerTenant; e++) {
      steps.push({ at: 0.15 + (0.7 * e) / Math.max(1, this.size.erasuresPerTenant), run: () => this.eraseOne() });
    }
    // Each at its own time: a slow one (an erasure waits for its tenant's inbound batches) delays no other.
    await Promise.all(
      steps.map(async (step) => {
        const wait = started + step.at * span - Date.now();
        if (wait > 0) await sleep(wait);
        if (Date.now() >= deadline) return;
        try {
          await step.run();
        } catch (e) {
          this.errors.push(`milestone: ${(e as Error).stack ?? String(e)}`.slice(0, 800));
        }
      }),
    );
  }

  private mark(what: string, status?: number | 'none') {
    this.log.push({ at: Date.now(), what, ...(typeof status === 'number' ? { status } : {}) });
  }

  // --- inbound --------------------------------------------------------------------------------------

  private sign(s: TenantState, provider: Provider, payload: object, github?: GithubDelivery): Signed {
    const plan = s.plan;
    switch (provider) {
      case 'stripe':
        return p.signStripe(plan.secrets.stripe, payload);
      case 'github':
        return p.signGithub(plan.secrets.github, github!.event, payload, github!.delivery);
      case 'slack':
        return p.signSlack(plan.secrets.slack, payload);
      case 'discord':
        return p.signDiscord(plan.discordKey, payload);
      case 'intercom':
        return p.signIntercom(plan.secrets.intercom, payload);
      case 'meta_ads':
        return p.signMeta(plan.secrets.meta_ads, payload);
    }
  }

  /**
   * Posts one provider delivery as the provider would: answers other than 2xx are retried (up to three
   * sends, re-signed, as Stripe and GitHub do), each answer counted. Resolves with the stored event's id
   * once accepted, or null.
   */
  private async deliver(
    s: TenantState,
    provider: Provider,
    payload: object,
    type: string,
    object: string | null,
    github?: GithubDelivery,
  ): Promise<string | null> {
    const path = provider === 'stripe' ? `POST /webhooks/in/stripe ${type}` : `POST /webhooks/in/${provider}`;
    for (let attempt = 1; attempt <= 3; attempt++) {
      const signed = this.sign(s, provider, payload, github);
      const res = await this.send(s, path, 'POST', `/api/v1/webhooks/in/${provider}/${s.plan.id}`, {
        headers: signed.headers,
        body: signed.body,
      });
      const body = res.json as { id?: string; duplicate?: boolean } | undefined;
      if ((res.status === 202 || res.status === 200) && body?.id) {
        const o = (payload as { data?: { object?: { object?: string; id?: string; customer?: string } } }).data?.object;
        const account = provider === 'stripe' ? ((o?.object === 'customer' ? o.id : o?.customer) ?? null) : null;
        this.accepted.push({ id: body.id, tenantId: s.plan.id, provider, type, seq: this.seq++, object, account, at: Date.now() });
        // A provider's retry of a delivery it already made: the same event, answered as a duplicate.
        if (Math.random() < 0.04) await this.redeliver(s, provider, payload, type, body.id, github);
        return body.id;
      }
      // Retried after a 5xx or a 429, as providers do; a refusal or no answer at all (already a failure of the run) ends it.
      if (res.status === 'none' || (res.status < 500 && res.status !== 429)) return null;
      await sleep(200 * attempt);
    }
    return null;
  }

  private async redeliver(s: TenantState, provider: Provider, payload: object, type: string, firstId: string, github?: GithubDelivery) {
    const signed = this.sign(s, provider, payload, github);
    const path = provider === 'stripe' ? `POST /webhooks/in/stripe ${type} (redelivery)` : `POST /webhooks/in/${provider} (redelivery)`;
    const res = await this.send(s, path, 'POST', `/api/v1/webhooks/in/${provider}/${s.plan.id}`, {
      headers: signed.headers,
      body: signed.body,
    });
    const body = res.json as { id?: string; duplicate?: boolean } | undefined;
    if (res.status === 503 || res.status === 'none') return;
    // The doomed workspace may be removed between the first delivery and its retry: its address is gone.
    if (s.plan.doomed && res.status === 404) return;
    if (res.status !== 200 || body?.id !== firstId || body?.duplicate !== true) {
      this.duplicateMismatches.push({
        tenantId: s.plan.id,
        provider,
        firstId,
        status: typeof res.status === 'number' ? res.status : 0,
        body: res.text.slice(0, 300),
      });
    }
  }

  /** The worst case: one invoice's created, finalized and paid, each sent once the one before it was accepted. */
  private async invoiceLifecycle(s: TenantState) {
    const c = this.stripeAccountOf(s);
    const invoice = `in_${s.plan.tag}_${pad(s.seq++, 6)}`;
    const object = `invoice:${s.plan.id}:${invoice}`;
    const total = 1000 + Math.floor(Math.random() * 9000);
    const steps: [string, object][] = [
      ['invoice.created', p.stripeInvoice(invoice, c, total, { status: 'draft' })],
      ['invoice.finalized', p.stripeInvoice(invoice, c, total + 100, { status: 'open' })],
      [
        'invoice.paid',
        p.stripeInvoice(invoice, c, total + 100, {
          status: 'paid',
          charge: `ch_${invoice.slice(3)}`,
          payment_intent: `pi_${invoice.slice(3)}`,
        }),
      ],
    ];
    for (const [type, o] of steps) {
      if (!(await this.deliver(s, 'stripe', p.stripeEvent(type, o), type, object))) return;
    }
    if (Math.random() < 0.3) {
      const charge = {
        id: `ch_${invoice.slice(3)}`,
        object: 'charge',
        customer: c,
        invoice,
        payment_intent: `pi_${invoice.slice(3)}`,
        amount: total + 100,
        amount_refunded: total + 100,
        currency: 'usd',
        refunded: true,
        refunds: { object: 'list', data: [{ id: `re_${rid()}`, reason: 'requested_by_customer' }] },
      };
      await this.deliver(s, 'stripe', p.stripeEvent('charge.refunded', charge), 'charge.refunded', null);
    }
  }

  /** Mostly an existing customer's account; sometimes a late customer's, whose events wait for it. */
  private stripeAccountOf(s: TenantState): string {
    if (s.lateLeft.length && Math.random() < 0.1) return pick(s.lateLeft).accounts.stripe;
    return pick(s.active).accounts.stripe;
  }

  private async stripeOther(s: TenantState) {
    const r = Math.random();
    if (r < 0.5) {
      // A subscription created, then updated (more seats, sometimes a longer trial), sometimes cancelled.
      const sub = `sub_${s.plan.tag}_${pad(s.seq++, 6)}`;
      const object = `subscription:${s.plan.id}:${sub}`;
      const c = this.stripeAccountOf(s);
      const trial = p.nowS() + 14 * 86400;
      const subscription = (status: string, seats: number, trialEnd: number | null) => ({
        id: sub,
        object: 'subscription',
        customer: c,
        status,
        currency: 'usd',
        trial_end: trialEnd,
        items: {
          object: 'list',
          data: [
            {
              id: `si_${sub}`,
              quantity: seats,
              price: { id: 'price_pro', unit_amount: 5000, currency: 'usd', recurring: { interval: 'month', interval_count: 1 } },
            },
          ],
        },
      });
      const steps: [string, object][] = [
        ['customer.subscription.created', subscription('trialing', 5, trial)],
        ['customer.subscription.updated', subscription('active', 7, Math.random() < 0.3 ? trial + 7 * 86400 : trial)],
      ];
      if (Math.random() < 0.1) steps.push(['customer.subscription.deleted', subscription('canceled', 7, trial)]);
      for (const [type, o] of steps) if (!(await this.deliver(s, 'stripe', p.stripeEvent(type, o), type, object))) return;
    } else if (r < 0.8) {
      const c = pick(s.active);
      await this.deliver(
        s,
        'stripe',
        p.stripeEvent('customer.updated', p.stripeCustomer(c.accounts.stripe, c.email, c.name)),
        'customer.updated',
        null,
      );
    } else {
      // An account no customer has yet: Stripe customers become customers.
      const n = `n${pad(s.seq++, 5)}`;
      const account = `cus_${s.plan.tag}${n}z`;
      await this.deliver(
        s,
        'stripe',
        p.stripeEvent('customer.created', p.stripeCustomer(account, `ap@${n}-${s.plan.tag}.example`, `Mixed ${s.plan.tag} ${n} New`)),
        'customer.created',
        null,
      );
    }
  }

  /** One event of the other five providers, about an active customer, a late one's account, or an orphan domain. */
  private async providerEvent(s: TenantState) {
    const provider = pick(['github', 'slack', 'discord', 'intercom', 'meta_ads'] as const);
    const r = Math.random();
    const late = s.lateLeft.length > 0 && r < 0.12 ? pick(s.lateLeft) : null;
    const orphan = !late && r < 0.22 && (provider === 'intercom' || provider === 'meta_ads') ? pick(s.plan.orphanDomains) : null;
    const c = late ?? pick(s.active);
    const email = orphan ? `lead-${rid().slice(0, 4)}@${orphan}` : `ops@${c.domain}`;
    if (orphan && !s.orphanLeft.includes(orphan)) s.orphanLeft.push(orphan);
    switch (provider) {
      case 'github':
        await this.deliver(s, 'github', p.githubPush(c.accounts.github, 1 + Math.floor(Math.random() * 3)), 'push', null, {
          event: 'push',
          delivery: randomUUID(),
        });
        return;
      case 'slack':
        await this.deliver(
          s,
          'slack',
          p.slackMessage(c.accounts.slack, `C${c.accounts.slack.slice(1)}`, 'The new dashboard is great, thanks'),
          'message',
          null,
        );
        return;
      case 'discord': {
        const payload = {
          op: 0,
          t: 'MESSAGE_CREATE',
          s: 42,
          d: {
            id: `${(BigInt(Date.now()) << 22n) | BigInt(this.seq++ & 0x3fffff)}`,
            guild_id: c.accounts.discord,
            channel_id: '99',
            content: 'Is the export broken again?',
            author: { id: '5', username: 'user' },
            timestamp: new Date().toISOString(),
          },
        };
        await this.deliver(s, 'discord', payload, 'MESSAGE_CREATE', null);
        return;
      }
      case 'intercom': {
        const payload = p.intercomConversation('conversation.user.created', email, {
          contacts: { contacts: [{ id: `ct_${rid().slice(0, 6)}` }] },
          ...(orphan ? {} : { companies: { companies: [{ company_id: c.accounts.intercom }] } }),
        });
        await this.deliver(s, 'intercom', payload, 'conversation.user.created', null);
        return;
      }
      case 'meta_ads':
        await this.deliver(
          s,
          'meta_ads',
          p.metaLead(orphan ? `9${rid().replace(/\D/g, '').slice(0, 8) || '1'}` : c.accounts.meta_ads, `${Date.now()}${this.seq++}`, email),
          'leadgen',
          null,
        );
        return;
    }
  }

  // --- REST -----------------------------------------------------------------------------------------

  private key(s: TenantState) {
    return { 'x-api-key': s.plan.apiKey };
  }

  /** A batch of usage events over many of the tenant's customers: without a key, with a new one, or repeating one. */
  private async usageBatch(s: TenantState) {
    const r = Math.random();
    const earlier = [...s.idempotency.entries()].filter(([, v]) => v.sent < 3);
    let key: string | null = null;
    let body: string;
    let events: { customer_id?: string; external_id?: string }[] = [];
    if (r < 0.15 && earlier.length) {
      const [k, v] = pick(earlier);
      key = k;
      body = v.body;
      events = (JSON.parse(body) as { events: typeof events }).events;
    } else {
      events = Array.from({ length: this.size.eventsPerBatch }, (_, i) => {
        const c = pick(s.active);
        return {
          ...(i % 2 === 0 ? { customer_id: c.id } : { external_id: c.externalId }),
          event: pick(['report.exported', 'dashboard.viewed', 'seat.invited', 'api.called']),
          user_id: `u_${Math.floor(Math.random() * 20)}`,
          ...(i % 3 === 0 ? { timestamp: new Date(Date.now() - 3_600_000).toISOString() } : {}),
          properties: { i },
        };
      });
      body = JSON.stringify({ events });
      if (r < 0.5) {
        key = `mixed-${s.plan.tag}-${rid()}`;
        s.idempotency.set(key, { body, accepted: null, sent: 0 });
      }
    }
    const path = key
      ? s.idempotency.get(key)!.sent > 0
        ? 'POST /events (repeated Idempotency-Key)'
        : 'POST /events (Idempotency-Key)'
      : 'POST /events';
    if (key) s.idempotency.get(key)!.sent++;
    const res = await this.send(s, path, 'POST', '/api/v1/events', {
      headers: { ...this.key(s), ...(key ? { 'idempotency-key': key } : {}), 'content-type': 'application/json' },
      body,
    });
    if (res.status === 'none' && !key) {
      // Whether it was stored is unknown: the check allows for these events, and says so.
      this.unansweredUsage.set(s.plan.id, (this.unansweredUsage.get(s.plan.id) ?? 0) + events.length);
      return;
    }
    if (res.status !== 202) return;
    const answer = res.json as { accepted: number; errors: { index: number }[] };
    if (key) {
      const entry = s.idempotency.get(key)!;
      if (entry.accepted !== null) {
        if (entry.accepted !== answer.accepted)
          this.idempotencyMismatches.push({ tenantId: s.plan.id, key, first: entry.accepted, again: answer.accepted, status: 202 });
        return;
      }
      entry.accepted = answer.accepted;
    }
    const refused = new Set(answer.errors.map((e) => e.index));
    const byExternal = new Map([...s.plan.seeded, ...s.plan.late].map((c) => [c.externalId, c.id]));
    let counted = 0;
    events.forEach((e, i) => {
      if (refused.has(i)) return;
      const id = e.customer_id ?? byExternal.get(e.external_id!)!;
      s.usageAccepted.set(id, (s.usageAccepted.get(id) ?? 0) + 1);
      counted++;
    });
    s.usageAcceptedTotal += answer.accepted;
    if (counted !== answer.accepted) this.errors.push(`usage answer: accepted ${answer.accepted} but ${counted} events without an error`);
  }

  /** A late customer created with the accounts and domain its events already named; or a PATCH of a domain or a name. */
  private async customerWrite(s: TenantState) {
    const r = Math.random();
    if (r < 0.4 && s.lateLeft.length) {
      const c = s.lateLeft.shift()!;
      const res = await this.send(s, 'POST /customers', 'POST', '/api/v1/customers', {
        headers: this.key(s),
        json: {
          name: c.name,
          external_id: c.externalId,
          domain: c.domain,
          email: c.email,
          identities: PROVIDERS.map((provider) => ({ provider, external_id: c.accounts[provider] })),
        },
      });
      if (res.status === 201) {
        c.id = (res.json as { id: string }).id;
        this.owners.set(c.id, s.plan.id);
        s.active.push(c);
      } else s.lateLeft.push(c);
      return;
    }
    const c = pick(s.active);
    const domain = r < 0.7 && s.orphanLeft.length ? s.orphanLeft.shift()! : null;
    const res = await this.send(s, 'PATCH /customers/{id}', 'PATCH', `/api/v1/customers/${c.id}`, {
      headers: this.key(s),
      json: domain ? { domain } : { name: `${c.name.replace(/ \(renamed \d+\)$/, '')} (renamed ${s.seq++})` },
    });
    if (res.status === 200 && domain) c.domain = domain;
    else if (domain) s.orphanLeft.push(domain);
  }

  /** A label for one of the training set (the first seeded customers), the same outcome each time it is labelled. */
  private async label(s: TenantState) {
    const i = Math.floor(Math.random() * TRAINING_SET);
    const c = s.plan.seeded[i]!;
    if (s.erased.has(c.id)) return;
    const churned = i % 2 === 0;
    s.labelled.set(c.id, churned);
    await this.send(s, 'POST /customers/{id}/churn-outcome', 'POST', `/api/v1/customers/${c.id}/churn-outcome`, {
      headers: this.key(s),
      json: { churned, at: new Date(Date.now() - 86_400_000).toISOString() },
    });
  }

  private see(s: TenantState, path: string, ids: string[]) {
    let list = this.seen.get(s.plan.id);
    if (!list) this.seen.set(s.plan.id, (list = []));
    if (ids.length) list.push({ path, ids });
  }

  private async read(s: TenantState) {
    const r = Math.random();
    if (r < 0.4) {
      let cursor: string | null = null;
      for (let page = 0; page < 3; page++) {
        const res = await this.send(
          s,
          'GET /customers',
          'GET',
          `/api/v1/customers?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
          {
            headers: this.key(s),
          },
        );
        if (res.status !== 200) return;
        const body = res.json as { data: { id: string }[]; has_more: boolean; next_cursor: string | null };
        this.see(
          s,
          'GET /customers',
          body.data.map((c) => c.id),
        );
        if (!body.has_more || !body.next_cursor) return;
        cursor = body.next_cursor;
      }
    } else if (r < 0.75) {
      const c = pick([...s.active, ...s.erased.values()]);
      const res = await this.send(s, 'GET /customers/{id}/health', 'GET', `/api/v1/customers/${c.id}/health`, { headers: this.key(s) });
      if (res.status === 200) this.see(s, 'GET /customers/{id}/health', [(res.json as { customer_id: string }).customer_id]);
    } else {
      const res = await this.send(s, 'GET /alerts', 'GET', '/api/v1/alerts?limit=100', { headers: this.key(s) });
      if (res.status === 200)
        this.see(
          s,
          'GET /alerts',
          (res.json as { data: { customer_id: string }[] }).data.map((a) => a.customer_id),
        );
    }
  }

  private async exportDataset(s: TenantState) {
    const dataset = pick(['customers', 'alerts', 'signals'] as const);
    // Signals of the last half minute: the whole dataset grows with the load and would make exports the load.
    const query =
      dataset === 'signals' ? `?format=ndjson&since=${encodeURIComponent(new Date(Date.now() - 30_000).toISOString())}` : '?format=ndjson';
    const res = await this.send(s, `GET /exports/${dataset}`, 'GET', `/api/v1/exports/${dataset}${query}`, {
      headers: this.key(s),
      stream: true,
    });
    if (res.status !== 200) return;
    const ids: string[] = [];
    for (const line of res.text.split('\n')) {
      if (!line.trim()) continue;
      const row = JSON.parse(line) as { id?: string; customer_id?: string | null; tenant_id?: string };
      if (row.tenant_id && row.tenant_id !== s.plan.id) ids.push(`tenant:${row.tenant_id}`);
      const id = dataset === 'customers' ? row.id : row.customer_id;
      if (id) ids.push(id);
    }
    this.see(s, `GET /exports/${dataset}`, ids);
  }

  // --- milestones -----------------------------------------------------------------------------------

  private async changeRetention() {
    for (const s of this.liveStates()) {
      const res = await this.send(s, 'PUT /retention', 'PUT', '/api/v1/retention', {
        headers: { authorization: `Bearer ${s.plan.adminToken}` },
        json: { inbound_bodies: 7, signals: 120, deliveries: 1 },
      });
      this.mark(`retention shortened for ${s.plan.tag}`, res.status);
    }
  }

  /** Erases one seeded customer of each tenant that no label depends on; retried on a 5xx like a careful client. */
  private async eraseOne() {
    // Every tenant at once: an erasure waits for its tenant's inbound batches, and one after another they outlast the load.
    await Promise.all(this.liveStates().map((s) => this.erase(s)));
  }

  private async erase(s: TenantState) {
    if (s.closed) return;
    const candidates = s.active.filter((c) => s.plan.seeded.indexOf(c) >= TRAINING_SET);
    if (!candidates.length) return;
    const c = pick(candidates);
    s.active = s.active.filter((x) => x !== c);
    const erasure = { ...c, at: Date.now(), done: 0, status: 'none' as number | 'none' };
    s.erased.set(c.id, erasure);
    let status: number | 'none' = 'none';
    for (let attempt = 1; attempt <= 3; attempt++) {
      const res = await this.send(s, 'DELETE /customers/{id}', 'DELETE', `/api/v1/customers/${c.id}`, { headers: this.key(s) });
      status = res.status;
      // Retried only after a 5xx: after no answer at all the erasure may well have happened.
      if (status === 200 || status === 404 || status === 'none') break;
      await sleep(300);
    }
    erasure.done = Date.now();
    erasure.status = status;
    this.mark(`erased ${c.externalId}`, status);
  }

  private async train() {
    await Promise.all(
      this.liveStates().map(async (s) => {
        const res = await this.send(s, 'POST /churn-model/train', 'POST', '/api/v1/churn-model/train', { headers: this.key(s) });
        this.mark(`trained ${s.plan.tag}`, res.status);
      }),
    );
  }

  /** The owner deletes the doomed workspace; with no undo window it is due at once, and the worker's purge removes it. */
  private async deleteDoomedWorkspace(snapshotOwners: () => Promise<void>) {
    const s = this.states.find((x) => x.plan.doomed)!;
    const res = await this.send(s, 'POST /workspace/deletion', 'POST', '/api/v1/workspace/deletion', {
      headers: { authorization: `Bearer ${s.plan.ownerToken}` },
      json: { confirm_name: s.plan.name },
    });
    this.mark('deletion of the doomed workspace requested', res.status);
    if (res.status !== 202) return;
    s.closed = true;
    await snapshotOwners();
    // Once due, its key and its inbound address are refused: 401 and 404, never a 5xx.
    await sleep(3000);
    await this.send(s, 'GET /customers (deleted workspace)', 'GET', '/api/v1/customers', { headers: this.key(s) });
    const signed = p.signStripe(
      s.plan.secrets.stripe,
      p.stripeEvent('customer.updated', p.stripeCustomer(s.plan.seeded[0]!.accounts.stripe)),
    );
    await this.send(s, 'POST /webhooks/in/stripe (deleted workspace)', 'POST', `/api/v1/webhooks/in/stripe/${s.plan.id}`, signed);
  }
}

// ---------------------------------------------------------------------------------------------------
// Quiet and statistics

/**
 * For a log line reporting a deadlock or a serialization failure, where it arose: the log message, the
 * error code, the first frames under src/ and the relation PostgreSQL names; null for any other line.
 * JSON lines are read field by field, so a port or a duration that happens to contain 40001 is no match.
 */
export function conflictSite(line: string): string | null {
  let j: { msg?: string; err?: { code?: string; message?: string; stack?: string; where?: string } };
  try {
    j = JSON.parse(line);
  } catch {
    return /40P01|deadlock detected|could not serialize/i.test(line) ? `unstructured: ${line.slice(0, 120)}` : null;
  }
  const e = j.err ?? {};
  const hit =
    e.code === '40P01' || e.code === '40001' || /deadlock detected|could not serialize/i.test(`${e.message ?? ''} ${j.msg ?? ''}`);
  if (!hit) return null;
  const frames = [...(e.stack ?? '').matchAll(/\/src\/([\w/.-]+:\d+)/g)].map((m) => m[1]!).filter((f) => !f.startsWith('db/sql.ts'));
  const relation = /in relation "([^"]+)"/.exec(e.where ?? '')?.[1];
  return `${j.msg ?? '?'} [${e.code ?? '?'}] at ${frames.slice(0, 2).join(' ← ') || '?'}${relation ? ` on ${relation}` : ''}`;
}

async function count(pool: pg.Pool, sql: string, params: unknown[] = []): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(sql, params);
  return rows[0]!.n;
}

/** Polls until nothing is left to do: no event received but not applied, no outbox event not fanned out, no delivery to a healthy receiver pending, no recompute due, the doomed workspace gone. */
async function waitForQuiet(pool: pg.Pool, live: TenantPlan[], doomed: TenantPlan, boundMs: number) {
  const started = Date.now();
  const okEndpoints = live.map((p) => p.endpoints.ok);
  const probe = async () => ({
    inboxReceived: await count(pool, `SELECT count(*)::int AS n FROM inbox_events WHERE status = 'received'`),
    outboxUndispatched: await count(pool, 'SELECT count(*)::int AS n FROM outbox_pending'),
    healthyDeliveriesPending: await count(
      pool,
      `SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'pending' AND endpoint_id = ANY($1::uuid[])`,
      [okEndpoints],
    ),
    scoringDue: await count(pool, 'SELECT count(*)::int AS n FROM scoring_queue WHERE due_at <= now()'),
    doomedTenantRows: await count(pool, 'SELECT count(*)::int AS n FROM tenants WHERE id = $1', [doomed.id]),
  });
  let remaining = await probe();
  let quietSince: number | null = null;
  const timeline: string[] = [];
  let lastNote = -Infinity;
  while (Date.now() - started < boundMs) {
    if (Date.now() - lastNote >= 5000) {
      timeline.push(`${((Date.now() - started) / 1000).toFixed(0)}s ${JSON.stringify(remaining)}`);
      lastNote = Date.now();
    }
    const quiet = Object.values(remaining).every((n) => n === 0);
    if (quiet) {
      quietSince ??= Date.now();
      // Quiet for a second and a half: a recompute due a second after the last change has had its turn.
      if (Date.now() - quietSince >= 1500) return { drained: true, waitedMs: Date.now() - started, remaining, timeline };
    } else quietSince = null;
    await sleep(500);
    remaining = await probe();
  }
  return { drained: Object.values(remaining).every((n) => n === 0), waitedMs: Date.now() - started, remaining, timeline };
}

/**
 * Samples the sessions waiting for a lock every 100 ms and keeps each cycle of waits found among them (a
 * waits for b, ..., which waits for a), with each member's current statement: PostgreSQL lets a deadlock
 * stand for deadlock_timeout (a second by default) before it ends one member, so a sample meets it.
 */
function watchLockCycles(pool: pg.Pool, onError: (e: unknown) => void) {
  const found = new Map<string, string>();
  let stopped = false;
  const sample = async () => {
    const { rows } = await pool.query<{ pid: number; blockers: number[]; line: string }>(
      `SELECT pid, pg_blocking_pids(pid) AS blockers,
              format('pid %s waits on %s/%s: %s', pid, wait_event_type, wait_event, left(regexp_replace(query, '\\s+', ' ', 'g'), 300)) AS line
       FROM pg_stat_activity
       WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'`,
    );
    const waiting = new Map(rows.map((r) => [r.pid, r]));
    for (const start of waiting.keys()) {
      // Follows the first waiting blocker from each session; a cycle is where the path meets itself.
      const path: number[] = [];
      for (let at: number | undefined = start; at !== undefined && !path.includes(at);) {
        path.push(at);
        at = waiting.get(at)!.blockers.find((b) => waiting.has(b));
        if (at !== undefined && path.includes(at)) {
          const cycle = path.slice(path.indexOf(at));
          const key = [...cycle].sort().join(',');
          if (!found.has(key)) found.set(key, cycle.map((pid) => waiting.get(pid)!.line).join(' | '));
        }
      }
    }
  };
  const running = (async () => {
    while (!stopped) {
      await sample().catch(onError);
      await sleep(100);
    }
  })();
  return {
    async stop(): Promise<string[]> {
      stopped = true;
      await running;
      return [...found.values()];
    },
  };
}

/**
 * Sessions of the service on this database that, once the load is over, are still in a statement or a
 * transaction for seconds, and advisory locks still held: what a request or a pass stuck for good waits on.
 */
async function lingeringSessions(pool: pg.Pool): Promise<string[]> {
  const busy = await pool.query<{ line: string }>(
    `SELECT format('pid %s %s for %ss, waiting on %s/%s: %s', pid, state, round(extract(epoch FROM now() - coalesce(xact_start, query_start))),
                   coalesce(wait_event_type, '-'), coalesce(wait_event, '-'), left(regexp_replace(query, '\\s+', ' ', 'g'), 160)) AS line
     FROM pg_stat_activity
     WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'
       AND state <> 'idle' AND now() - coalesce(xact_start, query_start) > interval '5 seconds'
       AND query NOT LIKE 'LISTEN%'`,
  );
  const advisory = await pool.query<{ line: string }>(
    `SELECT format('pid %s %s advisory lock (%s, %s) %s', l.pid, CASE WHEN l.granted THEN 'holds' ELSE 'waits for' END, l.classid, l.objid, l.mode) AS line
     FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
     WHERE l.locktype = 'advisory' AND a.datname = current_database() AND l.pid <> pg_backend_pid()
       -- An accepting process holds its key shared, on an idle connection of its own, for as long as it runs.
       AND NOT (l.granted AND l.mode = 'ShareLock' AND a.state = 'idle')`,
  );
  return [...busy.rows, ...advisory.rows].map((r) => r.line);
}

/** Evidence that the worker's passes ran during the load, not merely that they were configured. */
async function backgroundWork(pool: pg.Pool, since: Date): Promise<string[]> {
  const out: string[] = [];
  const runs = await pool.query<{ kind: string; processed: string }>(
    'SELECT kind, processed::text AS processed FROM retention_runs WHERE last_run_at >= $1 ORDER BY kind',
    [since],
  );
  out.push(`retention/purge passes since the load began: ${runs.rows.map((r) => `${r.kind} ${r.processed} rows`).join(', ') || 'none'}`);
  out.push(`signal rollups: ${await count(pool, 'SELECT count(*)::int AS n FROM signal_rollups')}`);
  out.push(
    `health snapshots computed during the run: ${await count(pool, 'SELECT count(*)::int AS n FROM health_snapshots WHERE computed_at >= $1', [since])}`,
  );
  out.push(`churn predictions: ${await count(pool, 'SELECT count(*)::int AS n FROM churn_predictions')}`);
  out.push(`trained churn models: ${await count(pool, 'SELECT count(*)::int AS n FROM churn_models')}`);
  return out;
}

/**
 * pg_stat_database.deadlocks of this database. Statistics reach the shared view when a backend flushes
 * them (at most once a second while it works, on exit); a fresh snapshot is polled until it stops moving.
 */
async function readDeadlocks(pool: pg.Pool, settle = false): Promise<number> {
  const read = async () => {
    const { rows } = await pool.query<{ n: string }>(
      `SELECT pg_stat_clear_snapshot(), (SELECT deadlocks FROM pg_stat_database WHERE datname = current_database())::text AS n`,
    );
    return Number(rows[0]!.n);
  };
  let value = await read();
  if (!settle) return value;
  for (let stable = 0, i = 0; stable < 3 && i < 20; i++) {
    await sleep(700);
    const next = await read();
    stable = next === value ? stable + 1 : 0;
    value = next;
  }
  return value;
}

// ---------------------------------------------------------------------------------------------------
// Printing

export function figuresTable(report: MixedReport): string {
  const head = ['path', 'requests', '2xx', '5xx', '503+Retry-After', '429', 'other 4xx', 'no answer', 'p95 ms', 'max ms'];
  const rows = report.figures.map((f) =>
    [f.path, f.count, f.ok, f.serverErrors, f.shed, f.rateLimited, f.otherClientErrors, f.noAnswer, f.p95Ms, f.maxMs].map(String),
  );
  const totals = report.figures.reduce(
    (t, f) => t.map((v, i) => v + [f.count, f.ok, f.serverErrors, f.shed, f.rateLimited, f.otherClientErrors, f.noAnswer][i]!),
    [0, 0, 0, 0, 0, 0, 0],
  );
  rows.push(['TOTAL', ...totals.map(String), '', '']);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export function summary(report: MixedReport): string {
  const lines = [
    `mixed workload: ${report.size.seconds}s load (${(report.loadMs / 1000).toFixed(1)}s), ${report.size.tenants}+1 tenants × ${report.size.customersPerTenant} customers, ${report.size.concurrency} clients; logs in ${report.logDir}`,
    figuresTable(report),
    `deadlocks (pg_stat_database): before ${report.deadlocks.before}, after ${report.deadlocks.after}`,
    `lock cycles sampled while loading and draining: ${report.lockCycles.length ? report.lockCycles.join(' ;; ') : 'none'}`,
    `log lines reporting a deadlock or serialization failure: ${report.logMatches.map((m) => `${m.process} ${m.count}`).join(', ')}`,
    ...report.logMatches.flatMap((m) => Object.entries(m.sites).map(([site, n]) => `  ${m.process}: ${n} × ${site}`)),
    `error-level log lines: ${report.logErrors.map((m) => `${m.process} ${m.count}`).join(', ')}`,
    `drained: ${report.quiesce.drained} after ${(report.quiesce.waitedMs / 1000).toFixed(1)}s ${JSON.stringify(report.quiesce.remaining)}`,
    `  while draining: ${report.quiesce.timeline.join(' | ')}`,
    `sessions still busy or holding advisory locks after the drain: ${report.lingering.length ? report.lingering.join('; ') : 'none'}`,
    `phases (s): ${JSON.stringify(report.phases)}`,
    `inbound events accepted: ${report.accepted.length}; usage events counted stored: ${Object.values(report.usage).reduce((a, u) => a + u.total, 0)}`,
    `milestones: ${report.milestones.map((m) => `${m.what}${m.status ? ` → ${m.status}` : ''}`).join('; ')}`,
    ...Object.entries(report.checks).map(([name, c]) => `${c.ok ? 'PASS' : 'FAIL'} ${name}: ${c.summary}`),
  ];
  if (report.harnessErrors.length)
    lines.push(`harness errors (${report.harnessErrors.length}): ${report.harnessErrors.slice(0, 3).join('\n')}`);
  const byTenant = report.figures.flatMap((f) =>
    Object.entries(f.serverErrorsByTenant).map(([t, n]) => `${f.path}: ${n} from tenant ${t}`),
  );
  if (byTenant.length) lines.push('5xx by tenant:', ...byTenant.map((l) => `  ${l}`));
  if (report.background.length) lines.push(`background passes: ${report.background.join('; ')}`);
  const samples = report.figures.flatMap((f) =>
    f.samples.map((s) => `${f.path} → ${s.status} (tenant ${s.tenant}, request ${s.requestId}): ${s.body}`),
  );
  if (samples.length) lines.push('5xx samples:', ...samples.slice(0, 8));
  return lines.join('\n');
}
