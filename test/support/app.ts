import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import type { Registry } from 'prom-client';
import { afterAll, beforeAll, inject } from 'vitest';
import { checkContract } from './contract.ts';
import { appDatabaseRole, fileDatabaseUrl } from './database.ts';
import { createSessions, identityProvider, type Sessions } from '../../src/auth/sessions.ts';
import { type Config, loadConfig } from '../../src/config.ts';
import type pg from 'pg';
import { createPool, createPrisma, type Db } from '../../src/db/prisma.ts';
import { createMemoryQueue } from '../../src/queue/memory.ts';
import type { Queue } from '../../src/queue/queue.ts';
import { createScorer, type Scorer } from '../../src/scoring/recompute.ts';
import { customerRows } from '../../src/services/customer-rows.ts';
import { createScoringLoop, type ScoringLoop } from '../../src/scoring/drain.ts';
import { compose, type Composition } from '../../src/composition.ts';
import { createSecretBox } from '../../src/crypto/secret-box.ts';
import type { Inbox } from '../../src/ingest/inbox.ts';
import type { Outbound } from '../../src/outbox/sender/index.ts';
import type { Services } from '../../src/services/index.ts';
import type { WorkerDeps } from '../../src/worker.ts';

export const SESSION_SECRET = 'test-session-secret-0123456789-abcdefghijklmnop';
export const testSecretBox = () => createSecretBox([{ id: 'test', key: Buffer.alloc(32, 7) }]);

export interface TestApp {
  app: FastifyInstance;
  prisma: Db;
  pool: pg.Pool;
  sessions: Sessions;
  config: Config;
  queue: Queue;
  inbox: Inbox;
  outbound: Outbound;
  /** The domain services the app runs on, for arranging state the way the API would. */
  services: Services;
  composition: Composition;
  scorer: Scorer;
  scoringLoop: ScoringLoop;
  /** Recomputes every customer whose scores are due, as the worker would; resolves with how many. */
  score(): Promise<number>;
  /** Starts the worker's consumers and passes on this app's queue, inbox and deliverer, as `npm start` does. */
  /** The worker, silent unless given a logger (to read what it logs). */
  startWorker(opts?: Partial<Pick<WorkerDeps, 'sweepEveryMs' | 'overdueEveryMs' | 'log'>>): { close(): Promise<void> };
  /** SQL statements the app sent since the last reset, to catch N+1 queries. */
  queries: string[];
  close(): Promise<void>;
}

export function testConfig(databaseUrl: string, env: Record<string, string> = {}): Config {
  return loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    DATABASE_URL: databaseUrl,
    SESSION_SECRET,
    API_KEY_CACHE_MS: '0',
    // Test files share two cores: a busy neighbour must not make this process shed its requests. The
    // in-flight limit stays on, and has its own test.
    MAX_EVENT_LOOP_DELAY_MS: '0',
    // Every test request comes from 127.0.0.1: the per-address credential limits have their own tests.
    LOGIN_ATTEMPTS_PER_ADDRESS: '100000',
    LOGIN_ATTEMPTS_PER_ACCOUNT: '100000',
    AUTH_FAILURES_PER_ADDRESS: '100000',
    INBOUND_FAILURES_PER_SENDER: '100000',
    INBOUND_FAILURES_PER_CLIENT: '100000',
    INBOUND_FAILURES_PER_INBOUND_ADDRESS: '100000',
    ...env,
  });
}

