import { randomInt } from 'node:crypto';
import pg from 'pg';
import { ACCEPTOR_LOCK_SPACE } from '../db/locks.ts';
import { PG, pgCode } from '../db/pg-errors.ts';
import type { Sql } from '../db/sql.ts';

/** How long after a lost registration the next attempt waits. */
const RETRY_MS = 5000;

/**
 * This process as one that stores inbound events and claims their publishing in the same INSERT, so a
 * confirmed publish needs no write of its own. The claim holds for as long as the process does: it
 * registers a key in `inbox_acceptors` and holds a shared advisory lock on it over a connection of its
 * own; when that lock is free the process has ended (or lost its connection), and the sweeper hands
 * the rows it claimed and that are not processed yet back to the queue (inbox.ts).
 */
export interface Acceptor {
  /** The key to claim under, or null while there is none (not registered yet, or lost): then claim nothing. */
  key(): number | null;
  /**
   * Gives `key` up: its session ends, so the sweeper recovers what was claimed under it, and a new key is
   * registered later. For a key found no longer registered, or a claim that could not be given up.
   */
  forget(key: number): void;
  /** Unregisters: everything claimed was confirmed, so nothing is left for the sweeper to recover. */
  close(): Promise<void>;
}

export function createAcceptor(pool: pg.Pool, log: { warn: (o: object, m: string) => void }): Acceptor {
  let current: { key: number; client: pg.Client } | null = null;
  let registering: Promise<void> | null = null;
  let nextAttempt = 0;
  let closed = false;

  const register = async () => {
    // Keepalives, so that a connection dropped silently on the way (the lock then freed) is noticed.
    const client = new pg.Client({ ...pool.options, keepAlive: true });
    // The session ending (PostgreSQL restarting, the connection dropped) frees the lock: stop claiming
    // under that key at once; its rows are the sweeper's to recover, and a new key is registered later.
    const lost = (err?: Error) => {
      if (current?.client === client) drop(err);
    };
    client.on('error', lost);
    client.on('end', () => lost());
    try {
      await client.connect();
      for (let attempt = 0; ; attempt++) {
        const key = randomInt(1, 2 ** 31);
        // Locked before registered, so a registered key is never seen free while its process runs.
        await client.query('SELECT pg_advisory_lock_shared($1::int, $2::int)', [ACCEPTOR_LOCK_SPACE, key]);
        try {
          await client.query('INSERT INTO inbox_acceptors (key) VALUES ($1)', [key]);
        } catch (err) {
          await client.query('SELECT pg_advisory_unlock_shared($1::int, $2::int)', [ACCEPTOR_LOCK_SPACE, key]);
          // A key taken already (by chance): draw another.
          if (pgCode(err) === PG.uniqueViolation && attempt < 3) continue;
          throw err;
        }
        // Closed meanwhile: unregistered at once.
        if (closed) await unregister({ key, client });
        else current = { key, client };
        return;
      }
    } catch (err) {
      nextAttempt = Date.now() + RETRY_MS;
      log.warn({ err }, 'the inbound acceptor could not register; events are marked published one by one meanwhile');
      await client.end().catch(() => {});
    }
  };

  const unregister = async (was: { key: number; client: pg.Client }) => {
    await was.client.query('DELETE FROM inbox_acceptors WHERE key = $1', [was.key]).catch(() => {});
    await was.client.end().catch(() => {});
  };

  const drop = (err?: Error) => {
    const was = current;
    current = null;
    nextAttempt = Date.now() + RETRY_MS;
    if (!closed) log.warn({ err }, 'the inbound acceptor gave its key up; events are marked published one by one until it registers again');
    // Ended in any case, so its lock is free even after an error that left the socket open.
    void was?.client.end().catch(() => {});
  };

  return {
    forget(key) {
      if (current?.key === key) drop();
    },
    key() {
      if (current) return current.key;
      if (!registering && !closed && Date.now() >= nextAttempt) registering = register().finally(() => (registering = null));
      return null;
    },
    async close() {
      closed = true;
      await registering;
      const was = current;
      current = null;
      if (was) await unregister(was);
    },
  };
}

/** Removes the keys of acceptors that ended, once their claims were given up (the inbox's recovery). */
export async function forgetAcceptors(sql: Sql, keys: number[]): Promise<void> {
  await sql.query('DELETE FROM inbox_acceptors WHERE key = ANY($1::int[])', [keys]);
}
