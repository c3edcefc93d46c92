// The inbox claims the publishing of the events a group stores in the INSERT itself (src/ingest/inbox.ts,
// src/ingest/acceptor.ts), so a confirmed publish writes nothing more; these tests hold it to what the
// per-event record of a confirm guaranteed: nothing stored is left unpublished, whatever ends when.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createPrisma, type Db } from '../../src/db/prisma.ts';
import { ACCEPTOR_LOCK_SPACE } from '../../src/db/locks.ts';
import { createInbox, type Inbox, type InboxMessage } from '../../src/ingest/inbox.ts';
import { createMemoryQueue } from '../../src/queue/memory.ts';
import type { Queue } from '../../src/queue/queue.ts';
import { fileDatabaseUrl } from '../support/database.ts';

let pool: pg.Pool;
let prisma: Db;
let tenantId: string;
const quiet = { warn: () => {} };
beforeAll(async () => {
  const url = await fileDatabaseUrl();
  pool = new pg.Pool({ connectionString: url, max: 6 });
  prisma = createPrisma({ url, poolSize: 2 });
  tenantId = (await prisma.tenant.create({ data: { name: 'Claims', plan: 'scale' } })).id;
});
afterAll(async () => {
  await prisma?.$disconnect();
  await pool?.end();
});

/** The in-process queue, keeping what was published, and failing publishes while `down`. */
function recordingQueue() {
  const inner = createMemoryQueue();
  const state = { down: false, published: [] as string[] };
  const queue: Queue = {
    ...inner,
    async publish(topic, body, opts) {
      if (state.down) throw new Error('publish not confirmed');
      const m = body as InboxMessage;
      state.published.push(...(m.ids ?? (m.id ? [m.id] : [])));
      return inner.publish(topic, body, opts);
    },
  };
  return { queue, state };
}

const opened: Inbox[] = [];
function inbox(queue: Queue) {
  const i = createInbox(pool, queue, quiet);
  opened.push(i);
  return i;
}
afterEach(async () => {
  await Promise.all(opened.splice(0).map((i) => i.close()));
  await pool.query('DELETE FROM inbox_events');
  await pool.query('DELETE FROM inbox_acceptors');
});

const accept = (i: Inbox, n: number) =>
  Promise.all(
    Array.from({ length: n }, () => {
      const id = `evt_${randomUUID()}`;
      return i.accept({ tenantId, provider: 'stripe', dedupKey: id, eventType: 'invoice.created', rawBody: Buffer.from(`{"id":"${id}"}`) });
    }),
  );
const rowsOf = async (ids: string[]) =>
  (
    await pool.query<{ id: string; claimed_with_insert: boolean; published: boolean; accepted_by: number | null; status: string }>(
      `SELECT id, coalesce(published_at = received_at, false) AS claimed_with_insert, published_at IS NOT NULL AS published, accepted_by, status
       FROM inbox_events WHERE id = ANY($1::uuid[]) ORDER BY id`,
      [ids],
    )
  ).rows;
const acceptors = async () => (await pool.query<{ key: number }>('SELECT key FROM inbox_acceptors')).rows.map((r) => r.key);

/** Ends the acceptor's own session, as the process ending would: its lock is free from then on. */
async function endAcceptorSession(key: number) {
  const { rows } = await pool.query(
    `SELECT pg_terminate_backend(pid) FROM pg_locks
     WHERE locktype = 'advisory' AND classid = $1::int::oid AND objid = $2::int::oid AND objsubid = 2 AND mode = 'ShareLock'
       AND pid IN (SELECT pid FROM pg_stat_activity WHERE state = 'idle')`,
    [ACCEPTOR_LOCK_SPACE, key],
  );
  expect(rows).toHaveLength(1);
}

