import { createHash } from 'node:crypto';
import type pg from 'pg';
import { onPg } from '../db/sql.ts';
import { DomainError } from '../errors.ts';
import { publishIds } from '../queue/publish-ids.ts';
import type { Queue } from '../queue/queue.ts';

export interface InboxMessage {
  id: string;
}

export interface Inbox {
  /**
   * Stores the raw event once per dedup key, and, when `hashBody` is set, once per body for
   * BODY_DEDUP_DAYS; then publishes it with a confirm.
   */
  accept(e: {
    tenantId: string;
    provider: string;
    dedupKey: string;
    eventType: string;
    rawBody: Buffer;
    hashBody?: boolean;
  }): Promise<{ id: string; duplicate: boolean }>;
  /** Publishes what was stored but never confirmed (broker down, process killed); safe on several workers. */
  sweep(opts?: { olderThanMs?: number; staleAfterMs?: number; limit?: number }): Promise<number>;
  close(): Promise<void>;
}

/** How long a body counts as already seen, where the provider's dedup key is not signed (docs/inbound-webhooks.md). */
export const BODY_DEDUP_DAYS = 7;
/** How long an inbound request waits for the broker's confirm before answering (the event is stored already). */
const ACCEPT_CONFIRM_TIMEOUT_MS = 1000;
/** After a failed publish, how long accepted events skip publishing and leave it to the sweeper. */
const BROKER_DOWN_HOLD_MS = 5000;

export function createInbox(pool: pg.Pool, queue: Queue, log: { warn: (o: object, m: string) => void }): Inbox {
  const sql = onPg(pool);
  // A circuit breaker: while the broker is known to be down, a request does not wait on it at all.
  // The sweeper's first successful publish closes it again.
  let brokerDownUntil = 0;
  const brokerDown = () => !queue.connected() || Date.now() < brokerDownUntil;
  // Confirmed publishes are recorded in batches: one UPDATE for many events, off the request path.
  const confirmed: string[] = [];
  let flushing: Promise<void> | null = null;
  const flush = async () => {
    while (confirmed.length) {
      const ids = confirmed.splice(0, 1000);
      await pool
        .query('UPDATE inbox_events SET published_at = now() WHERE id = ANY($1::uuid[]) AND published_at IS NULL', [ids])
        .catch((err) => log.warn({ err }, 'could not record published inbox events; the sweeper will publish them again'));
    }
    flushing = null;
  };
  const markPublished = (id: string) => {
    confirmed.push(id);
    flushing ??= new Promise((r) => setTimeout(r, 20)).then(flush);
  };

  return {
    async accept({ tenantId, provider, dedupKey, eventType, rawBody, hashBody = false }) {
      const bodyHash = createHash('sha256').update(rawBody).digest('hex');
      // Providers that give an event no id of its own are keyed by the bytes they signed.
      const key = dedupKey || `sha256:${bodyHash}`;
      const insert = () =>
        sql.query<{ id: string }>(
          `INSERT INTO inbox_events (id, tenant_id, provider, dedup_key, event_type, body, body_sha256)
           VALUES (gen_random_uuid(), $1, $2, $3, $4, $5, $6)
           ON CONFLICT DO NOTHING
           RETURNING id`,
          [tenantId, provider, key, eventType.slice(0, 200), rawBody.toString('utf8'), hashBody ? bodyHash : null],
        );
      // Both unique indexes decide, so two concurrent copies cannot both get in (no check-then-insert).
      let inserted = await insert();
      // The conflicting copy can be removed between the two statements (retention): then insert again.
      for (let attempt = 0; inserted.length === 0 && attempt < 3; attempt++) {
        const [seen] = await sql.query<{ id: string; by_key: boolean; expired: boolean }>(
          `SELECT id, dedup_key = $3 AS by_key, received_at < now() - make_interval(days => $5) AS expired
           FROM inbox_events
           WHERE tenant_id = $1 AND provider = $2 AND (dedup_key = $3 OR body_sha256 = $4)
           ORDER BY (dedup_key = $3) DESC LIMIT 1`,
          [tenantId, provider, key, hashBody ? bodyHash : null, BODY_DEDUP_DAYS],
        );
        if (seen && (seen.by_key || !seen.expired)) return { id: seen.id, duplicate: true };
        // The same body seen longer ago than the window: that copy stops counting, this one is new.
        if (seen) await sql.query('UPDATE inbox_events SET body_sha256 = NULL WHERE id = $1', [seen.id]);
        inserted = await insert();
      }
      if (inserted.length === 0) throw new DomainError('service_unavailable', 'The event could not be stored; send it again.');
      const id = inserted[0]!.id;
      // Stored is what matters for the provider (202 means stored durably): if the broker is down or does
      // not confirm promptly, the sweeper publishes the event later.
      if (brokerDown()) return { id, duplicate: false };
      if ((await publishIds(queue, 'inbound.events', [id], 1, ACCEPT_CONFIRM_TIMEOUT_MS)).length) {
        brokerDownUntil = Date.now() + BROKER_DOWN_HOLD_MS;
        log.warn({ inboxEventId: id }, 'inbound event stored but not yet published; leaving publishing to the sweeper for a while');
      } else markPublished(id);
      return { id, duplicate: false };
    },
    async sweep({ olderThanMs = 5000, staleAfterMs = 15 * 60_000, limit = 500 } = {}) {
      // Claim with SKIP LOCKED so concurrent sweepers take different rows; row locks last one statement.
      const { rows: claimed } = await pool.query<{ id: string }>(
        `UPDATE inbox_events SET published_at = now()
         WHERE id IN (
           SELECT id FROM inbox_events
           WHERE status = 'received'
             AND ((published_at IS NULL AND received_at < now() - make_interval(secs => $1))
               OR published_at < now() - make_interval(secs => $2))
           ORDER BY received_at
           LIMIT $3
           FOR UPDATE SKIP LOCKED)
         RETURNING id`,
        [olderThanMs / 1000, staleAfterMs / 1000, limit],
      );
      const ids = claimed.map((r) => r.id);
      const unpublished = await publishIds(queue, 'inbound.events', ids, 50);
      if (ids.length && !unpublished.length) brokerDownUntil = 0;
      // Unclaim what did not make it; the next sweep tries again.
      if (unpublished.length) await pool.query('UPDATE inbox_events SET published_at = NULL WHERE id = ANY($1::uuid[])', [unpublished]);
      const published = ids.length - unpublished.length;
      return published;
    },
    async close() {
      await flushing;
    },
  };
}
