import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { TENANT_LOCK_SPACE } from '../../src/db/locks.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { customer, tenantWithKey } from '../support/factories.ts';

// A tenant may borrow idle capacity up to MAX_ACTIVE (the pool's size), and an erasure waits for the tenant's
// lock, exclusively, which the batches applying the tenant's events hold shared (db/locks.ts). A burst of
// erasures while such a batch is applied waits in the process, one connection at most waiting on the lock,
// so it does not take every connection of the pool from another tenant's requests within their share.
const apps: TestApp[] = [];
const clients: pg.Client[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.end().catch(() => {});
  for (const a of apps.splice(0)) await a.close();
});

describe('a burst of erasures while a batch of the tenant is applied', () => {
  it("leaves another tenant's requests within their share served", { timeout: 60_000 }, async () => {
    const t = await createTestApp({ env: { DATABASE_POOL_SIZE: '8', DATABASE_POOL_WAIT_MS: '1000' } });
    apps.push(t);
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    const a = await tenantWithKey(t.prisma, 'scale');
    const b = await tenantWithKey(t.prisma, 'scale');
    const c = await customer(t.prisma, b.tenantId);
    const doomed = [];
    for (let i = 0; i < 10; i++) doomed.push(await customer(t.prisma, a.tenantId));
    // Warm both keys, so the burst needs no lookup.
    for (const k of [a.apiKey, b.apiKey])
      expect((await fetch(`${base}/api/v1/customers`, { headers: { 'x-api-key': k } })).status).toBe(200);

    // A batch of tenant A's events being applied holds A's lock shared (processor.ts lockFor).
    const batch = new pg.Client({ connectionString: t.config.database.url });
    clients.push(batch);
    await batch.connect();
    await batch.query('BEGIN');
    await batch.query('SELECT pg_advisory_xact_lock_shared($1::int, hashtext($2))', [TENANT_LOCK_SPACE, a.tenantId]);

    const erasures = doomed.map((d) =>
      fetch(`${base}/api/v1/customers/${d.id}`, { method: 'DELETE', headers: { 'x-api-key': a.apiKey } }).then((r) => r.status),
    );
    await new Promise((r) => setTimeout(r, 500));

    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await fetch(`${base}/api/v1/customers/${c.id}`, {
        method: 'PATCH',
        headers: { 'x-api-key': b.apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `Renamed ${i}` }),
      });
      statuses.push(r.status);
    }
    // While they wait: one connection waits on A's lock, not ten.
    const { rows } = await batch.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND locktype = 'advisory' AND classid = $1
         AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
      [TENANT_LOCK_SPACE],
    );
    await batch.query('COMMIT');
    const erased = await Promise.all(erasures);
    expect(statuses).toEqual([200, 200, 200]);
    expect(rows[0]!.n).toBe(1);
    expect(erased).toEqual(Array(10).fill(200));
  });
});
