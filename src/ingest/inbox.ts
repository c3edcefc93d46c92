import { createHash, randomInt, randomUUID } from 'node:crypto';
import type pg from 'pg';
import { inTransaction, onPg, type Sql } from '../db/sql.ts';
import { PG, pgCode } from '../db/pg-errors.ts';
import { rowsBeforeCommit } from '../db/rows-before-commit.ts';
import { DomainError, isPoolExhausted } from '../errors.ts';
import { createNaturalBatches } from '../runtime/natural-batches.ts';
import { publishIds } from '../queue/publish-ids.ts';
import { createAcceptor, forgetAcceptors } from './acceptor.ts';
import { ACCEPT_LOCK_SPACE, ACCEPTOR_LOCK_SPACE } from '../db/locks.ts';
import type { Queue } from '../queue/queue.ts';
import { currentTraceparent } from '../runtime/trace-context.ts';
import type { BodiesAbout } from '../services/customer-erasure.ts';

/**
 * A message on `inbound.events`: one stored event (`id`), or the events one group stored together
 * (`ids`), published as one message with one confirm.
 */
export interface InboxMessage {
  id?: string;
  ids?: string[];
  /**
   * Set when the message was published before its rows' commit: the advisory lock (in ACCEPT_LOCK_SPACE)
   * the storing transaction holds until it ends. A consumer that does not find a row waits on it.
   */
  lock?: number;
  /**
   * The tenant whose events the message names, when they are all one tenant's (a group's or an event's
   * published on acceptance): the worker applies one tenant's events per transaction (processor.ts).
   */
  tenant?: string;
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
    /** The provider object the event is about, when its events are applied in order (ProviderSpec.orderKeyOf). */
    orderKey?: string | null;
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
 * One tenant's concurrent events are stored by one INSERT (one commit, one flush of the WAL) and published
 * as one message with one confirm. There is no waiting window: while a group of a tenant is in flight,
 * new events gather and go in the next group as soon as it ends (runtime/natural-batches.ts), so the groups grow with the
 * load. One in flight per tenant measured the least CPU per event for the same throughput as three.
 */
const GROUPS_IN_FLIGHT = 1;
const MAX_GROUP = 200;
/** A group's bodies in bytes at most (beside the count): one statement's parameters stay a few MiB. */
const MAX_GROUP_BYTES = 4 * 1024 * 1024;
/**
 * The rows an UPDATE of inbox rows changes: those meeting `condition`, locked in id order first, as every
 * statement changing several inbox rows locks them (docs/concurrency.md). The bookkeeping of publishing only
 * touches rows still to apply: one already applied may be held by an erasure emptying its body, which holds
 * the tenant's lock a batch holding a row still to apply may be waiting for.
 */
const inOrder = (condition: string) => `id IN (SELECT id FROM inbox_events WHERE ${condition} ORDER BY id FOR UPDATE)`;
/** Gives up the claims of the events still to be applied that `condition` names: the sweeper then publishes them. */
const releaseClaims = (condition: string) =>
  `UPDATE inbox_events SET published_at = NULL, accepted_by = NULL WHERE ${inOrder(`status = 'received' AND ${condition}`)}`;
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
  orderKey: string | null;
  /** The W3C traceparent of the request that brought the event (tracing on), which the worker continues. */
  traceContext: string | null;
}
/** An order key is an index entry: a longer one is cut, which at worst orders two objects' events together. */
const MAX_ORDER_KEY = 200;
const compareKeys = (a: NewEvent, b: NewEvent) =>
  a.provider < b.provider ? -1 : a.provider > b.provider ? 1 : a.key < b.key ? -1 : a.key > b.key ? 1 : 0;

/** Stored: its id; not stored as it conflicts with a stored event: null; the group's INSERT failed: undefined. */
type Stored = string | null | undefined;

/** PostgreSQL refused the rows themselves (a value, a constraint, a trigger, a lock it would not wait for). */
function refusedRows(err: unknown): boolean {
  const code = pgCode(err) ?? '';
  return /^(22|23|54|P0)/.test(code) || code === PG.lockNotAvailable || code === PG.deadlockDetected;
}

/** The database could not be reached or stopped serving: nothing was stored, and sending again will do. */
function databaseUnavailable(err: unknown): boolean {
  const code = pgCode(err) ?? '';
  if (/^(08|53|57|58)/.test(code) || /^E[A-Z]+$/.test(code)) return true;
  return err instanceof Error && /Connection terminated|Connection ended|not queryable/i.test(err.message);
}

