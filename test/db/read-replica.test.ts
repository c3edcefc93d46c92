import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateDeploy } from '../../src/db/migrate.ts';
import { createPool } from '../../src/db/prisma.ts';
import { createReadRouter, type ReadRouter } from '../../src/db/read-replica.ts';
import { createCustomerReads } from '../../src/services/customer-reads.ts';
import { createCustomerTallies, FOLD_AFTER_CHANGES } from '../../src/services/customer-tallies.ts';

// Reads routed to a real PostgreSQL streaming replica: a primary and its replica (pg_basebackup -R) are
// started here from the local PostgreSQL binaries, each on a port of its own, so the shared server's
// configuration is neither needed nor touched. Lag is made by pausing the replica's replay; "down" by
// stopping it.

const BIN = process.env.PG_BIN_DIR ?? '/usr/lib/postgresql/15/bin';
const available = existsSync(join(BIN, 'pg_basebackup')) && existsSync(join(BIN, 'initdb'));
if (!available) console.warn(`\n*** read-replica tests SKIPPED: no PostgreSQL server binaries in ${BIN} (set PG_BIN_DIR) ***\n`);

const MAX_LAG_MS = 1500;
const port = 56000 + Math.floor(Math.random() * 2000);
const primaryUrl = `postgresql://postgres@127.0.0.1:${port}/chs`;
const replicaUrl = `postgresql://postgres@127.0.0.1:${port + 1}/chs`;
let dir: string;
let primary: pg.Pool;
let replicaAdmin: pg.Pool;
let router: ReadRouter;

