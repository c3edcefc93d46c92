import type { Prisma } from '../generated/prisma/client.ts';
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { PG, pgCode } from './pg-errors.ts';

/**
 * Plain parameterised SQL, for every table the worker or the scoring passes write: one repository serves
 * the worker's transaction and the API's, and the pipeline's hot paths skip Prisma's per-query cost.
 * Tables only the API writes go through Prisma over the same pool (README, "Two ways to the database").
 */
export interface Sql {
  query<T = Record<string, unknown>>(text: string, values?: unknown[]): Promise<T[]>;
}

/** sql`... ${value} ...` → { text: '... $1 ...', values: [value] }: values are always parameters, never spliced. */
export function q(strings: TemplateStringsArray, ...values: unknown[]): { text: string; values: unknown[] } {
  let text = strings[0]!;
  for (let i = 0; i < values.length; i++) text += `$${i + 1}${strings[i + 1]}`;
  return { text, values };
}

// Named statements are prepared once per connection, so PostgreSQL skips parsing and planning on
// every later run; the pipeline's statements are a small fixed set, so the names stay few.
const names = new Map<string, string>();
const statementName = (text: string) => {
  let name = names.get(text);
  if (!name) {
    name = `chs_${createHash('sha1').update(text).digest('hex').slice(0, 16)}`;
    names.set(text, name);
  }
  return name;
};

export const onPg = (client: pg.Pool | pg.PoolClient): Sql => ({
  query: async <T>(text: string, values: unknown[] = []) => (await client.query({ name: statementName(text), text, values })).rows as T[],
});

/** The same interface over a Prisma transaction, for code shared with Prisma-side callers. */
export const onPrisma = (tx: Prisma.TransactionClient): Sql => ({
  query: <T>(text: string, values: unknown[] = []) => tx.$queryRawUnsafe<T[]>(text, ...values),
});

/** A deadlock or a serialization failure: PostgreSQL ended the transaction, which can run again. */
const RETRYABLE = new Set<string | undefined>([PG.deadlockDetected, PG.serializationFailure]);

/**
 * Runs `fn` in one transaction on a pooled connection; commits when it resolves, rolls back when it throws.
 * With `runs` above 1, a transaction PostgreSQL ended to break a deadlock (or a serialization failure)
 * runs again, up to `runs` times in all: a rolled-back run changed nothing, so `fn` must only keep
 * nothing of its own between runs.
 */
export async function inTransaction<T>(
  pool: pg.Pool,
  fn: (sql: Sql) => Promise<T>,
  opts: { synchronousCommit?: boolean; genericPlans?: boolean; runs?: number } = {},
): Promise<T> {
  // Sent with BEGIN, in the same round trip.
  const begin = [
    'BEGIN',
    // Off: the commit returns before its WAL reaches disk (see createPool); only for work that is redone
    // when a crash of PostgreSQL loses it.
    ...(opts.synchronousCommit === false ? ['SET LOCAL synchronous_commit TO off'] : []),
    // Every named statement runs its generic plan: for statements over arrays of varying length PostgreSQL
    // otherwise keeps planning anew the executions whose arrays are short, which costs more than they do.
    ...(opts.genericPlans ? ['SET LOCAL plan_cache_mode TO force_generic_plan'] : []),
  ].join('; ');
  for (let run = 1; ; run++) {
    try {
      return await once(pool, fn, begin);
    } catch (e) {
      if (run >= (opts.runs ?? 1) || !RETRYABLE.has(pgCode(e))) throw e;
    }
  }
}

async function once<T>(pool: pg.Pool, fn: (sql: Sql) => Promise<T>, begin: string): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query(begin);
    const result = await fn(onPg(client));
    await client.query('COMMIT');
    return result;
  } catch (e) {
    await client.query('ROLLBACK').catch(() => {});
    throw e;
  } finally {
    client.release();
  }
}