/** Every event still to apply is to be published again: the in-process queue that held them started empty. */
/** The applied events' new statuses, in one statement, in the transaction that applied them. */
export async function markApplied(sql: Sql, done: { id: string; outcome: 'processed' | 'ignored' }[]): Promise<void> {
  if (done.length === 0) return;
  await sql.query(
    `UPDATE inbox_events i SET status = d.status::"InboxStatus", processed_at = now(), attempts = i.attempts + 1, last_error = NULL
     FROM unnest($1::uuid[], $2::text[]) AS d(id, status) WHERE i.id = d.id`,
    [done.map((d) => d.id), done.map((d) => d.outcome)],
  );
}

/** An attempt to apply the event failed: counted, with its error, for the operator and the next attempt. */
export async function recordFailedAttempt(sql: Sql, id: string, err: unknown): Promise<void> {
  await sql.query('UPDATE inbox_events SET attempts = attempts + 1, last_error = $2 WHERE id = $1', [id, String(err).slice(0, 1000)]);
}

/**
 * Events whose message ran out of attempts: one that failed itself is parked for a human (failed, with its
 * error); one that never failed (it only waited behind an earlier event) is handed back to the sweeper.
 */
export async function parkOrHandBack(sql: Sql, ids: string[]): Promise<void> {
  await sql.query(
    `UPDATE inbox_events SET status = CASE WHEN last_error IS NOT NULL THEN 'failed'::"InboxStatus" ELSE status END,
                             published_at = CASE WHEN last_error IS NOT NULL THEN published_at END, accepted_by = NULL
     WHERE id IN (SELECT id FROM inbox_events WHERE id = ANY($1::uuid[]) AND status = 'received' ORDER BY id FOR UPDATE)`,
    [ids],
  );
}

/**
 * Empties the bodies about an erased customer (services/customer-erasure.ts says which, and why): processed
 * ones that produced its signals or mention it, and unapplied ones only where one of its own values is
 * whole in them, set aside as ignored. The rows stay, so a redelivery is still known. Answers how many.
 */
export async function emptyBodiesAbout(sql: Sql, about: BodiesAbout): Promise<number> {
  const rows = await sql.query<{ id: string }>(
    `UPDATE inbox_events SET body = '', body_sha256 = NULL, order_key = NULL,
            status = CASE WHEN status = 'received' THEN 'ignored'::"InboxStatus" ELSE status END,
            last_error = CASE WHEN status = 'received' THEN 'body erased with its customer' END
     WHERE id IN (
         SELECT id FROM inbox_events
         WHERE tenant_id = $1 AND body <> '' AND status <> 'received'
           AND (id IN (SELECT inbox_event_id FROM signals WHERE customer_id = $2 AND inbox_event_id IS NOT NULL)
                OR EXISTS (SELECT 1 FROM unnest($3::text[] || $4::text[]) AS t(term) WHERE strpos(lower(body), t.term) > 0))
         ORDER BY id FOR UPDATE)
        OR id IN (
         SELECT id FROM inbox_events
         WHERE tenant_id = $1 AND body <> '' AND status = 'received'
           AND EXISTS (SELECT 1 FROM unnest($4::text[]) AS t(term) WHERE strpos(lower(body), t.term) > 0)
         FOR UPDATE SKIP LOCKED)
     RETURNING id`,
    [about.tenantId, about.customerId, about.terms, about.ownValues],
  );
  return rows.length;
}

/** Empties up to `limit` of a tenant's bodies received before `before` whose event is no longer to apply (retention). */
export async function emptyBodiesBefore(sql: Sql, tenantId: string, before: Date, limit: number): Promise<number> {
  const rows = await sql.query(
    `UPDATE inbox_events SET body = '', body_sha256 = NULL, order_key = NULL WHERE id IN (
       SELECT id FROM inbox_events WHERE tenant_id = $1 AND received_at < $2 AND body <> '' AND status <> 'received'
       ORDER BY received_at LIMIT $3 FOR UPDATE SKIP LOCKED)
     RETURNING 1`,
    [tenantId, before, limit],
  );
  return rows.length;
}

export async function republishReceived(sql: Sql): Promise<void> {
  await sql.query(`UPDATE inbox_events SET published_at = NULL WHERE status = 'received'`);
}

