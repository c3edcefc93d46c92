import { createHash } from 'node:crypto';
import type { Db } from '../db/prisma.ts';
import type { Queue } from '../queue/queue.ts';

export interface InboxMessage {
  id: string;
}

export interface Inbox {
  /** Stores the raw event (once per dedup key), then publishes it with a confirm. */
  accept(e: {
    tenantId: string;
    provider: string;
    dedupKey: string;
    eventType: string;
    rawBody: Buffer;
  }): Promise<{ id: string; duplicate: boolean }>;
  /** Publishes what was stored but never confirmed (broker down, process killed); safe on several workers. */
  sweep(opts?: { olderThanMs?: number; staleAfterMs?: number; limit?: number }): Promise<number>;
  close(): Promise<void>;
}

const PUBLISH_TIMEOUT_MS = 2000;

export function createInbox(db: Db, queue: Queue, log: { warn: (o: object, m: string) => void }): Inbox {
  // Confirmed publishes are recorded in batches: one UPDATE for many events, off the request path.
  let confirmed: string[] = [];
  let flushing: Promise<void> | null = null;
  const flush = async () => {
    while (confirmed.length) {
      const ids = confirmed.splice(0, 1000);
      await db.$executeRaw`UPDATE inbox_events SET published_at = now() WHERE id = ANY(${ids}::uuid[]) AND published_at IS NULL`.catch(
        (err) => log.warn({ err }, 'could not record published inbox events; the sweeper will publish them again'),
      );
    }
    flushing = null;
  };
  const markPublished = (id: string) => {
    confirmed.push(id);
    flushing ??= new Promise((r) => setTimeout(r, 20)).then(flush);
  };

  return {
    async accept({ tenantId, provider, dedupKey, eventType, rawBody }) {
      // Providers that give an event no id of its own are keyed by the bytes they signed.
      const key = dedupKey || `sha256:${createHash('sha256').update(rawBody).digest('hex')}`;
      const inserted = await db.$queryRaw<{ id: string }[]>`
        INSERT INTO inbox_events (id, tenant_id, provider, dedup_key, event_type, body)
        VALUES (gen_random_uuid(), ${tenantId}::uuid, ${provider}, ${key}, ${eventType.slice(0, 200)}, ${rawBody.toString('utf8')})
        ON CONFLICT (tenant_id, provider, dedup_key) DO NOTHING
        RETURNING id`;
      if (inserted.length === 0) {
        const existing = await db.inboxEvent.findUniqueOrThrow({
          where: { tenantId_provider_dedupKey: { tenantId, provider, dedupKey: key } },
          select: { id: true },
        });
        return { id: existing.id, duplicate: true };
      }
      const id = inserted[0]!.id;
      try {
        await queue.publish('inbound.events', { id } satisfies InboxMessage, { messageId: id, timeoutMs: PUBLISH_TIMEOUT_MS });
        markPublished(id);
      } catch (err) {
        // Stored is what matters for the provider: the sweeper publishes it once the broker is back.
        log.warn({ err, inboxEventId: id }, 'inbound event stored but not yet published');
      }
      return { id, duplicate: false };
    },
    async sweep({ olderThanMs = 5000, staleAfterMs = 15 * 60_000, limit = 500 } = {}) {
      // Claim with SKIP LOCKED so concurrent sweepers take different rows; row locks last one statement.
      const claimed = await db.$queryRaw<{ id: string }[]>`
        UPDATE inbox_events SET published_at = now()
        WHERE id IN (
          SELECT id FROM inbox_events
          WHERE status = 'received'
            AND ((published_at IS NULL AND received_at < now() - make_interval(secs => ${olderThanMs / 1000}))
              OR published_at < now() - make_interval(secs => ${staleAfterMs / 1000}))
          ORDER BY received_at
          LIMIT ${limit}
          FOR UPDATE SKIP LOCKED)
        RETURNING id`;
      let published = 0;
      for (const { id } of claimed) {
        try {
          await queue.publish('inbound.events', { id } satisfies InboxMessage, { messageId: id, timeoutMs: PUBLISH_TIMEOUT_MS });
          published++;
        } catch {
          await db.$executeRaw`UPDATE inbox_events SET published_at = NULL WHERE id = ${id}::uuid`;
          break;
        }
      }
      return published;
    },
    async close() {
      await flushing;
    },
  };
}
