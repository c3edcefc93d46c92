import { createHash, randomUUID } from 'node:crypto';
import DataLoader from 'dataloader';
import type pg from 'pg';
import { onPg } from '../db/sql.ts';
import { DomainError, isPoolExhausted } from '../errors.ts';
import { createGroups } from './groups.ts';
import { publishIds } from '../queue/publish-ids.ts';
import type { Queue } from '../queue/queue.ts';

export interface InboxMessage {
  id: string;
}

export interface Inbox {
  /**
   * Stores the raw event once per dedup key, and, when `hashBody` is set, once per body for
   * BODY_DEDUP_DAYS; then publishes it with a confirm.
   */
  accept(e: {
    tenantId: string;
    provider: string;
    dedupKey: string;
    eventType: string;
    rawBody: Buffer;
    hashBody?: boolean;
  }): Promise<{ id: string; duplicate: boolean }>;
  /** Publishes what was stored but never confirmed (broker down, process killed); safe on several workers. */
  sweep(opts?: { olderThanMs?: number; staleAfterMs?: number; limit?: number }): Promise<number>;
  close(): Promise<void>;
}

/** How long a body counts as already seen, where the provider's dedup key is not signed (docs/inbound-webhooks.md). */
export const BODY_DEDUP_DAYS = 7;
/** How long an inbound request waits for the broker's confirm before answering (the event is stored already). */
const ACCEPT_CONFIRM_TIMEOUT_MS = 1000;
/** After a failed publish, how long accepted events skip publishing and leave it to the sweeper. */
const BROKER_DOWN_HOLD_MS = 5000;
/**
 * Events arriving within this window are stored by one INSERT (one commit, one flush of the WAL) and
 * published together (their confirms come back as a batch): at a thousand events a second that turns a
 * commit per event into one per group, at the cost of this wait.
 */
const GROUP_WINDOW_MS = 2;
const MAX_GROUP = 200;
/** A group's bodies in bytes at most (beside the count): one statement's parameters stay a few MiB. */
const MAX_GROUP_BYTES = 4 * 1024 * 1024;
/** How long a group waits on a row another transaction holds before its events are stored one by one. */
const GROUP_LOCK_TIMEOUT_MS = 100;

interface NewEvent {
  tenantId: string;
  provider: string;
  key: string;
  eventType: string;
  body: string;
  /** The body's size as received. */
  bytes: number;
  bodyHash: string | null;
}
const compareKeys = (a: NewEvent, b: NewEvent) =>
  a.provider < b.provider ? -1 : a.provider > b.provider ? 1 : a.key < b.key ? -1 : a.key > b.key ? 1 : 0;

/** Stored: its id; not stored as it conflicts with a stored event: null; the group's INSERT failed: undefined. */
type Stored = string | null | undefined;

const sqlState = (err: unknown) =>
  err && typeof err === 'object' && typeof (err as { code?: unknown }).code === 'string' ? (err as { code: string }).code : '';

/** PostgreSQL refused the rows themselves (a value, a constraint, a trigger, a lock it would not wait for). */
function refusedRows(err: unknown): boolean {
  const code = sqlState(err);
  return /^(22|23|54|P0)/.test(code) || code === '55P03' || code === '40P01';
}

/** The database could not be reached or stopped serving: nothing was stored, and sending again will do. */
function databaseUnavailable(err: unknown): boolean {
  const code = sqlState(err);
  if (/^(08|53|57|58)/.test(code) || /^E[A-Z]+$/.test(code)) return true;
  return err instanceof Error && /Connection terminated|Connection ended|not queryable/i.test(err.message);
}

