import pg from 'pg';
import { sessionOptions } from './session-options.ts';

// Reads that may be served by a PostgreSQL streaming replica: a pool-shaped router that sends each query to
// the replica while it is known to be close behind the primary, and to the primary otherwise (replica
// down, or further behind than the bound). Only statements that read, outside any transaction, and that no
// write of the same request must be visible to, go through it (docs/scaling.md, "Read replicas").

export interface ReplicaOptions {
  /** The replica is used only while it has replayed everything the primary had written this long ago. */
  maxLagMs: number;
  /** How often the replica's progress is compared with the primary's. */
  checkEveryMs: number;
  poolSize: number;
  onStateChange?: (state: ReplicaState) => void;
}

export type ReplicaState = 'replica' | 'lagging' | 'down';

/** What the routed reads need of a pool: plain queries. */
export type ReadPool = Pick<pg.Pool, 'query'>;

export interface ReadRouter extends ReadPool {
  /** Where reads go now. */
  state(): ReplicaState;
  /** Compares the replica's replay position with the primary's now (also done every `checkEveryMs`). */
  check(): Promise<ReplicaState>;
  close(): Promise<void>;
}

/**
 * The router over `primary` and a replica at `replicaUrl`. Lag is judged by WAL positions, not by the
 * replica's last replay time (which stands still when the primary is idle): each check notes the primary's
 * current position; while the replica has not replayed up to a position noted more than `maxLagMs` ago,
 * reads go to the primary. A query the replica fails to answer for want of a connection is asked of the
 * primary at once, and the replica is left alone until a check finds it back.
 */
export function createReadRouter(primary: pg.Pool, replicaUrl: string, opts: ReplicaOptions): ReadRouter {
  const replica = new pg.Pool({
    connectionString: replicaUrl,
    max: opts.poolSize,
    options: sessionOptions(),
    connectionTimeoutMillis: Math.max(opts.checkEveryMs, 500),
  });
  replica.on('error', () => {});
  let state: ReplicaState = 'down';
  // The oldest primary position the replica has not been seen to reach, and when it was noted.
  let awaited: { lsn: string; since: number } | null = null;
  let checking: Promise<ReplicaState> | null = null;

  const set = (next: ReplicaState) => {
    if (next !== state) {
      state = next;
      opts.onStateChange?.(next);
    }
    return next;
  };

  async function compare(): Promise<ReplicaState> {
    try {
      const [{ rows: p }, { rows: r }] = await Promise.all([
        primary.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn'),
        replica.query<{ lsn: string | null; reached: boolean }>(
          'SELECT pg_last_wal_replay_lsn()::text AS lsn, pg_last_wal_replay_lsn() >= $1::pg_lsn AS reached',
          [awaited?.lsn ?? '0/0'],
        ),
      ]);
      if (r[0]!.lsn === null) return set('down'); // not a replica
      const now = Date.now();
      const current = p[0]!.lsn;
      if (!awaited || r[0]!.reached) awaited = { lsn: current, since: now };
      else if (now - awaited.since > opts.maxLagMs) return set('lagging');
      // Caught up with what was awaited: from now on the position just noted is awaited.
      return set('replica');
    } catch {
      awaited = null;
      return set('down');
    }
  }

  const check = () => (checking ??= compare().finally(() => (checking = null)));
  const timer = setInterval(() => void check(), opts.checkEveryMs);
  timer.unref();
  void check();

  const isConnectionFailure = (e: unknown) => {
    const code = (e as { code?: string }).code ?? '';
    return (
      code.startsWith('08') ||
      code === '57P01' ||
      code === '57P03' ||
      code === 'ECONNREFUSED' ||
      code === 'ECONNRESET' ||
      /timeout|terminat|connect/i.test(String((e as Error).message))
    );
  };

  return {
    state: () => state,
    check,
    query: (async (config: pg.QueryConfig | string, values?: unknown[]) => {
      if (state !== 'replica') return primary.query(config as pg.QueryConfig, values);
      try {
        return await replica.query(config as pg.QueryConfig, values);
      } catch (e) {
        if (!isConnectionFailure(e)) throw e;
        awaited = null;
        set('down');
        return primary.query(config as pg.QueryConfig, values);
      }
    }) as ReadPool['query'],
    close: async () => {
      clearInterval(timer);
      await replica.end();
    },
  };
}
