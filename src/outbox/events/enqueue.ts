import type { Sql } from '../../db/sql.ts';
import { currentTraceparent } from '../../runtime/trace-context.ts';
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
    /** The W3C traceparent of the work emitting the event (tracing on): its deliveries join that trace. */
    traceContext?: string | null;
  };
}[EventName];

/**
 * Writes events for the tenant's endpoints in the caller's transaction, so an event exists exactly when
 * the change it describes was committed, each with its row in outbox_pending (written by the table's
 * trigger) until the relay fans it out to endpoints (relay.ts).
 *
 * Each new event is numbered among the tenant's events of its sequence subject (registry.ts) from the
 * subject's counter row in outbox_sequences, in this transaction: a rollback gives the numbers back, so
 * the numbers of a subject have no gap, and the counter's row lock makes the events of one subject commit
 * in number order. A duplicate (its dedup key already written, or twice in `events`) takes no number.
 *
 * One statement: the counters, upserted in (tenant, subject) order, then the events, written once with
 * their numbers; the unique index on the dedup key decides what is a duplicate (ON CONFLICT, whatever
 * plan the statement has). A duplicate is rare (writing the same event twice), and it took a number it
 * did not use: only then a second step closes the gap, moving the subject's later events of this call
 * down one by one (the numbers above the counter's old value are this transaction's alone while it holds
 * the counter) and setting the counter to the last one used. The counters are THE LAST LOCK of the
 * caller's transaction (docs/concurrency.md, step 15): the caller changes every row it is going to change
 * first and calls this once, at its end. The insert after them waits on a unique key only for a
 * transaction writing the same dedup key, and those are already ordered by an earlier step (the same
 * object, the same customer). A caller that cannot call it last (a customer created, and announced, in the
 * middle of applying inbound events) may call it earlier only for a counter no other transaction can know
 * about yet: that of a customer it has just created.
 */
export async function enqueueEvents(sql: Sql, events: OutboxInput[]): Promise<void> {
  if (events.length === 0) return;
  const rows = await sql.query<{ id: string; tenant_id: string; subject: string; sequence: number; written: boolean; base: number }>(
    `WITH e AS (
       SELECT DISTINCT ON (e.tenant_id, e.dedup_key) e.*
       FROM unnest($1::uuid[], $2::text[], $3::text[], $4::jsonb[], $5::text[], $6::text[], $8::text[])
         WITH ORDINALITY AS e(tenant_id, type, subject, payload, dedup_key, sequence_subject, trace_context, ord)
       ORDER BY e.tenant_id, e.dedup_key, e.ord),
     counted AS (
       SELECT e.tenant_id, e.sequence_subject, count(*)::int AS n FROM e CROSS JOIN (SELECT pg_notify($7, '')) AS wake
       GROUP BY e.tenant_id, e.sequence_subject),
     counter AS (
       INSERT INTO outbox_sequences AS s (tenant_id, subject, last_sequence)
       SELECT tenant_id, sequence_subject, n FROM counted ORDER BY tenant_id, sequence_subject
       ON CONFLICT (tenant_id, subject) DO UPDATE SET last_sequence = s.last_sequence + excluded.last_sequence
       RETURNING tenant_id, subject, last_sequence),
     numbered AS (
       SELECT e.*, gen_random_uuid() AS id, c.last_sequence - k.n AS base,
              c.last_sequence - k.n + row_number() OVER (PARTITION BY e.tenant_id, e.sequence_subject ORDER BY e.ord) AS sequence
       FROM e
       JOIN counter c ON c.tenant_id = e.tenant_id AND c.subject = e.sequence_subject
       JOIN counted k ON k.tenant_id = e.tenant_id AND k.sequence_subject = e.sequence_subject),
     written AS (
       INSERT INTO outbox_events (id, tenant_id, type, subject, payload, dedup_key, sequence_subject, sequence, trace_context)
       SELECT id, tenant_id, type, subject, payload, dedup_key, sequence_subject, sequence, trace_context FROM numbered ORDER BY ord
       ON CONFLICT (tenant_id, dedup_key) DO NOTHING
       RETURNING id)
     SELECT n.id, n.tenant_id, n.sequence_subject AS subject, n.sequence::int AS sequence, w.id IS NOT NULL AS written, n.base::int AS base
     FROM numbered n LEFT JOIN written w ON w.id = n.id
     WHERE (SELECT count(*) FROM written) < (SELECT count(*) FROM numbered)`,
    [
      events.map((e) => e.tenantId),
      events.map((e) => e.type),
      events.map((e) => e.subject ?? null),
      events.map((e) => JSON.stringify(e.payload)),
      events.map((e) => e.dedupKey),
      events.map((e) => sequenceSubjectOf(e.type, e.payload as never)),
      OUTBOX_CHANNEL,
      events.map((e) => e.traceContext ?? currentTraceparent()),
    ],
  );
  // The NOTIFY (in `counted`) wakes the relay when the transaction commits; polling covers a missed one.
  // Rows come back only when a duplicate took a number: close the gaps it left.
  const bySubject = new Map<string, typeof rows>();
  for (const r of rows) {
    const k = `${r.tenant_id} ${r.subject}`;
    bySubject.set(k, [...(bySubject.get(k) ?? []), r]);
  }
  for (const numbered of bySubject.values()) {
    const kept = numbered.filter((r) => r.written).sort((a, b) => a.sequence - b.sequence);
    if (kept.length === numbered.length) continue;
    const { tenant_id, subject, base } = numbered[0]!;
    // In ascending order, each moves to a number below it that is free: no unique clash on the way.
    for (const [i, r] of kept.entries())
      if (r.sequence !== base + i + 1)
        // Its pending row follows, by the table's trigger.
        await sql.query('UPDATE outbox_events SET sequence = $2 WHERE id = $1', [r.id, base + i + 1]);
    await sql.query('UPDATE outbox_sequences SET last_sequence = $3 WHERE tenant_id = $1 AND subject = $2', [
      tenant_id,
      subject,
      base + kept.length,
    ]);
  }
}

/**
 * Removes the counters of subjects that are gone for good (an erased customer, a deleted endpoint), in the
 * caller's transaction, after its last enqueueEvents: a counter is the last lock (docs/concurrency.md, step
 * 15), and these are taken in subject order too. A counter is never removed while its subject exists, so a
 * subject's numbers never start again at 1; retention removes events, never counters.
 */
export async function forgetSequences(sql: Sql, tenantId: string, subjects: string[]): Promise<void> {
  if (subjects.length === 0) return;
  await sql.query(
    `DELETE FROM outbox_sequences WHERE (tenant_id, subject) IN (
       SELECT tenant_id, subject FROM outbox_sequences WHERE tenant_id = $1 AND subject = ANY($2::text[]) ORDER BY subject FOR UPDATE)
     RETURNING 1`,
    [tenantId, subjects],
  );
}

/**
 * Deletes a customer's events when it is erased: those about it (its subject, or naming it in their payload),
 * with their pending rows (the foreign key's cascade). Answers their ids, for their deliveries.
 */
export async function forgetEventsAbout(sql: Sql, tenantId: string, customerId: string): Promise<string[]> {
  const rows = await sql.query<{ id: string }>(
    `DELETE FROM outbox_events WHERE tenant_id = $1
       AND (subject = $2 OR payload->>'customer_id' = $2 OR (type LIKE 'customer.%' AND payload->>'id' = $2))
     RETURNING id`,
    [tenantId, customerId],
  );
  return rows.map((r) => r.id);
}
