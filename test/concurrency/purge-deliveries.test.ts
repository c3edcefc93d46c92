// The removal of a deleted workspace's webhook endpoints beside the deliverer claiming their deliveries. The
// claim locks its deliveries in id order (docs/concurrency.md, step 12); the purge's batch of endpoints must
// take them in that order too, not in the order its cascade walks their index, or the two deadlock.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/prisma.ts';
import { exclusivelyForTenant } from '../../src/db/locks.ts';
import { deleteBatch } from '../../src/lifecycle/workspace-purge.ts';
import { createDeliveryStore } from '../../src/outbox/sender/delivery-store.ts';
import { tenantWithKey } from '../support/factories.ts';
import { withFileDatabase } from '../support/interleave.ts';

let url: string;
let pool: pg.Pool;
let prisma: Db;
withFileDatabase((db) => ({ url, pool, prisma } = db));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until the session `pid` waits on a lock; answers the sessions blocking it. */
async function blockedBy(pid: number): Promise<number[]> {
  for (let i = 0; i < 250; i++) {
    const { rows } = await pool.query<{ w: string | null; by: number[] }>(
      'SELECT wait_event_type AS w, pg_blocking_pids(pid) AS by FROM pg_stat_activity WHERE pid = $1',
      [pid],
    );
    if (rows[0]?.w === 'Lock') return rows[0].by;
    await sleep(20);
  }
  throw new Error(`session ${pid} never waited`);
}

const oneSession = async () => {
  // Deadlocks looked for after 100 ms, not the default second.
  const p = new pg.Pool({ connectionString: url, max: 1, options: '-c deadlock_timeout=100ms' });
  const pid = (await p.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
  return { p, pid };
};

describe('removing a deleted workspace’s endpoints', () => {
  it('beside a claim of their deliveries: neither ends in a deadlock', async () => {
    const { tenantId } = await tenantWithKey(prisma);
    await pool.query('UPDATE tenants SET deletion_requested_at = now(), deletion_due_at = now() WHERE id = $1', [tenantId]);
    const endpointId = randomUUID();
    await pool.query(
      `INSERT INTO webhook_endpoints (id, tenant_id, url, secret, updated_at) VALUES ($1, $2, 'https://x.example/h', 's', now())`,
      [endpointId, tenantId],
    );
    // a < c < b by id; the cascade's index (endpoint, newest first) and the heap both meet them b, c, a.
    const [a, c, b] = [randomUUID(), randomUUID(), randomUUID()].sort() as [string, string, string];
    for (const [id, age] of [
      [b, 0],
      [c, 1],
      [a, 2],
    ] as const)
      await pool.query(
        `INSERT INTO webhook_deliveries (id, tenant_id, endpoint_id, event_type, envelope, next_attempt_at, created_at, updated_at)
         VALUES ($1, $2, $3, 'customer.updated', '{"data":{"payload":{}}}', now(), now() - make_interval(secs => $4), now())`,
        [id, tenantId, endpointId, age],
      );
    // Another statement holding c a moment (any claim of it): the purge then holds b and waits on c.
    const other = new pg.Client({ connectionString: url });
    await other.connect();
    const purge = await oneSession();
    const deliverer = await oneSession();
    try {
      await other.query('BEGIN');
      await other.query('SELECT 1 FROM webhook_deliveries WHERE id = $1 FOR NO KEY UPDATE', [c]);
      const removed = exclusivelyForTenant(purge.p, tenantId, (sql) => deleteBatch(sql, 'webhook_endpoints', tenantId, 100)).then(
        (n) => ({ ok: true as const, n }),
        (e: { code?: string }) => ({ ok: false as const, code: e.code }),
      );
      await blockedBy(purge.pid);
      const store = createDeliveryStore(deliverer.p, { leaseSeconds: 60 });
      const claimed = Promise.all([store.claim(a), store.claim(b)]).then(
        (r) => ({ ok: true as const, r }),
        (e: { code?: string }) => ({ ok: false as const, code: e.code }),
      );
      expect(await blockedBy(deliverer.pid)).toContain(purge.pid);
      await other.query('COMMIT');
      expect(await removed).toEqual({ ok: true, n: 1 });
      // Nothing to claim: the deliveries went with their endpoint.
      expect(await claimed).toEqual({ ok: true, r: [null, null] });
    } finally {
      await other.end();
      await Promise.all([purge.p.end(), deliverer.p.end()]);
    }
  });
});
