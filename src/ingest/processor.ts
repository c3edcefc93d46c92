import type pg from 'pg';
import { inboundApplied } from '../runtime/metrics.ts';
import { inTransaction, onPg, type Sql } from '../db/sql.ts';
import { enqueueEvents, type OutboxInput } from '../outbox/events/enqueue.ts';
import type { Consumer, Queue } from '../queue/queue.ts';
import { parseEventJson } from './event-json.ts';
import { createNaturalBatches } from '../runtime/natural-batches.ts';
import { type InboxMessage, markApplied, parkOrHandBack, recordFailedAttempt } from './inbox.ts';
import { PROVIDER_SPECS } from './providers/index.ts';
import { isProvider } from './providers/types.ts';
import type { StoredEvent } from './normalizers/types.ts';
import { applyCommands, type InboundCommand, planSegments } from '../services/inbound-commands.ts';
import type { InvoiceSegment } from '../services/billing-commands.ts';
import { ACCEPT_LOCK_SPACE, lockObjects, lockTenants } from '../db/locks.ts';
import { PG, pgCode } from '../db/pg-errors.ts';
import { contextOf, currentTraceparent, inSpan, linkTo, type Span } from '../runtime/trace-context.ts';

export const MAX_ATTEMPTS = 5;
/** Events applied in one transaction at most. */
export const MAX_BATCH = 128;
/**
 * Batch transactions one consumer has in flight at once (events arriving meanwhile gather for the next):
 * with two, one worker drained below the accept rate. Batches hold one tenant's events each (a message
 * names its tenant), up to this many of one tenant and of all together.
 */
const BATCHES_IN_FLIGHT = 4;

/** 'behind': not applied, as an event about the same object accepted earlier is still to apply (afterPredecessors). */
type Result = 'processed' | 'ignored' | 'already_done' | 'behind';
/** An event a batch did not apply: 'alone' to be applied on its own, 'pending' once its accept has ended. */
type BatchResult = Result | 'alone' | 'pending';
/** One event of a message, with the lock of the transaction that stored it, if the message names one. */
export interface EventRef {
  id: string;
  lock?: number;
}

/** The tenant a message names, or '' when it names none (or a malformed one). */
const tenantOf = (m: InboxMessage): string => (typeof m.tenant === 'string' && m.tenant.length <= 64 ? m.tenant : '');

/** The events a message names; a malformed lock is no lock. */
export function eventsOf(m: InboxMessage): EventRef[] {
  const ids = Array.isArray(m.ids) ? m.ids : typeof m.id === 'string' ? [m.id] : [];
  const lock = Number.isInteger(m.lock) && m.lock! >= -(2 ** 31) && m.lock! < 2 ** 31 ? m.lock : undefined;
  return ids.filter((id): id is string => typeof id === 'string').map((id) => (lock === undefined ? { id } : { id, lock }));
}

interface Row {
  id: string;
  tenant_id: string;
  provider: string;
  event_type: string;
  body: string;
  status: string;
  received_at: Date;
  trace_context: string | null;
}
const ROW_COLUMNS = 'id, tenant_id, provider, event_type, body, status::text AS status, received_at, trace_context';

/**
 * The earliest event still to apply about the same object as `e` (the inbox row aliased `e`) and accepted
 * before it, if any: what `e` waits behind (docs/inbound-webhooks.md, "Order"). Read by the partial index
 * of events still to apply.
 */
const earliestBefore = (e: string, andAlso = '') =>
  `(SELECT b.id FROM inbox_events b WHERE ${e}.order_key IS NOT NULL AND b.tenant_id = ${e}.tenant_id AND b.order_key = ${e}.order_key
      AND b.status = 'received' AND b.seq < ${e}.seq ${andAlso} ORDER BY b.seq LIMIT 1)`;
/**
 * How long a message whose events wait behind earlier ones keeps trying them again (a batch each time,
 * which applies the earlier ones first if no one else holds them) before it is retried through the queue;
 * the waits between tries double from BEHIND_FIRST_WAIT_MS. No connection is held while waiting: what
 * an event waits behind is usually a batch about to commit, sometimes an event failing and retried alone.
 */
const BEHIND_WAIT_MS = 10_000;
const BEHIND_FIRST_WAIT_MS = 20;

/** An event waited behind an earlier one about the same object for BEHIND_WAIT_MS: its message is retried. */
class EventBehind extends Error {}

