import type { Sql } from '../../db/sql.ts';
import { sequenceSubjectOf, type EventName, type PayloadOf } from './registry.ts';

/** The channel the relay LISTENs on for new outbox events. */
export const OUTBOX_CHANNEL = 'chs_outbox';

/** An event to send: its type names an entry of the registry (src/outbox/events.ts) and its payload has that entry's shape. */
export type OutboxInput = {
  [N in EventName]: {
    tenantId: string;
    type: N;
    subject?: string | null;
    payload: PayloadOf<N>;
    /** Writing the same event twice (a redelivered message, a retried job) stays one event. */
    dedupKey: string;
  };
}[EventName];

/** An event took a number but was not written: another transaction wrote its dedup key meanwhile. */
export class OutboxNumberingRace extends Error {}

/**
 * Writes events for the tenant's endpoints in the caller's transaction, so an event exists exactly when
 * the change it describes was committed. The relay delivers them (src/outbox).
 *
 * Each new event is numbered among the tenant's events of its sequence subject (registry.ts) from the
 * subject's counter row in outbox_sequences, in this transaction: a rollback gives the numbers back, so
 * the numbers of a subject have no gap, and the counter's row lock makes the events of one subject commit
 * in number order. A duplicate (its dedup key already written, or twice in `events`) takes no number.
 *
 * One statement: the counters, upserted in (tenant, subject) order, then the events, written once with
 * their numbers. The counters are THE LAST LOCK of the caller's transaction (docs/concurrency.md, step 15):
 * the caller changes every row it is going to change first and calls this once, at its end. The insert
 * after them waits on a unique key only for a transaction writing the same dedup key, and those are
 * already ordered by an earlier step (the same object, the same customer), so the later one's statement
 * sees the earlier one's row and skips it. Should that ever not hold, the numbers would have a gap: the
 * statement then fails and the caller's transaction is rolled back (OutboxNumberingRace) rather than
 * commit one. A caller that cannot call it last (a customer created, and announced, in the middle of
 * applying inbound events) may call it earlier only for a counter no other transaction can know about
 * yet: that of a customer it has just created.
 */
export async function enqueueEvents(sql: Sql, events: OutboxInput[]): Promise<void> {
  if (events.length === 0) return;
  const [counts] = await sql.query<{ numbered: number; written: number }>(
    `WITH e AS (
       SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::jsonb[], $5::text[], $6::text[])
         WITH ORDINALITY AS e(tenant_id, type, subject, payload, dedup_key, sequence_subject, ord)),
     fresh AS (
       SELECT DISTINCT ON (e.tenant_id, e.dedup_key) e.* FROM e
       WHERE NOT EXISTS (SELECT 1 FROM outbox_events o WHERE o.tenant_id = e.tenant_id AND o.dedup_key = e.dedup_key)
       ORDER BY e.tenant_id, e.dedup_key, e.ord),
     counted AS (SELECT tenant_id, sequence_subject, count(*)::int AS n FROM fresh GROUP BY tenant_id, sequence_subject),
     counter AS (
       INSERT INTO outbox_sequences AS s (tenant_id, subject, last_sequence)
       SELECT tenant_id, sequence_subject, n FROM counted ORDER BY tenant_id, sequence_subject
       ON CONFLICT (tenant_id, subject) DO UPDATE SET last_sequence = s.last_sequence + excluded.last_sequence
       RETURNING tenant_id, subject, last_sequence),
     numbered AS (
       SELECT f.*, c.last_sequence - k.n + row_number() OVER (PARTITION BY f.tenant_id, f.sequence_subject ORDER BY f.ord) AS sequence
       FROM fresh f
       JOIN counter c ON c.tenant_id = f.tenant_id AND c.subject = f.sequence_subject
       JOIN counted k ON k.tenant_id = f.tenant_id AND k.sequence_subject = f.sequence_subject),
     written AS (
       INSERT INTO outbox_events (id, tenant_id, type, subject, payload, dedup_key, sequence_subject, sequence)
       SELECT gen_random_uuid(), tenant_id, type, subject, payload, dedup_key, sequence_subject, sequence FROM numbered ORDER BY ord
       ON CONFLICT (tenant_id, dedup_key) DO NOTHING
       RETURNING 1)
     SELECT (SELECT count(*) FROM numbered)::int AS numbered, (SELECT count(*) FROM written)::int AS written,
            (SELECT 1 FROM (SELECT pg_notify($7, '')) AS n) AS notified`,
    [
      events.map((e) => e.tenantId),
      events.map((e) => e.type),
      events.map((e) => e.subject ?? null),
      events.map((e) => JSON.stringify(e.payload)),
      events.map((e) => e.dedupKey),
      events.map((e) => sequenceSubjectOf(e.type, e.payload as never)),
      OUTBOX_CHANNEL,
    ],
  );
  // The NOTIFY above wakes the relay when the transaction commits; polling covers a missed one.
  if (counts!.written !== counts!.numbered)
    throw new OutboxNumberingRace(
      `${counts!.numbered - counts!.written} outbound event(s) numbered but written meanwhile by another transaction`,
    );
}