/** Accepts until the acceptor has registered (it registers on first use, without holding anything up). */
async function claimedEvents(i: Inbox, n: number) {
  await accept(i, 1);
  await expect.poll(acceptors).toHaveLength(1);
  // That first event was stored unclaimed; its confirmed publish is recorded shortly after.
  const unrecorded = async () =>
    (await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM inbox_events WHERE published_at IS NULL')).rows[0]!.n;
  await expect.poll(unrecorded).toBe(0);
  return (await accept(i, n)).map((a) => a.id);
}

describe('an inbox that claims the publishing of what it stores', () => {
  it('claims its events in the INSERT that stores them, under its registered key, and publishes them', async () => {
    const { queue, state } = recordingQueue();
    const ids = await claimedEvents(inbox(queue), 5);
    const [key] = await acceptors();
    const rows = await rowsOf(ids);
    expect(rows).toHaveLength(5);
    // The same transaction's clock: the claim was written with the row, not by a later UPDATE.
    for (const r of rows) expect(r).toMatchObject({ claimed_with_insert: true, accepted_by: key, status: 'received' });
    expect(state.published).toEqual(expect.arrayContaining(ids));
  });

  it('leaves the claims of a process that still runs to it: the sweep publishes none of them again', async () => {
    const { queue } = recordingQueue();
    const ids = await claimedEvents(inbox(queue), 3);
    const worker = recordingQueue();
    expect(await inbox(worker.queue).sweep({ olderThanMs: 0 })).toBe(0);
    expect(worker.state.published).toEqual([]);
    expect((await rowsOf(ids)).every((r) => r.claimed_with_insert)).toBe(true);
  });

  it('has the sweep publish again what a process that ended had claimed and not processed, once no INSERT naming it is open', async () => {
    const { queue } = recordingQueue();
    const ids = await claimedEvents(inbox(queue), 4);
    const [key] = await acceptors();
    await pool.query(`UPDATE inbox_events SET status = 'processed' WHERE id = $1`, [ids[0]]);
    await endAcceptorSession(key!);
    // An INSERT naming the key, still open: it holds the key's lock shared, as the accepting transaction does.
    const open = await pool.connect();
    await open.query('BEGIN');
    await open.query('SELECT pg_advisory_xact_lock_shared($1::int, $2::int)', [ACCEPTOR_LOCK_SPACE, key]);

    const worker = recordingQueue();
    const sweeper = inbox(worker.queue);
    try {
      expect(await sweeper.sweep({ olderThanMs: 0 })).toBe(0);
      expect(await acceptors()).toEqual([key]);
    } finally {
      await open.query('COMMIT');
      open.release();
    }
    expect(await sweeper.sweep({ olderThanMs: 0 })).toBe(3);
    expect(worker.state.published.sort()).toEqual(ids.slice(1).sort());
    expect(await acceptors()).toEqual([]);
    const rows = await rowsOf(ids.slice(1));
    for (const r of rows) expect(r).toMatchObject({ published: true, accepted_by: null });
    // Recovered once: the next sweep leaves them to the worker.
    expect(await sweeper.sweep({ olderThanMs: 0 })).toBe(0);
  });

  it('keeps a key whose process ended while a transaction storing events under it is still open, and recovers those events too once it commits', async () => {
    const { queue } = recordingQueue();
    const i = inbox(queue);
    const ids = await claimedEvents(i, 2);
    const [key] = await acceptors();
    // A commit made slow on purpose: the storing transaction stays open, holding the key's lock shared.
    await pool.query(
      `CREATE FUNCTION test_slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(1.5); RETURN NULL; END $$`,
    );
    await pool.query(
      'CREATE CONSTRAINT TRIGGER test_slow_commit AFTER INSERT ON inbox_events DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION test_slow_commit()',
    );
    try {
      const storing = accept(i, 1);
      await expect
        .poll(
          async () =>
            (await pool.query(`SELECT 1 FROM pg_stat_activity WHERE query LIKE 'INSERT INTO inbox_events%' AND state = 'active'`)).rowCount,
        )
        .toBe(1);
      await endAcceptorSession(key!);
      const worker = recordingQueue();
      const sweeper = inbox(worker.queue);
      expect(await sweeper.sweep({ olderThanMs: 0 })).toBe(0);
      expect(await acceptors()).toEqual([key]);
      const [late] = await storing;
      expect(await sweeper.sweep({ olderThanMs: 0 })).toBe(3);
      expect(worker.state.published.sort()).toEqual([...ids, late!.id].sort());
    } finally {
      await pool.query('DROP TRIGGER IF EXISTS test_slow_commit ON inbox_events');
      await pool.query('DROP FUNCTION IF EXISTS test_slow_commit()');
    }
  });

  it('claims nothing under a key no longer registered, and registers a new one', async () => {
    const { queue } = recordingQueue();
    const i = inbox(queue);
    await claimedEvents(i, 1);
    const [key] = await acceptors();
    // As if the sweeper had recovered the key while this process did not notice.
    await pool.query('DELETE FROM inbox_acceptors');
    const ids = (await accept(i, 3)).map((a) => a.id);
    for (const r of await rowsOf(ids)) expect(r).toMatchObject({ claimed_with_insert: false, accepted_by: null });
    // Its confirmed publishes are recorded instead.
    await expect.poll(async () => (await rowsOf(ids)).filter((r) => r.published).length).toBe(3);
    // A new key is registered at an event a few seconds later.
    await expect
      .poll(
        async () => {
          await accept(i, 1);
          return acceptors();
        },
        { timeout: 10_000, interval: 500 },
      )
      .toHaveLength(1);
    const [next] = await acceptors();
    expect(next).not.toBe(key);
  });

  it('gives the claim up when the publish is not confirmed, so the sweep publishes the events once the broker is back', async () => {
    const { queue, state } = recordingQueue();
    const i = inbox(queue);
    await claimedEvents(i, 1);
    state.down = true;
    const ids = (await accept(i, 3)).map((a) => a.id);
    await expect.poll(async () => (await rowsOf(ids)).filter((r) => !r.published && r.accepted_by === null).length).toBe(3);
    state.down = false;
    const worker = recordingQueue();
    expect(await inbox(worker.queue).sweep({ olderThanMs: 0 })).toBe(3);
    expect(worker.state.published.sort()).toEqual([...ids].sort());
  });

  it('unregisters when it closes, leaving nothing for the sweep to recover', async () => {
    const { queue } = recordingQueue();
    const i = inbox(queue);
    const ids = await claimedEvents(i, 2);
    await i.close();
    expect(await acceptors()).toEqual([]);
    const worker = recordingQueue();
    expect(await inbox(worker.queue).sweep({ olderThanMs: 0 })).toBe(0);
    expect((await rowsOf(ids)).every((r) => r.claimed_with_insert)).toBe(true);
  });
});