/**
 * The earliest earlier events still to apply that these events wait behind and that have not been tried
 * on their own yet (after a batch that pulled them in failed): tried alone next, so that one failing is
 * counted and no longer pulled into the batches of the events after it.
 */
async function untriedBlockers(pool: pg.Pool, ids: string[]): Promise<string[]> {
  const { rows } = await pool.query<{ id: string }>(
    `SELECT id FROM inbox_events WHERE attempts = 0 AND id IN (SELECT ${earliestBefore('e')} FROM inbox_events e WHERE e.id = ANY($1::uuid[]))`,
    [ids],
  );
  return rows.map((r) => r.id);
}

/**
 * How long a worker waits for the transaction storing a message's events (below). That transaction is one
 * statement sent with its commit and never waits for its process (inbox.ts), so a retry soon finds it over.
 */
export const ACCEPT_WAIT_MS = 3000;

/** The transaction storing a message's events was still open after ACCEPT_WAIT_MS: the message is retried. */
export class AcceptPending extends Error {}

/**
 * A message can arrive before its rows are committed (inbox.ts publishes once the storing transaction
 * holds its lock, while its INSERT runs and commits): the
 * accepting transaction holds the lock the message names until it ends; once that lock is granted the
 * rows are committed, or were rolled back and will never be. A batch only tries the lock (it never
 * waits on an accept) and leaves the events of an accept still open 'pending'; those are waited for
 * here, outside any transaction (shared, so consumers do not wait on each other). The wait is bounded
 * and holds no other lock: past it the message is retried later, never acknowledged, since its rows
 * may still commit.
 */
async function awaitAccepting(pool: pg.Pool, events: EventRef[]): Promise<void> {
  const lock = events.find((e) => e.lock !== undefined)?.lock;
  if (lock === undefined) return;
  try {
    await inTransaction(pool, async (sql) => {
      await sql.query(`SET LOCAL lock_timeout = ${ACCEPT_WAIT_MS}`);
      await sql.query('SELECT 1 AS free FROM (SELECT pg_advisory_xact_lock_shared($1::int, $2::int)) AS l', [ACCEPT_LOCK_SPACE, lock]);
    });
  } catch (err) {
    if (pgCode(err) === PG.lockNotAvailable) throw new AcceptPending(`the transaction storing inbound events (lock ${lock}) is still open`);
    throw err;
  }
}

/**
 * The locks of the events about to be applied, in the order every writer takes them (docs/concurrency.md):
 * first their tenants' locks, shared, then the locks of every provider object they may change.
 */
async function lockFor(sql: Sql, events: StoredEvent[]): Promise<void> {
  const objects: string[] = [];
  for (const e of events) {
    const objectsOf = isProvider(e.provider) ? PROVIDER_SPECS[e.provider].objectsOf : undefined;
    for (const key of objectsOf?.(e) ?? []) objects.push(`${e.tenantId}:${key}`);
  }
  await lockTenants(
    sql,
    [...new Set(events.map((e) => e.tenantId))].map((tenantId) => ({ tenantId, exclusive: false })),
  );
  await lockObjects(sql, objects);
}

/** A stored row as its normalizer reads it. */
const storedEvent = (row: Row): StoredEvent => ({
  id: row.id,
  tenantId: row.tenant_id,
  provider: row.provider,
  eventType: row.event_type,
  body: parseEventJson(row.body),
  receivedAt: row.received_at,
});

/** What a stored event asks of the domain, as its provider's normalizer reads it (nothing for an unknown provider). */
const commandsOf = (event: StoredEvent): InboundCommand[] =>
  isProvider(event.provider) ? PROVIDER_SPECS[event.provider].normalize(event) : [];

/**
 * Applies one locked, received event's commands (read by `commandsOf` beforehand when the batch planned
 * its segments); its outbox events go to `outbox`.
 */
async function apply(
  sql: Sql,
  event: StoredEvent,
  outbox: OutboxInput[],
  read: InboundCommand[] = commandsOf(event),
  segment?: InvoiceSegment,
): Promise<'processed' | 'ignored'> {
  const complete = isProvider(event.provider) ? PROVIDER_SPECS[event.provider].complete : undefined;
  const commands = complete ? await complete(sql, event, read) : read;
  return applyCommands({ sql, event, outbox }, commands, segment);
}

