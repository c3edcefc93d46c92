// inTransaction (src/db/sql.ts) against PostgreSQL: a transaction PostgreSQL ends to break a deadlock runs
// again when its caller allows more than one run, and its ended run leaves nothing behind.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inTransaction, type Sql } from '../src/db/sql.ts';
import { fileDatabaseUrl } from './support/database.ts';

let pool: pg.Pool;
beforeAll(async () => {
  pool = new pg.Pool({ connectionString: await fileDatabaseUrl(), max: 2 });
  await pool.query('CREATE TABLE IF NOT EXISTS transaction_runs (run int NOT NULL)');
});
afterAll(() => pool?.end());

/** Writes its run's number, then fails with PostgreSQL's own error of the given SQLSTATE on runs up to `failing`. */
function endedBy(code: string, failing: number) {
  let run = 0;
  const fn = async (sql: Sql) => {
    run++;
    await sql.query('INSERT INTO transaction_runs (run) VALUES ($1)', [run]);
    if (run <= failing) await sql.query(`DO $$ BEGIN RAISE EXCEPTION 'ended' USING ERRCODE = '${code}'; END $$`);
    return run;
  };
  return { fn, runs: () => run };
}

const kept = async () => (await pool.query<{ run: number }>('SELECT run FROM transaction_runs ORDER BY run')).rows.map((r) => r.run);

describe('a transaction ended by PostgreSQL', () => {
  it('runs again after a deadlock, keeping only the run that committed', async () => {
    await pool.query('TRUNCATE transaction_runs');
    const t = endedBy('40P01', 2);
    expect(await inTransaction(pool, t.fn, { runs: 3 })).toBe(3);
    expect(await kept()).toEqual([3]);
  });

  it('fails with the deadlock once its runs are spent', async () => {
    await pool.query('TRUNCATE transaction_runs');
    const t = endedBy('40P01', 3);
    await expect(inTransaction(pool, t.fn, { runs: 3 })).rejects.toMatchObject({ code: '40P01' });
    expect(t.runs()).toBe(3);
    expect(await kept()).toEqual([]);
  });

  it('runs once by default, and never again for an error of its own', async () => {
    await pool.query('TRUNCATE transaction_runs');
    const deadlocked = endedBy('40P01', 1);
    await expect(inTransaction(pool, deadlocked.fn)).rejects.toMatchObject({ code: '40P01' });
    expect(deadlocked.runs()).toBe(1);
    const refused = endedBy('23505', 1);
    await expect(inTransaction(pool, refused.fn, { runs: 3 })).rejects.toMatchObject({ code: '23505' });
    expect(refused.runs()).toBe(1);
    expect(await kept()).toEqual([]);
  });
});
