// A statement whose rows come back before its commit (src/db/rows-before-commit.ts), checked against
// PostgreSQL: a deferred trigger makes each commit here take a while, so "before" can be seen.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsBeforeCommit } from '../../src/db/rows-before-commit.ts';
import { fileDatabaseUrl } from '../support/database.ts';

let pool: pg.Pool;
beforeAll(async () => {
  pool = new pg.Pool({ connectionString: await fileDatabaseUrl(), max: 4 });
  await pool.query(`
    CREATE TABLE slow_commits (id int PRIMARY KEY, ok boolean NOT NULL DEFAULT true);
    CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_sleep(0.4);
      IF NOT NEW.ok THEN RAISE EXCEPTION 'refused at commit'; END IF;
      RETURN NULL;
    END $$;
    CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON slow_commits DEFERRABLE INITIALLY DEFERRED
      FOR EACH ROW EXECUTE FUNCTION slow_commit();`);
});
afterAll(() => pool?.end());

async function run(id: number, ok = true) {
  const client = await pool.connect();
  try {
    const started = Date.now();
    const statement = rowsBeforeCommit<{ id: number }>(client, 'INSERT INTO slow_commits (id, ok) VALUES ($1, $2) RETURNING id', [id, ok]);
    const rows = await statement.rows.then((r) => ({ r, at: Date.now() - started }));
    const visibleBefore = (await pool.query('SELECT 1 FROM slow_commits WHERE id = $1', [id])).rowCount;
    const committed = await statement.committed.then(
      () => ({ ok: true, at: Date.now() - started }),
      (e: Error) => ({ ok: false, at: Date.now() - started, message: e.message }),
    );
    const visibleAfter = (await pool.query('SELECT 1 FROM slow_commits WHERE id = $1', [id])).rowCount;
    return { rows, visibleBefore, committed, visibleAfter };
  } finally {
    client.release();
  }
}

