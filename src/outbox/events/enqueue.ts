import type { Sql } from '../../db/sql.ts';
import type { EventName, PayloadOf } from './registry.ts';

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
 * the change it describes was committed. The relay delivers them (src/outbox).
 */
export async function enqueueEvents(sql: Sql, events: OutboxInput[]): Promise<void> {
  if (events.length === 0) return;
  await sql.query(
    `INSERT INTO outbox_events (id, tenant_id, type, subject, payload, dedup_key)
     SELECT gen_random_uuid(), * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::jsonb[], $5::text[])
     ON CONFLICT (tenant_id, dedup_key) DO NOTHING`,
    [
      events.map((e) => e.tenantId),
      events.map((e) => e.type),
      events.map((e) => e.subject ?? null),
      events.map((e) => JSON.stringify(e.payload)),
      events.map((e) => e.dedupKey),
    ],
  );
  // Wakes the relay when the transaction commits; polling covers a missed notification.
  // Selected around, since a void column is unreadable through Prisma's raw path.
  await sql.query('SELECT 1 AS notified FROM (SELECT pg_notify($1, $2)) AS n', [OUTBOX_CHANNEL, '']);
}