export function createInbox(pool: pg.Pool, queue: Queue, log: { warn: (o: object, m: string) => void }): Inbox {
  const sql = onPg(pool);
  // A circuit breaker: while the broker is known to be down, a request does not wait on it at all.
  // The sweeper's first successful publish closes it again.
  let brokerDownUntil = 0;
  const brokerDown = () => !queue.connected() || Date.now() < brokerDownUntil;
  // Confirmed publishes are recorded in batches: one UPDATE for many events, off the request path.
  const confirmed: string[] = [];
  let flushing: Promise<void> | null = null;
  const flush = async () => {
    while (confirmed.length) {
      const ids = confirmed.splice(0, 1000);
      await pool
        .query('UPDATE inbox_events SET published_at = now() WHERE id = ANY($1::uuid[]) AND published_at IS NULL', [ids])
        .catch((err) => log.warn({ err }, 'could not record published inbox events; the sweeper will publish them again'));
    }
    flushing = null;
  };
  const markPublished = (id: string) => {
    confirmed.push(id);
    flushing ??= new Promise((r) => setTimeout(r, 20)).then(flush);
  };

  // What the provider is told when its event was not stored. A busy pool stays itself (503 with Retry-After,
  // as everywhere); a refusal or an unreachable database asks for the event again; anything else is a bug (500).
  const unstored = (err: unknown) => {
    if (isPoolExhausted(err) || !(refusedRows(err) || databaseUnavailable(err))) return err;
    log.warn({ err }, 'an inbound event could not be stored; the provider will send it again');
    return new DomainError('service_unavailable', 'The event could not be stored; send it again.');
  };

  // A group is one tenant's events, in one statement and one transaction. A copy of an event already
  // stored, or of one earlier in the same group, conflicts and is answered null (the caller then finds
  // the stored copy). The rows go in sorted by key, so two groups holding the same keys take them in the
  // same order and cannot deadlock; and a group waits only briefly on a row another transaction has not
  // committed (a group in flight, an erasure, a purge): past that, or if PostgreSQL refuses rows, nothing
  // of the group was stored and each event is tried again on its own, so only the event that collides
  // waits, and one event refused fails only its own request. No 202 is answered before a commit.
  const storeGroup = async (events: NewEvent[]): Promise<Stored[]> => {
    const order = events.map((_, i) => i).sort((x, y) => compareKeys(events[x]!, events[y]!));
    const sorted = order.map((i) => events[i]!);
    // Each event's row id is chosen here, so each inserted row answers exactly its own event: an event
    // skipped for a clash on either unique index (its key, or GitHub's body hash) is never mistaken
    // for another one that shares its key.
    const ids = events.map(() => randomUUID());
    let rows: { id: string }[];
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (err) {
      throw unstored(err);
    }
    let broken: Error | undefined;
    try {
      await client.query(`BEGIN; SET LOCAL lock_timeout = ${GROUP_LOCK_TIMEOUT_MS}`);
      rows = await onPg(client).query(
        `INSERT INTO inbox_events (id, tenant_id, provider, dedup_key, event_type, body, body_sha256)
         SELECT e.id, e.tenant_id, e.provider, e.dedup_key, e.event_type, e.body, e.body_sha256
         FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[])
           WITH ORDINALITY AS e(id, tenant_id, provider, dedup_key, event_type, body, body_sha256, n)
         ORDER BY e.n
         ON CONFLICT DO NOTHING
         RETURNING id`,
        [
          order.map((i) => ids[i]),
          sorted.map((e) => e.tenantId),
          sorted.map((e) => e.provider),
          sorted.map((e) => e.key),
          sorted.map((e) => e.eventType),
          sorted.map((e) => e.body),
          sorted.map((e) => e.bodyHash),
        ],
      );
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      if (databaseUnavailable(err)) broken = err as Error;
      // Only rows PostgreSQL refused (or would have waited for) are tried again one by one; a database
      // that is down fails the whole group at once, and anything else is a bug.
      if (!refusedRows(err)) throw unstored(err);
      if (events.length > 1)
        log.warn({ err, events: events.length }, 'a group of inbound events could not be stored; storing each on its own');
      return events.map(() => undefined);
    } finally {
      client.release(broken);
    }
    const inserted = new Set(rows.map((r) => r.id));
    return ids.map((id) => (inserted.has(id) ? id : null));
  };
  const groups = createGroups<NewEvent, Stored>({
    windowMs: GROUP_WINDOW_MS,
    maxCount: MAX_GROUP,
    maxBytes: MAX_GROUP_BYTES,
    sizeOf: (e) => e.bytes,
    run: storeGroup,
  });
  // The ids stored by one group are published together, each with its confirm; the answer is the ids
  // that were not confirmed in time.
  const confirms = new DataLoader<string, boolean>(
    async (ids) => {
      const unconfirmed = new Set(await publishIds(queue, 'inbound.events', [...ids], MAX_GROUP, ACCEPT_CONFIRM_TIMEOUT_MS));
      return ids.map((id) => !unconfirmed.has(id));
    },
    { cache: false, maxBatchSize: MAX_GROUP },
  );

  return {
    async accept({ tenantId, provider, dedupKey, eventType, rawBody, hashBody = false }) {
      const bodyHash = createHash('sha256').update(rawBody).digest('hex');
      // Providers that give an event no id of its own are keyed by the bytes they signed.
      const key = dedupKey || `sha256:${bodyHash}`;
      const event: NewEvent = {
        tenantId,
        provider,
        key,
        eventType: eventType.slice(0, 200),
        body: rawBody.toString('utf8'),
        bytes: rawBody.length,
        bodyHash: hashBody ? bodyHash : null,
      };
      const insert = () =>
        sql.query<{ id: string }>(
          `INSERT INTO inbox_events (id, tenant_id, provider, dedup_key, event_type, body, body_sha256)
           VALUES (gen_random_uuid(), $1, $2, $3, $4, $5, $6)
           ON CONFLICT DO NOTHING
           RETURNING id`,
          [event.tenantId, event.provider, event.key, event.eventType, event.body, event.bodyHash],
        );
      const insertAlone = async () => {
        try {
          return await insert();
        } catch (err) {
          throw unstored(err);
        }
      };
      // Both unique indexes decide, so two concurrent copies cannot both get in (no check-then-insert).
      const stored = await groups.add(tenantId, event);
      let inserted = stored === null ? [] : stored === undefined ? await insertAlone() : [{ id: stored }];
      // The conflicting copy can be removed between the two statements (retention): then insert again.
      for (let attempt = 0; inserted.length === 0 && attempt < 3; attempt++) {
        const [seen] = await sql.query<{ id: string; by_key: boolean; expired: boolean }>(
          `SELECT id, dedup_key = $3 AS by_key, received_at < now() - make_interval(days => $5) AS expired
           FROM inbox_events
           WHERE tenant_id = $1 AND provider = $2 AND (dedup_key = $3 OR body_sha256 = $4)
           ORDER BY (dedup_key = $3) DESC LIMIT 1`,
          [tenantId, provider, key, hashBody ? bodyHash : null, BODY_DEDUP_DAYS],
        );
        if (seen && (seen.by_key || !seen.expired)) return { id: seen.id, duplicate: true };
        // The same body seen longer ago than the window: that copy stops counting, this one is new.
        if (seen) await sql.query('UPDATE inbox_events SET body_sha256 = NULL WHERE id = $1', [seen.id]);
        inserted = await insert();
      }
      if (inserted.length === 0) throw new DomainError('service_unavailable', 'The event could not be stored; send it again.');
      const id = inserted[0]!.id;
      // Stored is what matters for the provider (202 means stored durably): if the broker is down or does
      // not confirm promptly, the sweeper publishes the event later.
      if (brokerDown()) return { id, duplicate: false };
      if (!(await confirms.load(id))) {
        brokerDownUntil = Date.now() + BROKER_DOWN_HOLD_MS;
        log.warn({ inboxEventId: id }, 'inbound event stored but not yet published; leaving publishing to the sweeper for a while');
      } else markPublished(id);
      return { id, duplicate: false };
    },
    async sweep({ olderThanMs = 5000, staleAfterMs = 15 * 60_000, limit = 500 } = {}) {
      // Claim with SKIP LOCKED so concurrent sweepers take different rows; row locks last one statement.
      const { rows: claimed } = await pool.query<{ id: string }>(
        `UPDATE inbox_events SET published_at = now()
         WHERE id IN (
           SELECT id FROM inbox_events
           WHERE status = 'received'
             AND ((published_at IS NULL AND received_at < now() - make_interval(secs => $1))
               OR published_at < now() - make_interval(secs => $2))
           ORDER BY received_at
           LIMIT $3
           FOR UPDATE SKIP LOCKED)
         RETURNING id`,
        [olderThanMs / 1000, staleAfterMs / 1000, limit],
      );
      const ids = claimed.map((r) => r.id);
      const unpublished = await publishIds(queue, 'inbound.events', ids, 50);
      if (ids.length && !unpublished.length) brokerDownUntil = 0;
      // Unclaim what did not make it; the next sweep tries again.
      if (unpublished.length) await pool.query('UPDATE inbox_events SET published_at = NULL WHERE id = ANY($1::uuid[])', [unpublished]);
      const published = ids.length - unpublished.length;
      return published;
    },
    async close() {
      await flushing;
    },
  };
}
