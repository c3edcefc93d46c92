// Building blocks for tests of how the worker applies stored inbound events: rows stored as the accept
// path stores them, and a transaction elsewhere holding an invoice, which sets how batches interleave.
import { randomInt, randomUUID } from 'node:crypto';
import type pg from 'pg';
import { ACCEPT_LOCK_SPACE } from '../../src/db/locks.ts';
import { orderKeyOfStripeEvent } from '../../src/ingest/normalizers/stripe.ts';

/**
 * Stores Stripe events as one accepting group does: one transaction (one received_at), ids and numbers (seq)
 * in the order given, each with the object it is about.
 */
export async function storeGroup(pool: pg.Pool, tenantId: string, events: { type: string }[]): Promise<string[]> {
  const client = await pool.connect();
  const ids = events.map(() => randomUUID());
  try {
    await client.query('BEGIN');
    for (const [i, e] of events.entries()) {
      await client.query(
        `INSERT INTO inbox_events (id, tenant_id, provider, dedup_key, event_type, body, order_key) VALUES ($1, $2, 'stripe', $3, $4, $5, $6)`,
        [ids[i], tenantId, `evt_${randomUUID().replaceAll('-', '')}`, e.type, JSON.stringify(e), orderKeyOfStripeEvent(e)],
      );
    }
    await client.query('COMMIT');
  } finally {
    client.release();
  }
  return ids;
}

/** A message as the accept path publishes a group's events: their ids in acceptance order, and its (ended) accept's lock. */
export const groupMessage = (ids: string[]) => ({ ids, lock: randomInt(2 ** 31) });

/**
 * An invoice being created by a transaction elsewhere, left open: a batch that comes to the same invoice
 * waits for it (on the invoices' unique index) until `release` rolls it back (the batch then creates the
 * invoice itself) or, with `commit`, commits it (the batch then finds it).
 */
export async function holdInvoice(pool: pg.Pool, tenantId: string, externalId: string) {
  const client = await pool.connect();
  await client.query('BEGIN');
  await client.query(
    `INSERT INTO invoices (id, tenant_id, provider, external_id, status, total_minor, currency, created_at, updated_at)
     VALUES (gen_random_uuid(), $1, 'stripe', $2, 'draft', 0, 'usd', now(), now())`,
    [tenantId, externalId],
  );
  return async (end: 'rollback' | 'commit' = 'rollback') => {
    await client.query(end === 'commit' ? 'COMMIT' : 'ROLLBACK');
    client.release();
  };
}

/** Sessions of this database waiting on a lock, other than on an accept's (inbox.ts). */
export async function lockWaiters(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
     WHERE NOT l.granted AND a.datname = current_database() AND NOT (l.locktype = 'advisory' AND l.classid = $1)`,
    [ACCEPT_LOCK_SPACE],
  );
  return rows[0]!.n;
}

/** The kinds of lock (pg_locks.locktype) that sessions of this database wait for, other than an accept's. */
export async function waitingLockTypes(pool: pg.Pool): Promise<string[]> {
  const { rows } = await pool.query<{ locktype: string }>(
    `SELECT l.locktype FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
     WHERE NOT l.granted AND a.datname = current_database() AND NOT (l.locktype = 'advisory' AND l.classid = $1) ORDER BY 1`,
    [ACCEPT_LOCK_SPACE],
  );
  return rows.map((r) => r.locktype);
}
