import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { startEmbeddedPostgres } from '../db/embedded-postgres.ts';
import { loadLocalSecrets } from '../db/local-secrets.ts';
import { migrateDeploy } from '../db/migrate.ts';
import type pg from 'pg';
import { createPool, createPrisma, type Db } from '../db/prisma.ts';
import { createReadRouter, type ReadPool } from '../db/read-replica.ts';

export interface Database {
  url: string;
  prisma: Db;
  /** The main connection pool: Prisma runs over it, and so do the plain-SQL pipeline paths. */
  pool: pg.Pool;
  /** Webhook delivery bookkeeping, which is safe to redo, commits without waiting for the disk. */
  deliveryPool: pg.Pool;
  /** Where the read-only paths read: the replica while it is close behind (DATABASE_READ_URL), else \`pool\`. */
  reads?: ReadPool;
  embedded: boolean;
  close(): Promise<void>;
}

/** DATABASE_URL when given, otherwise the embedded PostgreSQL under the data directory; migrated when asked. */
export async function openDatabase(config: Config, log: Logger, opts: { migrate: boolean; poolSize?: number }): Promise<Database> {
  let url = config.database.url;
  let stopEmbedded = async () => {};
  if (!url) {
    const secrets = loadLocalSecrets(config.dataDir);
    log.info({ dataDir: config.dataDir, port: config.database.embeddedPort }, 'no DATABASE_URL: using the embedded PostgreSQL');
    const embedded = await startEmbeddedPostgres({
      dataDir: config.dataDir,
      port: config.database.embeddedPort,
      password: secrets.postgresPassword,
      log: (m) => log.debug({ pg: m }),
    });
    url = embedded.url;
    stopEmbedded = embedded.stop;
  }
  if (opts.migrate) await migrateDeploy(url, (line) => log.debug({ migrate: line }));
  const onIdleError = (err: Error) => log.warn({ err }, 'idle database connection lost');
  const poolSize = opts.poolSize ?? config.database.poolSize;
  const waitMs = config.database.poolWaitMs;
  const pool = createPool(url, poolSize, { onIdleError, waitMs });
  const prisma = createPrisma({ url, poolSize, poolWaitMs: waitMs, pool });
  // Connections open on first use, so a process that never delivers a webhook holds none of these.
  const deliveryPool = createPool(url, config.webhooks.deliveryPoolSize, { onIdleError, synchronousCommit: false, waitMs });
  const reads = config.database.readUrl
    ? createReadRouter(pool, config.database.readUrl, {
        maxLagMs: config.database.readMaxLagMs,
        checkEveryMs: Math.min(1000, config.database.readMaxLagMs / 2),
        poolSize,
        onStateChange: (state) => log.warn({ state }, 'read replica: reads now go to the %s', state === 'replica' ? 'replica' : 'primary'),
      })
    : undefined;
  await loadQueryCompiler(prisma, log);
  return {
    url,
    prisma,
    pool,
    deliveryPool,
    reads,
    embedded: !config.database.url,
    close: async () => {
      await reads?.close();
      await prisma.$disconnect();
      await pool.end();
      await deliveryPool.end();
      await stopEmbedded();
    },
  };
}

/**
 * Prisma compiles its query compiler (WebAssembly) at a process's first model query, blocking the event loop
 * for a tenth of a second on an idle machine and seconds on a busy one. Done before the process takes
 * traffic, that pause never meets a request (where it would trip the event-loop shedding). A database that
 * does not answer yet leaves it to the first request, as before.
 */
async function loadQueryCompiler(prisma: Db, log: Logger) {
  await prisma.tenant
    .findFirst({ where: { id: '00000000-0000-0000-0000-000000000000' }, select: { id: true } })
    .catch((err: unknown) => log.warn({ err }, 'the database did not answer the start-up query'));
}