export function createInbox(pool: pg.Pool, queue: Queue, log: { warn: (o: object, m: string) => void }): Inbox {
  const sql = onPg(pool);
  const acceptor = createAcceptor(pool, log);
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
        .query(
          `UPDATE inbox_events SET published_at = now() WHERE ${inOrder("id = ANY($1::uuid[]) AND published_at IS NULL AND status = 'received'")}`,
          [ids],
        )
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

  // Publishes stored ids with a confirm; the answer is the ids that were not confirmed in time. A group's
  // ids go as one message: one publish, one confirm and one delivery for the lot, rather than one each.
  const publish = async (tenant: string, ids: string[], lock?: number): Promise<Set<string>> => {
    if (ids.length === 0) return new Set();
    const body: InboxMessage = lock === undefined && ids.length === 1 ? { id: ids[0], tenant } : { ids, lock, tenant };
    try {
      await queue.publish('inbound.events', body, { messageId: ids[0], timeoutMs: ACCEPT_CONFIRM_TIMEOUT_MS });
      return new Set();
    } catch {
      return new Set(ids);
    }
  };
  // Confirmed ids are recorded as published, unless their INSERT claimed them already; after a failure,
  // publishing is left to the sweeper a while, and claims are given up so that it does not wait for them.
  const published = (ids: string[], unconfirmed: Set<string>, claimed?: { key: number; ids: Set<string> }) => {
    for (const id of ids) if (!unconfirmed.has(id) && !claimed?.ids.has(id)) markPublished(id);
    if (claimed) {
      const ofUnconfirmed = ids.filter((id) => unconfirmed.has(id) && claimed.ids.has(id));
      if (ofUnconfirmed.length > 0) track(unclaim(claimed.key, ofUnconfirmed));
    }
    if (unconfirmed.size > 0) {
      brokerDownUntil = Date.now() + BROKER_DOWN_HOLD_MS;
      log.warn(
        { inboxEventIds: [...unconfirmed] },
        'inbound events stored but not yet published; leaving publishing to the sweeper for a while',
      );
    }
  };

  // Work a close waits for: groups being stored, claims being given up.
  const inFlight = new Set<Promise<unknown>>();
  const track = <T>(p: Promise<T>): Promise<T> => {
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p)).catch(() => {});
    return p;
  };
  // A claim whose publish was not confirmed is given up, so the sweeper publishes those events within
  // seconds. Should that fail (the database busy or away), the key is given up instead: the sweeper then
  // recovers every claim made under it, rather than leave these to the 15-minute rule.
  const unclaim = async (key: number, ids: string[]) => {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await pool.query(releaseClaims('id = ANY($1::uuid[])'), [ids]);
        return;
      } catch (err) {
        log.warn({ err, attempt }, 'could not give up the claim on unconfirmed inbound events');
        await new Promise((r) => setTimeout(r, 200 * (attempt + 1)));
      }
    }
    acceptor.forget(key);
  };

  // A group is one tenant's events, in one statement and one transaction. A copy of an event already
  // stored, or of one earlier in the same group, conflicts and is answered null (the caller then finds
  // the stored copy). The rows go in sorted by key, so two groups holding the same keys take them in the
  // same order and cannot deadlock; and a group waits only briefly on a row another transaction has not
  // committed (a group in flight, an erasure, a purge): past that, or if PostgreSQL refuses rows, nothing
  // of the group was stored and each event is tried again on its own, so only the event that collides
  // waits, and one event refused fails only its own request.
  //
  // The group's ids are published as soon as its transaction holds its locks, while the INSERT runs and
  // commits: a request waits for the slower of the two rather than their sum, and the transaction goes
  // in one write. A message can thus reach a worker before its rows are visible, so the transaction holds
  // an advisory lock named in the message until it ends: a worker waits (a few seconds at most, then
  // retries the message) on that lock before it applies the message's events (processor.ts). An id whose
  // row was not stored (a copy, or the group rolled back) is found by no one and acknowledged. No 202 is
  // answered before both the commit and the publishes are over.
  //
  // While this process is a registered acceptor (acceptor.ts) and the broker is up, the INSERT claims
  // the publishing of its rows (published_at, accepted_by), so a confirm costs no write; a publish that
  // is not confirmed gives the claim up, and the sweeper recovers the claims of a process that ended.
  const storeGroup = async (events: NewEvent[]): Promise<Stored[]> => {
    // Stored in key order (below), numbered (seq) in the order accepted.
    const order = events.map((_, i) => i).sort((x, y) => compareKeys(events[x]!, events[y]!));
    const sorted = order.map((i) => events[i]!);
    // Each event's row id is chosen here, so each inserted row answers exactly its own event: an event
    // skipped for a clash on either unique index (its key, or GitHub's body hash) is never mistaken
    // for another one that shares its key.
    const ids = events.map(() => randomUUID());
    const lock = randomInt(2 ** 31);
    // Decided once for the group: whether its rows are published now, and so whether they may be claimed.
    const publishNow = !brokerDown();
    const acceptorKey = publishNow ? acceptor.key() : null;
    let rows: { id: string; claimed: boolean }[];
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (err) {
      throw unstored(err);
    }
    let broken: Error | undefined;
    let publishing: Promise<Set<string>> | undefined;
    // PostgreSQL ending the session is reported to a checked-out client as an 'error' event, which unheard
    // would end the process; the statement fails with it instead.
    const heard = () => {};
    client.on('error', heard);
    try {
      // One transaction sent in one write (rows-before-commit.ts). Its first statement bounds the wait on
      // another transaction's row, takes the lock the message names and, to claim, the acceptor's key
      // (shared): the INSERT's snapshot is taken after that (each statement takes its own, at READ
      // COMMITTED, PostgreSQL's default level), so it sees the key registered only if the
      // sweeper has not recovered it, and the sweeper cannot while this transaction runs. The rows come
      // back before the commit.
      const statement = rowsBeforeCommit<{ id: string; claimed: boolean }>(
        client,
        `INSERT INTO inbox_events (id, tenant_id, provider, dedup_key, event_type, body, body_sha256, order_key, seq, published_at, accepted_by, trace_context)
         SELECT e.id, e.tenant_id, e.provider, e.dedup_key, e.event_type, e.body, e.body_sha256, e.order_key, e.seq,
           CASE WHEN a.key IS NOT NULL THEN now() END, a.key, e.trace_context
         FROM (
           SELECT r.*, nextval('inbox_events_seq_seq') AS seq FROM (
             SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $9::text[], $10::int[], $11::text[])
               WITH ORDINALITY AS e(id, tenant_id, provider, dedup_key, event_type, body, body_sha256, order_key, accepted, trace_context, n)
             ORDER BY e.accepted) r
         ) e
         LEFT JOIN inbox_acceptors a ON a.key = $8::int
         ORDER BY e.n
         ON CONFLICT DO NOTHING
         RETURNING id, accepted_by IS NOT NULL AS claimed`,
        [
          order.map((i) => ids[i]),
          sorted.map((e) => e.tenantId),
          sorted.map((e) => e.provider),
          sorted.map((e) => e.key),
          sorted.map((e) => e.eventType),
          sorted.map((e) => e.body),
          sorted.map((e) => e.bodyHash),
          acceptorKey,
          sorted.map((e) => e.orderKey),
          order,
          sorted.map((e) => e.traceContext),
        ],
        {
          name: 'inbox-store-group',
          first: `SELECT set_config('lock_timeout', '${GROUP_LOCK_TIMEOUT_MS}', true), pg_advisory_xact_lock(${ACCEPT_LOCK_SPACE}, ${lock})${
            acceptorKey === null ? '' : `, pg_advisory_xact_lock_shared(${ACCEPTOR_LOCK_SPACE}, ${acceptorKey})`
          }`,
        },
      );
      await statement.first;
      // In the order the events were accepted (the rows go in sorted by key), which the worker keeps.
      if (publishNow) publishing = publish(events[0]!.tenantId, ids, lock);
      rows = await statement.rows;
      await statement.committed;
    } catch (err) {
      // Messages already sent for these rows find none and are acknowledged; the answer waits for them
      // all the same, so nothing of this group is still in flight when its requests are answered. If the
      // commit happened after all (the connection lost after sending it), an unconfirmed publish must not
      // leave the claims standing.
      const unconfirmed = await publishing;
      if (acceptorKey !== null && unconfirmed?.size) track(unclaim(acceptorKey, ids));
      if (databaseUnavailable(err)) broken = err as Error;
      // Only rows PostgreSQL refused (or would have waited for) are tried again one by one; a database
      // that is down fails the whole group at once, and anything else is a bug.
      if (!refusedRows(err)) throw unstored(err);
      log.warn({ err, events: events.length }, 'a group of inbound events could not be stored; storing each on its own');
      return events.map(() => undefined);
    } finally {
      client.removeListener('error', heard);
      client.release(broken);
    }
    const inserted = new Set(rows.map((r) => r.id));
    // Rows that were to be claimed and were not: the key is no longer registered (the sweeper took it
    // while this process did not notice), so register a new one.
    if (acceptorKey !== null && rows.some((r) => !r.claimed)) acceptor.forget(acceptorKey);
    if (publishing)
      published(
        [...inserted],
        await publishing,
        acceptorKey === null ? undefined : { key: acceptorKey, ids: new Set(rows.filter((r) => r.claimed).map((r) => r.id)) },
      );
    return ids.map((id) => (inserted.has(id) ? id : null));
  };
  const groups = createNaturalBatches<NewEvent, Stored>({
    maxRunning: GROUPS_IN_FLIGHT,
    maxCount: MAX_GROUP,
    maxBytes: MAX_GROUP_BYTES,
    sizeOf: (e) => e.bytes,
    run: (events) => track(storeGroup(events)),
  });

  // The claims of acceptors that ended are given up, so the sweep below publishes their rows. A key is
  // taken exclusively only when its process and every INSERT naming it are gone (acceptor.ts); then, in
  // a later statement (a snapshot that sees all those INSERTs), its unprocessed rows are unclaimed and
  // the key is removed. Rows it claimed and whose publish was confirmed are published again: processing
  // is idempotent, and this happens only after a process ended without unregistering.
  const recoverClaims = () =>
    inTransaction(pool, async (sql) => {
      const ended = await sql.query<{ key: number }>('SELECT key FROM inbox_acceptors WHERE pg_try_advisory_xact_lock($1::int, key)', [
        ACCEPTOR_LOCK_SPACE,
      ]);
      const keys = ended.map((r) => r.key);
      if (keys.length > 0) {
        await sql.query(releaseClaims('accepted_by = ANY($1::int[])'), [keys]);
        await forgetAcceptors(sql, keys);
      }
    });

  return {
    async accept({ tenantId, provider, dedupKey, eventType, rawBody, hashBody = false, orderKey = null }) {
      // Hashed only where it is used: as the key, or for providers whose key is not signed.
      const bodyHash = !dedupKey || hashBody ? createHash('sha256').update(rawBody).digest('hex') : null;
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
        orderKey: orderKey?.slice(0, MAX_ORDER_KEY) ?? null,
        traceContext: currentTraceparent(),
      };
      const insert = () =>
        sql.query<{ id: string }>(
          `INSERT INTO inbox_events (id, tenant_id, provider, dedup_key, event_type, body, body_sha256, order_key, trace_context)
           VALUES (gen_random_uuid(), $1, $2, $3, $4, $5, $6, $7, $8)
           ON CONFLICT DO NOTHING
           RETURNING id`,
          [event.tenantId, event.provider, event.key, event.eventType, event.body, event.bodyHash, event.orderKey, event.traceContext],
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
      // Stored by its group, and published (or left to the sweeper) with it.
      if (stored) return { id: stored, duplicate: false };
      let inserted = stored === null ? [] : await insertAlone();
      // The conflicting copy can be removed between the two statements (retention): then insert again.
      for (let attempt = 0; inserted.length === 0 && attempt < 3; attempt++) {
        const [seen] = await sql.query<{ id: string; by_key: boolean; expired: boolean }>(
          `SELECT id, dedup_key = $3 AS by_key, received_at < now() - make_interval(days => $5) AS expired
           FROM inbox_events
           WHERE tenant_id = $1 AND provider = $2 AND (dedup_key = $3 OR body_sha256 = $4)
           ORDER BY (dedup_key = $3) DESC LIMIT 1`,
          [tenantId, provider, key, event.bodyHash, BODY_DEDUP_DAYS],
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
      if (!brokerDown()) published([id], await publish(tenantId, [id]));
      return { id, duplicate: false };
    },
    async sweep({ olderThanMs = 5000, staleAfterMs = 15 * 60_000, limit = 500 } = {}) {
      await recoverClaims();
      // Claim with SKIP LOCKED so concurrent sweepers take different rows; row locks last one statement.
      const { rows: claimed } = await pool.query<{ id: string }>(
        `UPDATE inbox_events SET published_at = now(), accepted_by = NULL
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
      if (unpublished.length)
        await pool.query(`UPDATE inbox_events SET published_at = NULL WHERE ${inOrder("id = ANY($1::uuid[]) AND status = 'received'")}`, [
          unpublished,
        ]);
      const published = ids.length - unpublished.length;
      return published;
    },
    async close() {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
      await flushing;
      await acceptor.close();
    },
  };
}