/**
 * `apply` in a span of the trace the event arrived in (its stored traceparent; with none, of the active
 * trace), linked to the batch applying it; the outbox events it emits keep that span's context, which
 * their deliveries continue.
 */
async function applyTraced(
  sql: Sql,
  event: StoredEvent,
  traceContext: string | null,
  outbox: OutboxInput[],
  planned?: { commands: InboundCommand[]; segment?: InvoiceSegment },
  batch?: Span,
): Promise<'processed' | 'ignored'> {
  const batchLink = batch?.isRecording() ? [{ context: batch.spanContext() }] : [];
  return inSpan(
    'inbox.apply',
    {
      parent: contextOf(traceContext),
      links: batchLink,
      attributes: {
        'tenant.id': event.tenantId,
        'chs.inbox_event.id': event.id,
        'chs.provider': event.provider,
        'chs.event_type': event.eventType,
      },
    },
    async (span) => {
      const from = outbox.length;
      const outcome = await apply(sql, event, outbox, planned?.commands, planned?.segment);
      span.setAttribute('chs.outcome', outcome);
      const emittedUnder = currentTraceparent();
      if (emittedUnder) for (let i = from; i < outbox.length; i++) outbox[i]!.traceContext = emittedUnder;
      return outcome;
    },
  );
}

// The commit does not wait for the disk: the event itself was stored durably on acceptance, so a crash
// of PostgreSQL that loses this transaction loses all of it (effects and status, never half), leaving the
// event 'received' with its message acked; the inbox sweep publishes such an event again once its
// publish is stale (Inbox.sweep). Waiting for the disk per transaction capped one worker below the accept rate.
// Generic plans: statements over arrays of varying length (a wave of invoice transitions,
// services/billing-commands.ts) were otherwise planned anew whenever their arrays were short, which cost
// PostgreSQL more than running them; the other statements of applying events look rows up by key or by a tenant's recent rows, for which the
// generic plan is the plan PostgreSQL settles on anyway.
const APPLY_TRANSACTION = { synchronousCommit: false, genericPlans: true };

/**
 * Applies one stored event in one transaction: the domain change, its signals, its outbox events and
 * the inbox row's new status commit together, and the message is acked only after that commit. The
 * row lock makes a redelivered message wait, then find the event done: processing is idempotent.
 */
export async function processInboxEvent(pool: pg.Pool, id: string, opts: { ifFree?: boolean } = {}): Promise<Result> {
  const result = await inTransaction(
    pool,
    async (sql) => {
      const [row] = await sql.query<Row & { behind: string | null }>(
        `SELECT ${ROW_COLUMNS}, ${earliestBefore('i')} AS behind FROM inbox_events i WHERE id = $1 FOR UPDATE OF i${opts.ifFree ? ' SKIP LOCKED' : ''}`,
        [id],
      );
      // Not found: done, or (ifFree) held by a transaction applying it.
      if (!row || row.status !== 'received') return 'already_done';
      // Applied on its own, an event never applies another: one about its object accepted earlier goes first.
      if (row.behind !== null) return 'behind';
      const event = storedEvent(row);
      await lockFor(sql, [event]);
      const outbox: OutboxInput[] = [];
      const outcome = await applyTraced(sql, event, row.trace_context, outbox);
      await enqueueEvents(sql, outbox);
      await markApplied(sql, [{ id, outcome }]);
      return outcome;
    },
    APPLY_TRANSACTION,
  );
  // Counted once committed: a transaction rolled back applied nothing.
  if (result === 'processed' || result === 'ignored') inboundApplied.inc({ outcome: result });
  return result;
}

/**
 * Applies a batch of events in one transaction: those whose accepting transaction is still open are
 * left 'pending' (a batch never waits on an accept, see awaitAccepting); the others' rows are locked
 * by one statement, with the earlier events still to apply about the same objects, then the locks of
 * their tenants and of the objects they may change (lockFor), each event's commands applied in turn (in the
 * order accepted, `seq`; consecutive invoice transitions are applied together, as they would be in turn:
 * services/inbound-commands.ts `planSegments`), their outbox events written and their statuses set by one statement each, one commit. Any failure
 * rolls the whole batch back and throws; the caller then applies each event on its own, so one bad event
 * never holds back the others. Answers each id's result: 'behind' for an event an earlier one about its
 * object still waits before, 'alone' for one this batch could not lock (another transaction holds its
 * row, or its row is not there): those are applied on their own, where a held row is waited for.
 */
