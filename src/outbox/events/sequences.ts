import type { Sql } from '../../db/sql.ts';

// Where a subject's numbering stands, for readers. The counters (outbox_sequences) are written by enqueue.ts
// alone: their increment, in the statement that writes the events, and their removal.

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
