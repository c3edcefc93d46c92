// A transaction whose session PostgreSQL ends (a restart, an operator terminating it): the transaction fails,
// the process does not, and the dead connection is not handed out again.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool } from '../../src/db/prisma.ts';
import { inTransaction } from '../../src/db/sql.ts';
import { fileDatabaseUrl } from '../support/database.ts';

let url: string;
let admin: pg.Client;
beforeAll(async () => {
  url = await fileDatabaseUrl();
  admin = new pg.Client({ connectionString: url });
  await admin.connect();
});
afterAll(async () => {
  await admin?.end();
});

describe('a transaction whose session PostgreSQL ends', () => {
  it('fails that transaction only, and the next one runs on a new connection', async () => {
    const pool = createPool(url, 1);
    try {
      const ended = inTransaction(pool, async (sql) => {
        const [{ pid }] = await sql.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
        await admin.query('SELECT pg_terminate_backend($1)', [pid]);
        // The session's end reaches the client as an event while nothing is running on it.
        await new Promise((r) => setTimeout(r, 300));
        await sql.query('SELECT 1');
      });
      await expect(ended).rejects.toThrow();
      expect(await inTransaction(pool, (sql) => sql.query<{ ok: number }>('SELECT 1 AS ok'))).toEqual([{ ok: 1 }]);
    } finally {
      await pool.end();
    }
  });
});

describe('the service’s sessions', () => {
  it('run without JIT compilation, and with synchronous commit only where it was not asked off', async () => {
    const pools = [createPool(url, 1), createPool(url, 1, { synchronousCommit: false })];
    try {
      const settings = await Promise.all(
        pools.map(
          async (p) =>
            (
              await p.query<{ jit: string; sc: string }>(
                `SELECT current_setting('jit') AS jit, current_setting('synchronous_commit') AS sc`,
              )
            ).rows[0],
        ),
      );
      expect(settings).toEqual([
        { jit: 'off', sc: 'on' },
        { jit: 'off', sc: 'off' },
      ]);
    } finally {
      await Promise.all(pools.map((p) => p.end()));
    }
  });
});
