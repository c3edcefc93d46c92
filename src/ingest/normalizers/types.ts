import type { Sql } from '../../db/sql.ts';
import type { OutboxInput } from '../../outbox/events/enqueue.ts';

export interface StoredEvent {
  id: string;
  tenantId: string;
  provider: string;
  eventType: string;
  body: any;
  receivedAt: Date;
}

export interface NormalizeContext {
  /** The event's transaction: everything written here commits with the inbox row's new status. */
  sql: Sql;
  event: StoredEvent;
  /** -1..1 sentiment of a text, from an established library (src/ingest/sentiment.ts). */
  sentiment: (text: string) => number;
  /**
   * Outbox events to send: written by one statement when the transaction's events are all applied (no
   * statement of a normalizer reads them back), in the same transaction.
   */
  outbox: OutboxInput[];
  /** What the provider's `prepare` step found for this event with the rest of its batch, if it ran. */
  prepared?: unknown;
}

/** `processed` when the event changed something, `ignored` for types we keep but do not use. */
export type Outcome = 'processed' | 'ignored';
export type Normalizer = (ctx: NormalizeContext) => Promise<Outcome>;

export const fromUnix = (s: unknown): Date | null => (typeof s === 'number' && Number.isFinite(s) ? new Date(s * 1000) : null);
export const str = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v : typeof v === 'number' ? String(v) : null);