/** The same composition as production (buildApp), on the real test database, and Redis when asked. */
export async function createTestApp(
  opts: {
    env?: Record<string, string>;
    redis?: boolean;
    /** A Redis client of the test's own (for example one that cannot connect); the test closes it. */
    redisClient?: Redis;
    logger?: pino.Logger;
    queue?: Queue;
    now?: () => number;
    deliveryTimeoutMs?: number;
    ca?: string | Buffer;
    registry?: Registry;
    /**
     * Connect as a login role in chs_app, the application's role (docs/operations.md), instead of the tables'
     * owner: what the service may do in production, and no more.
     */
    asAppRole?: boolean;
  } = {},
): Promise<TestApp> {
  const url = new URL(await fileDatabaseUrl());
  const role = opts.asAppRole ? await appDatabaseRole() : undefined;
  if (role) url.username = role.name;
  const config = testConfig(url.toString(), opts.env);
  const queries: string[] = [];
  const waitMs = config.database.poolWaitMs;
  const pool = createPool(config.database.url!, 8, { waitMs });
  const deliveryPool = createPool(config.database.url!, 4, { synchronousCommit: false, waitMs });
  const prisma = createPrisma({ url: config.database.url!, poolSize: 8, poolWaitMs: waitMs, pool, onQuery: (q) => queries.push(q) });
  const ownRedis = opts.redis ? new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 }) : undefined;
  const redis = opts.redisClient ?? ownRedis;
  const logger = opts.logger ?? pino({ level: 'silent' });
  const ownQueue = opts.queue ? undefined : createMemoryQueue({ retryDelayMs: 50 });
  // The production composition over the test database; the test owns the pools, the queue and Redis.
  const c = await compose(config, {
    log: logger,
    database: { url: config.database.url!, prisma, pool, deliveryPool },
    queue: opts.queue ?? ownQueue,
    box: testSecretBox(),
    sessions: createSessions({ secret: SESSION_SECRET, ttlSeconds: 3600, idp: identityProvider(config.sessions) }),
    deliveryTimeoutMs: opts.deliveryTimeoutMs,
    ca: opts.ca,
  });
  const scorer = createScorer(pool, customerRows.saveScores);
  const scoringErrors: unknown[] = [];
  const scoringLoop = createScoringLoop(pool, scorer, {
    batchSize: 200,
    leaseSeconds: 60,
    concurrency: 1,
    log: { error: (o) => scoringErrors.push(o), warn: () => {}, info: () => {} },
  });
  const app = await c.app({ redis, registry: opts.registry, now: opts.now });
  await app.ready();
  checkContract(app);
  return {
    app,
    prisma,
    pool,
    sessions: c.sessions!,
    config,
    queue: c.queue,
    inbox: c.inbox,
    outbound: c.outbound,
    services: c.services,
    composition: c,
    scorer,
    scoringLoop,
    // Due now, whatever the debounce the triggers set; done when nothing is asked for or queued, so a
    // customer the running worker's own loop had claimed is waited for, not skipped.
    score: async () => {
      let n = 0;
      for (const until = Date.now() + 30_000; ; await new Promise((r) => setTimeout(r, 20))) {
        await scoringLoop.collect();
        await pool.query('UPDATE scoring_queue SET due_at = now() WHERE due_at > now()');
        n += await scoringLoop.drain();
        if (scoringErrors.length) throw Object.assign(new Error('scoring failed'), { cause: scoringErrors.splice(0) });
        const { rows } = await pool.query<{ left: number }>(
          'SELECT (SELECT count(*) FROM scoring_requests) + (SELECT count(*) FROM scoring_queue) AS left',
        );
        if (Number(rows[0]!.left) === 0) return n;
        if (Date.now() > until) throw new Error(`scoring did not finish: ${rows[0]!.left} requests or queued customers left`);
      }
    },
    startWorker: (opts = {}) =>
      c.startWorker({
        log: pino({ level: 'silent' }),
        sweepEveryMs: 200,
        overdueEveryMs: 3_600_000,
        ...opts,
      }),
    queries,
    close: async () => {
      await app.close();
      await c.close();
      await ownQueue?.close();
      await prisma.$disconnect();
      await pool.end();
      await deliveryPool.end();
      await ownRedis?.quit();
      await role?.drop();
    },
  };
}

/**
 * A test app with its worker running, started before the file's tests and closed after them: the usual
 * fixture of files that post events and wait for their effect. Read it only inside hooks and tests.
 */
export function appWithWorker(opts: Parameters<typeof createTestApp>[0] = {}): TestApp {
  let app: TestApp | undefined;
  let worker: { close(): Promise<void> } | undefined;
  beforeAll(async () => {
    app = await createTestApp(opts);
    worker = app.startWorker();
  });
  afterAll(async () => {
    await worker?.close();
    await app?.close();
  });
  return new Proxy({} as TestApp, {
    get(_, key) {
      if (!app) throw new Error('the test app starts in beforeAll: read it inside a hook or a test');
      return Reflect.get(app, key);
    },
  });
}