export function processInboxBatch(pool: pg.Pool, messages: EventRef[]): Promise<Map<string, BatchResult>> {
  return inSpan('inbox.apply_batch', { attributes: { 'chs.batch.size': messages.length } }, (span) => applyBatch(pool, messages, span));
}

async function applyBatch(pool: pg.Pool, messages: EventRef[], span: Span): Promise<Map<string, BatchResult>> {
  const results = await inTransaction(
    pool,
    async (sql) => {
      const results = new Map<string, BatchResult>(messages.map((m) => [m.id, 'alone']));
      // Tried before the rows are read, so the rows of an accept that has ended are visible to the next statement.
      const locks = [...new Set(messages.flatMap((m) => (m.lock === undefined ? [] : [m.lock])))];
      const open = new Set<number>();
      if (locks.length > 0) {
        const tried = await sql.query<{ k: number; free: boolean }>(
          'SELECT k, pg_try_advisory_xact_lock_shared($1::int, k) AS free FROM unnest($2::int[]) AS k',
          [ACCEPT_LOCK_SPACE, locks],
        );
        for (const r of tried) if (!r.free) open.add(r.k);
      }
      const ready = messages.filter((m) => m.lock === undefined || !open.has(m.lock));
      for (const m of messages) if (m.lock !== undefined && open.has(m.lock)) results.set(m.id, 'pending');
      const ids = [...new Set(ready.map((m) => m.id))];
      // Only rows still to apply are locked (with SKIP LOCKED, so never waited for): a row already applied,
      // named again by a repeated message, is left to whoever needs it (an erasure emptying its body).
      // With them, the events still to apply about the same objects and accepted before them, so that an
      // object's events are applied in the order they were accepted whatever order their messages come in
      // (their own messages then find them done); but not one that failed before, which is retried alone and
      // waited for; at most MAX_BATCH of them. An event is left 'behind' while an earlier one about its
      // object is still to apply and not in this batch (held by another transaction, failed before, or past
      // that bound).
      // Each step by its index, by id or by object, never by status: the plan is generic (APPLY_TRANSACTION), and an
      // index over the status would lead it through every event still to apply, a whole backlog.
      const rows = await sql.query<Row & { behind: string | null; order_key: string | null }>(
        `WITH named AS (
           SELECT tenant_id, order_key, max(seq) AS upto FROM inbox_events
           WHERE id = ANY($1::uuid[]) AND order_key IS NOT NULL GROUP BY tenant_id, order_key),
         earlier AS (
           SELECT p.id FROM named n CROSS JOIN LATERAL (
             SELECT id, seq FROM inbox_events e
             WHERE e.tenant_id = n.tenant_id AND e.order_key = n.order_key AND e.status = 'received' AND e.seq < n.upto AND e.attempts = 0
             ORDER BY e.seq LIMIT ${MAX_BATCH}) p
           ORDER BY p.seq LIMIT ${MAX_BATCH}),
         locked AS (
           SELECT ${ROW_COLUMNS}, order_key, seq FROM inbox_events
           WHERE id IN (SELECT unnest($1::uuid[]) UNION SELECT id FROM earlier) AND status = 'received'
           FOR UPDATE SKIP LOCKED)
         SELECT l.*, ${earliestBefore('l', 'AND b.id NOT IN (SELECT id FROM locked)')} AS behind
         FROM locked l ORDER BY l.seq`,
        [ids],
      );
      const named = new Set(ids);
      if (rows.filter((r) => named.has(r.id)).length < ids.length) {
        const taken = new Set(rows.map((r) => r.id));
        const done = await sql.query<{ id: string }>(`SELECT id FROM inbox_events WHERE id = ANY($1::uuid[]) AND status <> 'received'`, [
          ids.filter((id) => !taken.has(id)),
        ]);
        for (const { id } of done) results.set(id, 'already_done');
      }
      // In the order they were accepted (seq; a group's events are numbered in its order, inbox.ts). What
      // waits behind an earlier event waits for it with everything after it about the same object.
      const applied = rows.filter((r) => r.behind === null);
      for (const r of rows) if (r.behind !== null) results.set(r.id, 'behind');
      // An event whose numbers are out of range (stored before acceptance refused such events) would fail the
      // whole batch: it is applied on its own, where it fails alone, and its object's later events wait for it.
      const refusedObjects = new Set<string>();
      const events: StoredEvent[] = [];
      const traceOf = new Map<string, string | null>();
      for (const r of applied) {
        traceOf.set(r.id, r.trace_context);
        const rangeErrors = isProvider(r.provider) ? PROVIDER_SPECS[r.provider].rangeErrors : undefined;
        const object = r.order_key === null ? null : `${r.tenant_id}:${r.order_key}`;
        const event = storedEvent(r);
        if (object !== null && refusedObjects.has(object)) results.set(r.id, 'behind');
        else if (rangeErrors && rangeErrors(event.body).length > 0) {
          results.set(r.id, 'alone');
          if (object !== null) refusedObjects.add(object);
        } else events.push(event);
      }
      // The batch's span links to the trace of every event it applies; each event's own span is in its trace.
      if (span.isRecording()) span.addLinks(events.flatMap((e) => linkTo(traceOf.get(e.id)) ?? []));
      await lockFor(sql, events);
      // Read once: the commands plan the batch's invoice segments, then are applied.
      const read = events.map((e) => ({ id: e.id, commands: commandsOf(e) }));
      const segments = planSegments(read);
      const outbox: OutboxInput[] = [];
      const done: { id: string; outcome: 'processed' | 'ignored' }[] = [];
      for (const [i, event] of events.entries()) {
        const planned = { commands: read[i]!.commands, segment: segments.get(event.id) };
        const outcome = await applyTraced(sql, event, traceOf.get(event.id) ?? null, outbox, planned, span);
        done.push({ id: event.id, outcome });
        results.set(event.id, outcome);
      }
      await enqueueEvents(sql, outbox);
      await markApplied(sql, done);
      return results;
    },
    APPLY_TRANSACTION,
  );
  let processed = 0;
  let ignored = 0;
  for (const r of results.values()) {
    if (r === 'processed') processed++;
    else if (r === 'ignored') ignored++;
  }
  if (processed) inboundApplied.inc({ outcome: 'processed' }, processed);
  if (ignored) inboundApplied.inc({ outcome: 'ignored' }, ignored);
  return results;
}

