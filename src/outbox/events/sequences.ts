import type { Sql } from '../../db/sql.ts';

// The sequence counters (outbox_sequences) besides their increment, which is enqueueEvents' (enqueue.ts).

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

export interface SequenceBounds {
  /** The lowest number among the subject's events still kept; null when none is. */
  firstAvailable: number | null;
  /** The last number given under the subject (its counter, or its newest kept event once the counter is gone); null when none was. */
  last: number | null;
}

/** Where a subject's numbering stands, for a reader catching up: what is kept, and how far it went. */
export async function sequenceBounds(sql: Sql, tenantId: string, subject: string): Promise<SequenceBounds> {
  const [row] = await sql.query<{ first_available: number | null; last: number | null }>(
    `SELECT (SELECT min(sequence) FROM outbox_events WHERE tenant_id = $1 AND sequence_subject = $2) AS first_available,
            greatest((SELECT last_sequence FROM outbox_sequences WHERE tenant_id = $1 AND subject = $2),
                     (SELECT max(sequence) FROM outbox_events WHERE tenant_id = $1 AND sequence_subject = $2)) AS last`,
    [tenantId, subject],
  );
  return { firstAvailable: row?.first_available ?? null, last: row?.last ?? null };
}