describe('a statement with its rows before its commit', () => {
  it('answers the rows while the commit is still running, and commits them', async () => {
    const { rows, visibleBefore, committed, visibleAfter } = await run(1);
    expect(rows.r).toEqual([{ id: 1 }]);
    expect(visibleBefore).toBe(0);
    expect(committed.ok).toBe(true);
    expect(committed.at - rows.at).toBeGreaterThanOrEqual(300);
    expect(visibleAfter).toBe(1);
  });

  it('rejects the commit, and keeps nothing, when the commit fails after the rows came', async () => {
    const { rows, committed, visibleAfter } = await run(2, false);
    expect(rows.r).toEqual([{ id: 2 }]);
    expect(committed).toMatchObject({ ok: false, message: 'refused at commit' });
    expect(visibleAfter).toBe(0);
  });

  it('rejects both when the statement itself fails, and leaves the connection usable', async () => {
    const client = await pool.connect();
    try {
      const statement = rowsBeforeCommit(client, 'INSERT INTO slow_commits (id) VALUES ($1) RETURNING id', ['not a number']);
      await expect(statement.rows).rejects.toThrow(/invalid input syntax/);
      await expect(statement.committed).rejects.toThrow(/invalid input syntax/);
      expect((await client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    } finally {
      client.release();
    }
  });
});

describe('its parameters and rows, as pg’s own queries have them', () => {
  it('binds arrays with quotes, backslashes, commas, braces and NULLs, and parses each column’s type, as client.query does', async () => {
    const text = `SELECT $1::text[] AS texts, $2::int[] AS ints, $3::uuid AS id, $4::jsonb AS doc, $5::timestamptz AS at,
                         $6::boolean AS yes, $7::text AS nothing, array_length($1::text[], 1) AS n`;
    const values = [
      ['plain', 'a "quoted" word', 'back\\slash', 'comma, brace } {', '', null, 'NULL'],
      [1, null, -3],
      '8c1e3f3a-52a4-4f1c-9d3e-0a7c2f4b6e10',
      { nested: { list: [1, 'two'] } },
      new Date('2026-11-29T01:02:03.004Z'),
      true,
      null,
    ];
    const client = await pool.connect();
    try {
      const statement = rowsBeforeCommit(client, text, values);
      const ours = await statement.rows;
      await statement.committed;
      expect(ours).toEqual((await client.query(text, values)).rows);
      expect(ours[0]).toMatchObject({ n: 7, yes: true, nothing: null });
    } finally {
      client.release();
    }
  });

  it('refuses a value it cannot write before sending anything, and the connection stays usable', async () => {
    const client = await pool.connect();
    try {
      const statement = rowsBeforeCommit(client, 'INSERT INTO slow_commits (id) VALUES ($1) RETURNING id', [new Date(Number.NaN)], {
        first: 'SELECT pg_advisory_xact_lock(7, 42)',
      });
      await expect(statement.first).rejects.toThrow(RangeError);
      await expect(statement.rows).rejects.toThrow(RangeError);
      // The first statement was never sent: its lock is free, and the session is in no transaction.
      const free = await pool.query<{ free: boolean }>('SELECT pg_try_advisory_lock_shared(7, 42) AS free');
      expect(free.rows[0]!.free).toBe(true);
      await pool.query('SELECT pg_advisory_unlock_shared(7, 42)');
      expect((await client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    } finally {
      client.release();
    }
  });

  it('prepares its named statement once per connection', async () => {
    const client = await pool.connect();
    try {
      for (const id of [20, 21]) {
        const run = rowsBeforeCommit(client, 'INSERT INTO slow_commits (id) VALUES ($1) RETURNING id', [id], { name: 'slow_commits_once' });
        expect(await run.rows).toEqual([{ id }]);
        await run.committed;
      }
      const { rows } = await client.query(`SELECT statement FROM pg_prepared_statements WHERE name = 'slow_commits_once'`);
      expect(rows).toHaveLength(1);
    } finally {
      client.release();
    }
  });
});

describe('a statement with a first statement ahead of it in its transaction', () => {
  it('holds what the first statement took from before the rows until the commit', async () => {
    const client = await pool.connect();
    const held = () =>
      pool.query<{ free: boolean }>('SELECT pg_try_advisory_lock_shared(7, 41) AS free').then(async (r) => {
        if (r.rows[0]!.free) await pool.query('SELECT pg_advisory_unlock_shared(7, 41)');
        return !r.rows[0]!.free;
      });
    try {
      // The lock is taken exclusively, so another session's shared try fails while it is held.
      const statement = rowsBeforeCommit<{ id: number }>(client, 'INSERT INTO slow_commits (id) VALUES ($1) RETURNING id', [10], {
        first: 'SELECT pg_advisory_xact_lock(7, 41)',
      });
      await statement.first;
      expect(await held()).toBe(true);
      expect(await statement.rows).toEqual([{ id: 10 }]);
      expect(await held()).toBe(true);
      await statement.committed;
      expect(await held()).toBe(false);
    } finally {
      client.release();
    }
  });

  it('runs its named statement again after it failed on a value, once prepared', async () => {
    const client = await pool.connect();
    try {
      const failed = rowsBeforeCommit(client, 'INSERT INTO slow_commits (id) VALUES ($1) RETURNING id', ['not a number'], {
        name: 'slow_commits_insert_value',
        first: 'SELECT 1',
      });
      await expect(failed.rows).rejects.toThrow(/invalid input syntax/);
      const ok = rowsBeforeCommit<{ id: number }>(client, 'INSERT INTO slow_commits (id) VALUES ($1) RETURNING id', [14], {
        name: 'slow_commits_insert_value',
        first: 'SELECT 1',
      });
      expect(await ok.rows).toEqual([{ id: 14 }]);
      await ok.committed;
    } finally {
      client.release();
    }
  });

  it('rejects all three when the first statement fails, and prepares its named statement on the next run', async () => {
    const client = await pool.connect();
    try {
      const failed = rowsBeforeCommit(client, 'INSERT INTO slow_commits (id) VALUES ($1) RETURNING id', [11], {
        name: 'slow_commits_insert',
        first: 'SELECT 1 / 0',
      });
      await expect(failed.first).rejects.toThrow(/division by zero/);
      await expect(failed.rows).rejects.toThrow(/division by zero/);
      await expect(failed.committed).rejects.toThrow(/division by zero/);
      // The named Parse was skipped with the rest of the transaction: the name must not count as prepared.
      for (const id of [12, 13]) {
        const ok = rowsBeforeCommit<{ id: number }>(client, 'INSERT INTO slow_commits (id) VALUES ($1) RETURNING id', [id], {
          name: 'slow_commits_insert',
          first: 'SELECT 1',
        });
        expect(await ok.rows).toEqual([{ id }]);
        await ok.committed;
      }
    } finally {
      client.release();
    }
  });
});
