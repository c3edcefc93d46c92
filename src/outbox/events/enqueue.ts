import { randomUUID } from 'node:crypto';
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

/**
 * Writes events for the tenant's endpoints in the caller's transaction, so an event exists exactly when
 * the change it describes was committed. The relay delivers them (src/outbox). It must be given a
 * transaction: its two statements, the events and then their numbers, commit together.
 *
 * Each new event is numbered among the tenant's events of its sequence subject (registry.ts) from the
 * subject's counter row in outbox_sequences, in this transaction: a rollback gives the numbers back, so
 * the numbers of a subject have no gap, and the counter's row lock makes the events of one subject commit
 * in number order. A duplicate (its dedup key already written) takes no number.
 *
 * The counters are THE LAST LOCK of the caller's transaction (docs/concurrency.md, step 15): the caller
 * changes every row it is going to change first and calls this once, at its end; all the counters it needs
 * are taken here in one statement, in (tenant, subject) order. A caller that cannot (a customer created,
 * and announced, in the middle of applying inbound events) may call it earlier only for a counter no other
 * transaction can know about yet: that of a customer it has just created.
 */
export async function enqueueEvents(sql: Sql, events: OutboxInput[]): Promise<void> {
  if (events.length === 0) return;
  // Ids made here, so the rows the insert kept are known in the order they were given.
  const ids = events.map(() => randomUUID());
  const kept = await sql.query<{ id: string }>(
    `INSERT INTO outbox_events (id, tenant_id, type, subject, payload, dedup_key)
     SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::jsonb[], $6::text[])
     ON CONFLICT (tenant_id, dedup_key) DO NOTHING
     RETURNING id`,
    [
      ids,
      events.map((e) => e.tenantId),
      events.map((e) => e.type),
      events.map((e) => e.subject ?? null),
      events.map((e) => JSON.stringify(e.payload)),
      events.map((e) => e.dedupKey),
    ],
  );
  if (kept.length === 0) return;
  const isKept = new Set(kept.map((r) => r.id));
  const fresh = events.flatMap((e, i) => (isKept.has(ids[i]!) ? [{ id: ids[i]!, e }] : []));
  // One statement: every counter this transaction needs, upserted in (tenant, subject) order, then the new
  // events numbered after their counter's previous value, in the order given. The NOTIFY wakes the relay
  // when the transaction commits (polling covers a missed one); selected around, since a void column is
  // unreadable through Prisma's raw path.
  await sql.query(
    `WITH e AS (
       SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[]) WITH ORDINALITY AS e(id, tenant_id, subject, ord)),
     counted AS (SELECT tenant_id, subject, count(*)::int AS n FROM e GROUP BY tenant_id, subject),
     counter AS (
       INSERT INTO outbox_sequences AS s (tenant_id, subject, last_sequence)
       SELECT tenant_id, subject, n FROM counted ORDER BY tenant_id, subject
       ON CONFLICT (tenant_id, subject) DO UPDATE SET last_sequence = s.last_sequence + excluded.last_sequence
       RETURNING tenant_id, subject, last_sequence),
     numbered AS (
       SELECT e.id, e.subject,
              c.last_sequence - k.n + row_number() OVER (PARTITION BY e.tenant_id, e.subject ORDER BY e.ord) AS sequence
       FROM e JOIN counter c USING (tenant_id, subject) JOIN counted k USING (tenant_id, subject)),
     written AS (
       UPDATE outbox_events o SET sequence_subject = n.subject, sequence = n.sequence FROM numbered n WHERE o.id = n.id RETURNING 1)
     SELECT 1 AS notified FROM (SELECT pg_notify($4, '')) AS n`,
    [
      fresh.map((f) => f.id),
      fresh.map((f) => f.e.tenantId),
      fresh.map((f) => sequenceSubjectOf(f.e.type, f.e.payload as never)),
      OUTBOX_CHANNEL,
    ],
  );
}
