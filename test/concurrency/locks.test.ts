// The advisory locks of src/db/locks.ts take their keys in key order, whatever order they are given in: a
// transaction asking for several never holds one of them while it waits for one that sorts before it.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exclusivelyForTenant, lockObjects, lockTenants, TENANT_LOCK_SPACE } from '../../src/db/locks.ts';
import { onPg } from '../../src/db/sql.ts';
import { fileDatabaseUrl } from '../support/database.ts';

let pool: pg.Pool;
beforeAll(async () => {
  pool = new pg.Pool({ connectionString: await fileDatabaseUrl(), max: 6 });
});
afterAll(() => pool?.end());

/** Advisory locks of a session: how many it holds, and whether it waits for one. */
async function advisory(pid: number) {
  const { rows } = await pool.query<{ granted: boolean; n: number }>(
    `SELECT granted, count(*)::int AS n FROM pg_locks WHERE pid = $1 AND locktype = 'advisory' GROUP BY granted`,
    [pid],
  );
  return { held: rows.find((r) => r.granted)?.n ?? 0, waiting: rows.find((r) => !r.granted)?.n ?? 0 };
}

/** Two object keys, the first being the one whose lock sorts first. */
async function twoKeysInLockOrder(): Promise<[string, string]> {
  const keys = [`t:stripe:in_${Math.random()}`, `t:stripe:in_${Math.random()}`];
  const { rows } = await pool.query<{ x: string }>('SELECT x FROM unnest($1::text[]) AS x ORDER BY hashtextextended(x, 0)', [keys]);
  return [rows[0]!.x, rows[1]!.x];
}

async function session() {
  const client = await pool.connect();
  const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  await client.query('BEGIN');
  return Object.assign(client, { pid: rows[0]!.pid });
}

describe('object locks', () => {
  it('are taken in key order: asked for the other way round, none is held while the first is waited for', async () => {
    const [first, second] = await twoKeysInLockOrder();
    const holder = await session();
    const asker = await session();
    try {
      await lockObjects(onPg(holder), [first]);
      const asked = lockObjects(onPg(asker), [second, first]);
      await expect.poll(() => advisory(asker.pid)).toEqual({ held: 0, waiting: 1 });
      await holder.query('COMMIT');
      await asked;
      expect(await advisory(asker.pid)).toEqual({ held: 2, waiting: 0 });
    } finally {
      await holder.query('ROLLBACK').catch(() => {});
      await asker.query('ROLLBACK');
      holder.release();
      asker.release();
    }
  });

  it('are granted at once when asked for again in the same transaction, a key listed twice once', async () => {
    const [first, second] = await twoKeysInLockOrder();
    const tx = await session();
    try {
      await lockObjects(onPg(tx), [first, second, first]);
      await lockObjects(onPg(tx), [second]);
      expect(await advisory(tx.pid)).toEqual({ held: 2, waiting: 0 });
    } finally {
      await tx.query('ROLLBACK');
      tx.release();
    }
  });
});

describe('tenant locks', () => {
  it('take one mode per key, exclusive if any asks for it, so a transaction never waits on itself', async () => {
    const tenant = crypto.randomUUID();
    const tx = await session();
    const other = await session();
    try {
      await lockTenants(onPg(tx), [
        { tenantId: tenant, exclusive: false },
        { tenantId: tenant, exclusive: true },
      ]);
      // Held exclusively: another transaction asking for it shared waits.
      const shared = lockTenants(onPg(other), [{ tenantId: tenant, exclusive: false }]);
      await expect.poll(() => advisory(other.pid)).toEqual({ held: 0, waiting: 1 });
      await tx.query('COMMIT');
      await shared;
    } finally {
      await tx.query('ROLLBACK').catch(() => {});
      await other.query('ROLLBACK');
      tx.release();
      other.release();
    }
  });

  it('held exclusively by one process run one at a time in it, one connection waiting at most', async () => {
    const tenant = crypto.randomUUID();
    const batch = await session();
    try {
      // A batch applying the tenant's events holds its lock shared.
      await lockTenants(onPg(batch), [{ tenantId: tenant, exclusive: false }]);
      const order: number[] = [];
      const runs = [1, 2, 3].map((n) => exclusivelyForTenant(pool, tenant, async () => void order.push(n)));
      const waiting = async () =>
        (
          await pool.query(
            `SELECT 1 FROM pg_locks WHERE NOT granted AND locktype = 'advisory' AND classid = $1
               AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
            [TENANT_LOCK_SPACE],
          )
        ).rowCount;
      await expect.poll(waiting).toBe(1);
      await new Promise((r) => setTimeout(r, 300));
      expect(await waiting()).toBe(1);
      await batch.query('COMMIT');
      await Promise.all(runs);
      expect(order).toEqual([1, 2, 3]);
    } finally {
      await batch.query('ROLLBACK').catch(() => {});
      batch.release();
    }
  });
});
