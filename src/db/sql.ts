import type { Prisma } from '../generated/prisma/client.ts';
import { createHash } from 'node:crypto';
import type pg from 'pg';

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

/**
 * Runs `fn` in one transaction on a pooled connection; commits when it resolves, rolls back when it throws.
 * Nothing runs it again: its locks follow the one order of docs/concurrency.md, so PostgreSQL never has to
 * end it to break a deadlock, and one that did would be a defect to see, not to hide.
 */
export async function inTransaction<T>(
  pool: pg.Pool,
  fn: (sql: Sql) => Promise<T>,
  opts: { synchronousCommit?: boolean; genericPlans?: boolean } = {},
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
  return once(pool, fn, begin);
}

async function once<T>(pool: pg.Pool, fn: (sql: Sql) => Promise<T>, begin: string): Promise<T> {
  const client = await pool.connect();
  // PostgreSQL ending the session (a restart) is reported to a checked-out client as an 'error' event,
  // which unheard would end the process: the statement fails with it instead, and the connection is
  // given back broken, so the pool drops it rather than hand it out again.
  let broken: Error | undefined;
  const heard = (err: Error) => void (broken ??= err);
  client.on('error', heard);
  try {
    await client.query(begin);
    const result = await fn(onPg(client));
    await client.query('COMMIT');
    return result;
  } catch (e) {
    await client.query('ROLLBACK').catch(() => void (broken ??= e as Error));
    throw e;
  } finally {
    client.removeListener('error', heard);
    client.release(broken);
  }
}
