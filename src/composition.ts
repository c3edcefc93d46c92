import type { Redis } from 'ioredis';
import { createCpuShare, DEFAULT_CPU_SHARE } from './runtime/cpu-share.ts';
import { createTenantLoad } from './runtime/tenant-load.ts';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Sessions } from './auth/sessions.ts';
import type { Config } from './config.ts';
import type { SecretBox } from './crypto/secret-box.ts';
import { createInbox } from './ingest/inbox.ts';
import { createOutbound } from './outbox/sender/index.ts';
import type { Queue } from './queue/queue.ts';
import { createChangeFeed } from './queue/change-feed.ts';
import { type Database, openDatabase } from './runtime/database.ts';
import { sessionSecret } from './runtime/secrets.ts';
import { queueFor, secretBoxFor } from './runtime/infrastructure.ts';
import { createThreadFitter } from './scoring/fit-runner.ts';
import { emptyBodiesAbout } from './ingest/inbox.ts';
import { createThreadPool } from './runtime/thread-pool.ts';
import { EXPORT_THREAD_ENTRY, type ExportThreadData, type Page, type PageJob } from './services/export-pages.ts';
import { createServices } from './services/index.ts';
import { startWorker, type WorkerDeps } from './worker.ts';

export interface ComposeOptions {
  log: Logger;
  /** An open database to use (tests); otherwise one is opened from the config and closed with the composition. */
  database?: Omit<Database, 'close' | 'embedded'>;
  migrate?: boolean;
  poolSize?: number;
  /** A queue to use instead of the configured one; the caller closes it. */
  queue?: Queue;
  box?: SecretBox;
  /** `null`: a process that signs nobody in (the CLI) needs no session secret. */
  sessions?: Sessions | null;
  /** Outbound delivery: the per-attempt timeout and extra trusted CAs (tests). */
  deliveryTimeoutMs?: number;
  ca?: string | Buffer;
}

/**
 * The whole process from its configuration: database, queue, inbox, outbound delivery, the domain services,
 * and on demand the HTTP app and the worker. main.ts, the CLI and the tests compose through here.
 */
export async function compose(config: Config, opts: ComposeOptions) {
  const { log } = opts;
  const opened = opts.database ? undefined : await openDatabase(config, log, { migrate: opts.migrate ?? false, poolSize: opts.poolSize });
  const db = opts.database ?? opened!;
  const queue = opts.queue ?? queueFor(config, log);
  const inbox = createInbox(db.pool, queue, log);
  const box = opts.box ?? secretBoxFor(config);
  const outbound = createOutbound({
    deliveryPool: db.deliveryPool,
    box,
    allowPrivateTargets: config.webhooks.allowPrivateTargets,
    timeoutMs: opts.deliveryTimeoutMs,
    ca: opts.ca,
    leaseSeconds: config.webhooks.leaseSeconds,
    perEndpointConcurrency: config.webhooks.perEndpointConcurrency,
    perTenantConcurrency: config.webhooks.perTenantConcurrency,
    circuit: config.webhooks.circuit,
    onError: (err, what) => log.warn({ err }, what),
  });
  // Export pages are read and written out on threads of their own, started at the first export, each with
  // one database connection; tenants take turns at them.
  const exportThreads =
    config.overload.exportThreads > 0
      ? createThreadPool<PageJob, Page>({
          entry: EXPORT_THREAD_ENTRY,
          size: config.overload.exportThreads,
          workerData: { databaseUrl: db.url } satisfies ExportThreadData,
          name: 'export',
        })
      : undefined;
  // Tenants' heavy work (exports, training's features and fit, costly GraphQL operations) shares the process fairly
  // while others are served: what runs per tenant is counted once, by admission, in `load`.
  const load = createTenantLoad();
  const cpuShare = createCpuShare({ ...DEFAULT_CPU_SHARE, share: config.overload.tenantCpuShare, othersBusy: load.othersBusy });
  // Churn models are fitted on a thread of their own, started at the first training, within that share too.
  const fitter = createThreadFitter({ cpuShare });
  // Customer changes for live subscriptions: through Redis between processes, in memory within one.
  const changes = createChangeFeed({ redisUrl: config.redisUrl, log });
  const sessions = opts.sessions === null ? undefined : (opts.sessions ?? (await sessionsFor(config)));
  const services = createServices({
    prisma: db.prisma,
    pool: db.pool,
    reads: db.reads,
    box,
    queue,
    deliverer: outbound.deliverer,
    emptyInboundBodies: emptyBodiesAbout,
    sessions,
    allowPrivateTargets: config.webhooks.allowPrivateTargets,
    secretCacheMs: config.apiKeyCacheMs,
    workspaceDeletionDelayDays: config.lifecycle.workspaceDeletionDelayDays,
    fitter,
    cpuShare,
    onError: (err, what) => log.error({ err }, what),
    // A request waiting for a training answers well before the server would close its idle socket.
    trainingWaitMs: Math.max(0, Math.min(20_000, config.http.requestTimeoutMs - 5_000)),
    exportPages: exportThreads && ((tenantId, job) => exportThreads.run(tenantId, job)),
    circuit: config.webhooks.circuit,
  });

  return {
    config,
    db,
    embedded: opened?.embedded ?? false,
    queue,
    inbox,
    box,
    outbound,
    sessions,
    services,
    /** The fair share of the process for heavy work, and the count of what runs per tenant it reads. */
    cpuShare,
    load,
    changes,
    /** The HTTP service over this composition. */
    async app(extra: { logger?: Logger; redis?: Redis; registry?: Registry; now?: () => number; version?: string } = {}) {
      if (!sessions) throw new Error('the HTTP app needs sessions');
      // Loaded on demand: the CLI composes too, and the HTTP stack and schema cost it seconds at every start.
      const { buildApp } = await import('./app.ts');
      return buildApp({
        config,
        prisma: db.prisma,
        sessions,
        inbox,
        services,
        changes,
        logger: extra.logger ?? log,
        load,
        cpuShare,
        ...extra,
      });
    },
    /** The worker's consumers and scheduled passes over this composition. */
    startWorker(extra: Partial<Omit<WorkerDeps, 'pool' | 'queue' | 'inbox' | 'deliverer'>> = {}) {
      return startWorker({
        pool: db.pool,
        queue,
        inbox,
        deliverer: outbound.deliverer,
        leaseSeconds: config.webhooks.leaseSeconds,
        circuit: config.webhooks.circuit,
        databaseUrl: db.url,
        log,
        prefetch: config.worker.prefetch,
        sweepEveryMs: config.worker.sweepEveryMs,
        scoring: config.scoring,
        lifecycle: config.lifecycle,
        changes,
        ...extra,
      });
    },
    /** Closes what the composition opened, in dependency order; the HTTP app and worker are closed by their owner first. */
    async close() {
      await inbox.close();
      outbound.close();
      // Trainings under way end at their next step, a fit when the fitter closes; each stores that it was
      // interrupted while the database is still open.
      const trainingsStopped = services.churn.stopTrainings();
      await fitter.close();
      await trainingsStopped;
      await exportThreads?.close();
      await changes.close();
      if (!opts.queue) await queue.close();
      await opened?.close();
    },
  };
}

/** Loaded on demand: the token library costs the CLI, which signs nobody in, a noticeable share of its start. */
async function sessionsFor(config: Config): Promise<Sessions> {
  const { createSessions, identityProvider } = await import('./auth/sessions.ts');
  return createSessions({ secret: sessionSecret(config), ttlSeconds: config.sessions.ttlSeconds, idp: identityProvider(config.sessions) });
}

export type Composition = Awaited<ReturnType<typeof compose>>;
