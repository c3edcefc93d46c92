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
