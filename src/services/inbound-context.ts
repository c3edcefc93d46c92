import type { Sql } from '../db/sql.ts';
import type { OutboxInput } from '../outbox/events/enqueue.ts';

/** The event being applied: its commands' writes commit with its inbox row, its outbound events go to `outbox`. */
export interface ApplyContext {
  sql: Sql;
  event: { id: string; tenantId: string; provider: string; receivedAt: Date };
  /** Written by one statement once the transaction's events are all applied (nothing here reads them back). */
  outbox: OutboxInput[];
}

/** `processed` when the event changed something, `ignored` for events that ask nothing or nothing that applies. */
export type Outcome = 'processed' | 'ignored';
