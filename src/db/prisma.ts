import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient } from '../generated/prisma/client.ts';
import { sessionOptions } from './session-options.ts';

export type Db = PrismaClient;

export interface PrismaOptions {
  url: string;
  poolSize: number;
  /** How long a query waits for a connection, or a transaction to start, before failing (answered 503). */
  poolWaitMs?: number;
  /** Called with every SQL statement Prisma sends; tests use it to catch N+1 queries. */
  onQuery?: (sql: string) => void;
}

/**
 * An idle connection the server drops (a PostgreSQL restart, a failover) emits an error on the pool;
 * without a listener that would end the process. The pool replaces the connection on next use.
 */
export function createPool(
  url: string,
  poolSize: number,
  opts: { onIdleError?: (err: Error) => void; synchronousCommit?: boolean; waitMs?: number } = {},
): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    // Without a bound a burst queues on the pool for as long as it takes; with one the caller gets a
    // clear "at capacity" (see isPoolExhausted) it can retry.
    ...(opts.waitMs ? { connectionTimeoutMillis: opts.waitMs } : {}),
    // synchronous_commit off: a commit returns before its WAL reaches disk. A crash of PostgreSQL itself can
    // then lose the last few hundred milliseconds of commits, whole, never half; only for work safe to redo.
    options: sessionOptions({ synchronousCommit: opts.synchronousCommit }),
  });
  pool.on('error', opts.onIdleError ?? (() => {}));
  return pool;
}

/** Prisma over a pg pool; pass `pool` to share one pool with the plain-SQL paths. */
export function createPrisma({ url, poolSize, poolWaitMs, onQuery, pool }: PrismaOptions & { pool?: pg.Pool }): Db {
  const adapter = new PrismaPg(
    pool ?? {
      connectionString: url,
      max: poolSize,
      options: sessionOptions(),
      ...(poolWaitMs ? { connectionTimeoutMillis: poolWaitMs } : {}),
    },
  );
  const client = new PrismaClient({
    adapter,
    // An interactive transaction waits as long as any query for its connection (Prisma's own default is 2 s).
    ...(poolWaitMs ? { transactionOptions: { maxWait: poolWaitMs } } : {}),
    log: onQuery ? [{ emit: 'event', level: 'query' }] : [],
  });
  if (onQuery) client.$on('query' as never, (e: { query: string }) => onQuery(e.query));
  return client;
}