/** Runs a PostgreSQL program as the `postgres` user when this process is root (the server refuses root). */
function pgRun(program: string, args: string[]) {
  const asRoot = process.getuid?.() === 0;
  const [cmd, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', join(BIN, program), ...args]] : [join(BIN, program), args];
  execFileSync(cmd, argv, { stdio: 'pipe', timeout: 120_000 });
}
const startServer = (data: string) =>
  pgRun('pg_ctl', ['-D', data, '-l', join(dir, `${data.endsWith('replica') ? 'replica' : 'primary'}.log`), '-w', 'start']);
const stopServer = (data: string) => pgRun('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);

beforeAll(async () => {
  if (!available) return;
  dir = mkdtempSync(join(tmpdir(), 'chs-replica-'));
  chmodSync(dir, 0o755);
  if (process.getuid?.() === 0) execFileSync('chown', ['postgres', dir]);
  const p = join(dir, 'primary');
  pgRun('initdb', ['-D', p, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const conf = (data: string, lines: string[]) => {
    appendFileSync(join(data, 'postgresql.conf'), `\n${lines.join('\n')}\n`);
    if (process.getuid?.() === 0) chownSync(join(data, 'postgresql.conf'), Number(execFileSync('id', ['-u', 'postgres']).toString()), -1);
  };
  conf(p, [
    `port = ${port}`,
    "listen_addresses = '127.0.0.1'",
    `unix_socket_directories = '${dir}'`,
    'wal_level = replica',
    'max_wal_senders = 4',
    'fsync = off',
  ]);
  startServer(p);
  pgRun('psql', ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-qc', 'CREATE DATABASE chs']);
  await migrateDeploy(primaryUrl);
  const r = join(dir, 'replica');
  pgRun('pg_basebackup', ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-D', r, '-R', '-X', 'stream']);
  conf(r, [`port = ${port + 1}`]);
  startServer(r);
  primary = createPool(primaryUrl, 4);
  replicaAdmin = createPool(replicaUrl, 1);
  router = createReadRouter(primary, replicaUrl, { maxLagMs: MAX_LAG_MS, checkEveryMs: 200, poolSize: 2 });
}, 240_000);

afterAll(async () => {
  if (!available) return;
  await router?.close();
  await primary?.end();
  await replicaAdmin?.end().catch(() => {});
  for (const d of ['replica', 'primary']) {
    try {
      stopServer(join(dir, d));
    } catch {
      // already stopped by a test
    }
  }
  rmSync(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until<T>(what: string, f: () => Promise<T>, ok: (v: T) => boolean, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)}`);
    await sleep(100);
  }
}

/** Waits until the replica has replayed the tenant's `n` customers and the router reads from it. */
async function replicaServing(tenantId: string, n: number) {
  await until(
    'the replica to replay',
    () => onReplica(tenantId),
    (count) => count === n,
  );
  await until(
    'the router to use the replica',
    () => router.check(),
    (state) => state === 'replica',
  );
}

async function tenantWithCustomers(n: number): Promise<string> {
  const { rows } = await primary.query<{ id: string }>(
    `INSERT INTO tenants (id, name, plan, updated_at) VALUES (gen_random_uuid(), 'Replica', 'scale', now()) RETURNING id`,
  );
  const tenantId = rows[0]!.id;
  await addCustomers(tenantId, n);
  return tenantId;
}
const addCustomers = (tenantId: string, n: number) =>
  primary.query(
    `INSERT INTO customers (id, tenant_id, name, updated_at) SELECT gen_random_uuid(), $1, 'C ' || g, now() FROM generate_series(1, $2::int) g`,
    [tenantId, n],
  );
const onReplica = async (tenantId: string) =>
  Number((await replicaAdmin.query('SELECT count(*) AS n FROM customers WHERE tenant_id = $1', [tenantId])).rows[0].n);

const reads = () =>
  createCustomerReads(router as unknown as pg.Pool, createCustomerTallies({ pool: primary, reads: router as unknown as pg.Pool }));
const page = (tenantId: string) => reads().page({ tenantId, sort: { field: 'createdAt', direction: 'desc' }, take: 100 });

describe.skipIf(!available)('reads routed to a streaming replica', () => {
  it('are served by the replica while it keeps up, so a write it has not replayed is not seen', async () => {
    const tenantId = await tenantWithCustomers(3);
    await replicaServing(tenantId, 3);
    await replicaAdmin.query('SELECT pg_wal_replay_pause()');
    try {
      await addCustomers(tenantId, 1);
      // Within the lag bound the replica still answers: three customers, where the primary has four.
      expect(await page(tenantId)).toHaveLength(3);
      expect(router.state()).toBe('replica');
    } finally {
      await replicaAdmin.query('SELECT pg_wal_replay_resume()');
    }
  });

  it('go to the primary once the replica is further behind than the bound, and back once it has caught up', async () => {
    const tenantId = await tenantWithCustomers(2);
    await replicaServing(tenantId, 2);
    await replicaAdmin.query('SELECT pg_wal_replay_pause()');
    try {
      await addCustomers(tenantId, 1);
      await until(
        'the router to leave the lagging replica',
        () => router.check(),
        (s) => s === 'lagging',
        MAX_LAG_MS * 4,
      );
      expect(await page(tenantId)).toHaveLength(3);
    } finally {
      await replicaAdmin.query('SELECT pg_wal_replay_resume()');
    }
    expect(
      await until(
        'the router to come back',
        () => router.check(),
        (s) => s === 'replica',
      ),
    ).toBe('replica');
    expect(await page(tenantId)).toHaveLength(3);
  });

  it('fold counts on the primary while the reads are on the replica', async () => {
    const tenantId = await tenantWithCustomers(1);
    for (let i = 0; i < FOLD_AFTER_CHANGES; i++) await addCustomers(tenantId, 1);
    await replicaServing(tenantId, FOLD_AFTER_CHANGES + 1);
    expect(await reads().count({ tenantId })).toBe(FOLD_AFTER_CHANGES + 1);
    const pending = await primary.query('SELECT count(*)::int AS n FROM customer_tally_changes WHERE tenant_id = $1', [tenantId]);
    expect(pending.rows[0].n).toBe(0);
  });

  it('are answered by the primary when the replica is down', async () => {
    const tenantId = await tenantWithCustomers(2);
    await replicaServing(tenantId, 2);
    stopServer(join(dir, 'replica'));
    await addCustomers(tenantId, 1);
    // The first read after the stop may meet the dead connection: it is asked of the primary at once.
    expect(await page(tenantId)).toHaveLength(3);
    expect(await router.check()).toBe('down');
    expect(await page(tenantId)).toHaveLength(3);
  });
});