export function startInboxConsumer(
  pool: pg.Pool,
  queue: Queue,
  opts: { prefetch: number; log: { error: (o: object, m: string) => void; warn: (o: object, m: string) => void } },
): Consumer {
  const alone = async (m: EventRef, attempt: number, ifFree = false): Promise<Result> => {
    try {
      return await processInboxEvent(pool, m.id, { ifFree });
    } catch (err) {
      opts.log.error({ err, inboxEventId: m.id, attempt }, 'inbound event failed; it will be retried');
      inboundApplied.inc({ outcome: 'failed' });
      await recordFailedAttempt(onPg(pool), m.id, err).catch(() => {});
      throw err;
    }
  };
  // Messages in flight gather into batches (runtime/natural-batches.ts); each message's handler resolves (is acked) only
  // once its events' transactions committed, and rejects (is retried) only for its own events' failure.
  // A message's events go into one batch whole, never split across two: batches run side by side, so the
  // events of one group split between two would no longer be applied in the order they were accepted. A
  // message larger than a batch (a group holds up to 200 events) runs as a batch of its own.
  type Answer = { failed?: unknown; pending?: true; behind?: true };
  const batches = createNaturalBatches<EventRef[], Answer[]>({
    maxRunning: BATCHES_IN_FLIGHT,
    maxRunningTotal: BATCHES_IN_FLIGHT,
    maxCount: MAX_BATCH,
    maxBytes: MAX_BATCH,
    sizeOf: (events) => events.length,
    run: async (groups) => {
      const messages = groups.flat();
      // A lone message goes through the batch too: it tries its accept's lock inline rather than waiting
      // for it in a transaction of its own and then being applied in another.
      let results: Map<string, BatchResult> | undefined;
      try {
        results = await processInboxBatch(pool, messages);
      } catch (err) {
        opts.log.warn({ err, events: messages.length }, 'a batch of inbound events failed; applying each on its own');
      }
      const answers: Answer[] = [];
      for (const m of messages) {
        const r = results?.get(m.id);
        // Not known to be past its accept: waited for by its message's handler, outside this run.
        if (r === 'pending' || (results === undefined && m.lock !== undefined)) answers.push({ pending: true });
        else if (r === 'behind') answers.push({ behind: true });
        else if (r !== undefined && r !== 'alone') answers.push({});
        else
          answers.push(
            await alone(m, 1).then(
              (r): Answer => (r === 'behind' ? { behind: true } : {}),
              (failed: unknown) => ({ failed }),
            ),
          );
      }
      let at = 0;
      return groups.map((events) => answers.slice(at, (at += events.length)));
    },
  });
  /**
   * Events that wait behind an earlier event about their object go into a batch again, after a wait that
   * doubles each time (no connection held meanwhile), until none waits; after BEHIND_WAIT_MS the message
   * is retried through the queue. An earlier event a failed batch had pulled in, never tried on its own, is
   * tried alone first, so that if it fails it is counted and the next batch leaves it to its own retries.
   * Answers the first failure, if any.
   */
  const afterPredecessors = async (key: string, behind: EventRef[]): Promise<unknown> => {
    let failed: unknown;
    const started = Date.now();
    for (let wait = BEHIND_FIRST_WAIT_MS; behind.length > 0; wait = Math.min(wait * 2, 1000)) {
      if (Date.now() - started > BEHIND_WAIT_MS)
        throw new EventBehind(`${behind.length} inbound event(s) still wait behind earlier events about the same objects`);
      await new Promise((r) => setTimeout(r, wait));
      for (const id of await untriedBlockers(
        pool,
        behind.map((e) => e.id),
      ))
        await alone({ id }, 1, true).catch(() => {});
      const again = await batches.add(
        key,
        behind.map((e) => ({ id: e.id })),
      );
      failed ??= again.find((r) => r.failed)?.failed;
      behind = behind.filter((_, i) => again[i]!.behind);
    }
    return failed;
  };
  return queue.consume<InboxMessage>(
    'inbound.events',
    async ({ body, attempt }) => {
      const events = eventsOf(body);
      const key = tenantOf(body);
      const accepted = async (pending: EventRef[]) => {
        try {
          await awaitAccepting(pool, pending);
        } catch (err) {
          if (err instanceof AcceptPending)
            opts.log.warn({ err, attempt }, 'inbound events not yet committed; the message will be retried');
          throw err;
        }
      };
      // A message that failed before is applied event by event, so a bad event cannot fail a batch twice;
      // those already applied find their work done.
      if (attempt > 1) {
        await accepted(events);
        let failed: unknown;
        const behind: EventRef[] = [];
        for (const e of events) {
          const r = await alone(e, attempt).catch((err: unknown) => void (failed ??= err));
          if (r === 'behind') behind.push(e);
        }
        // An event of its own failed: retried as a whole, the events behind it with it (they may wait for it).
        if (failed) throw failed;
        const after = await afterPredecessors(key, behind);
        if (after) throw after;
        return;
      }
      if (events.length === 0) return;
      // One tenant per batch: a batch then holds one tenant's lock, so a transaction waiting for a tenant's
      // lock exclusively (an erasure, say) waits for that tenant's batches only, not for batches of other
      // tenants that wait in turn. Messages naming no tenant (the sweeper's) go in batches of their own.
      const results = await batches.add(key, events);
      let failed = results.find((r) => r.failed)?.failed;
      const behind = events.filter((_, i) => results[i]!.behind);
      const pending = events.filter((_, i) => results[i]!.pending);
      if (pending.length > 0) {
        await accepted(pending);
        // Their accept has ended: their rows are there, or will never be.
        const again = await batches.add(
          key,
          pending.map((e) => ({ id: e.id })),
        );
        failed ??= again.find((r) => r.failed)?.failed;
        behind.push(...pending.filter((_, i) => again[i]!.behind));
      }
      if (failed) throw failed;
      failed = await afterPredecessors(key, behind);
      if (failed) throw failed;
    },
    {
      prefetch: opts.prefetch,
      maxAttempts: MAX_ATTEMPTS,
      // Parked for a human: an event that failed itself stays in the inbox with its error, marked failed.
      // One that never failed (it only waited behind an earlier event about its object, or its message did)
      // is not parked: it stays to apply, handed back to the sweeper, which publishes it again in seconds.
      onDead: async (b) => {
        await parkOrHandBack(
          onPg(pool),
          eventsOf(b as InboxMessage).map((e) => e.id),
        );
      },
    },
  );
}
