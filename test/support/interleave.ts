// Real PostgreSQL sessions driven statement by statement: each actor runs the service's own code on a pool
// whose statements wait for the controller's go. The controller lets one statement go at a time, chosen by a
// schedule (numbers a property-based generator draws), and moves on once it has finished, or once its session
// waits on a lock another session holds; then the others may go. So every interleaving of statements the
// schedule names is run for real, and a cycle of waits shows as PostgreSQL's own deadlock error.
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { createPool, createPrisma, type Db } from '../../src/db/prisma.ts';
import { fileDatabaseUrl } from './database.ts';

interface Step {
  actor: string;
  text: string;
  go: () => void;
  /** The backend running it, once it has gone. */
  pid?: number;
  finished?: boolean;
}

/** What a run did: each statement in the order it was let go, and each actor's outcome. */
export interface Interleaving {
  statements: string[];
  outcomes: Record<string, { ok: true; value: unknown } | { ok: false; error: unknown }>;
}

/** SQLSTATEs of the errors an actor ended with. */
export const errorCodes = (i: Interleaving) =>
  Object.values(i.outcomes).flatMap((o) => (o.ok ? [] : [String((o.error as { code?: string }).code ?? (o.error as Error).message)]));

const textOf = (q: unknown): string =>
  (typeof q === 'string' ? q : String((q as { text?: string }).text ?? '')).replace(/\s+/g, ' ').trim().slice(0, 120);

/**
 * Runs `actors` (each given a pool of its own) under `schedule`: at each turn, of the statements waiting to go,
 * the one at index `schedule[turn] % waiting` goes (the first when the schedule has run out).
 */
export async function interleave(
  databaseUrl: string,
  actors: Record<string, (pool: pg.Pool) => Promise<unknown>>,
  schedule: number[],
): Promise<Interleaving> {
  const observer = new pg.Client({ connectionString: databaseUrl });
  await observer.connect();
  const waiting: Step[] = [];
  const done = new Set<string>();
  const pools: pg.Pool[] = [];
  const result: Interleaving = { statements: [], outcomes: {} };
  let changed: () => void = () => {};
  const change = () => changed();

  const gatedPool = (actor: string): pg.Pool => {
    const real = new pg.Pool({ connectionString: databaseUrl, max: 4 });
    // Deadlocks are looked for after this long waiting; the default second would make each run slow.
    real.on('connect', (c) => void c.query("SET deadlock_timeout = '100ms'").catch(() => {}));
    pools.push(real);
    const gate = async <T>(client: pg.PoolClient, q: unknown, run: () => Promise<T>): Promise<T> => {
      const step: Step = { actor, text: textOf(q), go: () => {} };
      await new Promise<void>((go) => {
        step.go = go;
        waiting.push(step);
        change();
      });
      step.pid = (client as unknown as { processID: number }).processID;
      try {
        return await run();
      } finally {
        step.finished = true;
        change();
      }
    };
    const wrap = (client: pg.PoolClient): pg.PoolClient =>
      new Proxy(client, {
        get(target, key) {
          if (key === 'query') return (q: unknown, values?: unknown) => gate(target, q, () => target.query(q as never, values as never));
          const v = Reflect.get(target, key);
          return typeof v === 'function' ? v.bind(target) : v;
        },
      });
    return new Proxy(real, {
      get(target, key) {
        if (key === 'connect') return async () => wrap(await target.connect());
        if (key === 'query')
          return async (q: unknown, values?: unknown) => {
            const client = wrap(await target.connect());
            try {
              return await client.query(q as never, values as never);
            } finally {
              client.release();
            }
          };
        const v = Reflect.get(target, key);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
  };

  const runs = Object.entries(actors).map(([name, fn]) =>
    fn(gatedPool(name))
      .then(
        (value) => {
          result.outcomes[name] = { ok: true, value };
        },
        (error: unknown) => {
          result.outcomes[name] = { ok: false, error };
        },
      )
      .finally(() => {
        done.add(name);
        change();
      }),
  );

  const blocked = async (step: Step) => {
    if (step.pid === undefined || step.finished) return false;
    const { rows } = await observer.query<{ n: number }>('SELECT cardinality(pg_blocking_pids($1))::int AS n', [step.pid]);
    return rows[0]!.n > 0;
  };
  const settle = () =>
    new Promise<void>((resolve) => {
      changed = resolve;
      setTimeout(resolve, 5);
    });

  try {
    let turn = 0;
    while (done.size < runs.length) {
      if (waiting.length === 0) {
        await settle();
        continue;
      }
      const [step] = waiting.splice((schedule[turn++] ?? 0) % waiting.length, 1);
      result.statements.push(`${step!.actor}: ${step!.text}`);
      step!.go();
      // The statement has gone: wait until it has finished (and its actor has asked for its next one or
      // ended, or is busy elsewhere), or until it waits on a lock another session holds.
      for (;;) {
        await settle();
        if (step!.finished) {
          await settle();
          break;
        }
        if (await blocked(step!)) break;
      }
    }
    await Promise.all(runs);
  } finally {
    await observer.end();
    await Promise.all(pools.map((p) => p.end()));
  }
  return result;
}

/** Interleavings tried per property; each is a real run against PostgreSQL. */
export const RUNS = Number(process.env.LOCK_ORDER_RUNS ?? 12);
/** The schedules fast-check draws (and shrinks) for `interleave`. */
export const schedules = fc.array(fc.nat({ max: 7 }), { minLength: 4, maxLength: 40 });
/** A run's errors, then its statements in the order they went: what a failing property prints. */
export const explain = (i: Interleaving) => `${errorCodes(i).join(', ')}\n  ${i.statements.join('\n  ')}`;

/**
 * The file's own database (fileDatabaseUrl) with a pool and a Prisma client on it, as the interleaving
 * tests set up the rows they then drive: opened before the file's tests, handed to `use`, closed after.
 */
export function withFileDatabase(use: (db: { url: string; pool: pg.Pool; prisma: Db }) => void) {
  let pool: pg.Pool | undefined;
  let prisma: Db | undefined;
  beforeAll(async () => {
    const url = await fileDatabaseUrl();
    pool = createPool(url, 4);
    prisma = createPrisma({ url, poolSize: 2, pool });
    use({ url, pool, prisma });
  });
  afterAll(async () => {
    await prisma?.$disconnect();
    await pool?.end();
  });
}
