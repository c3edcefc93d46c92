import type pg from 'pg';
import { inTransaction } from '../db/sql.ts';
import type { Consumer, Queue } from '../queue/queue.ts';
import { parseEventJson } from './event-json.ts';
import type { InboxMessage } from './inbox.ts';
import { PROVIDER_SPECS } from './providers/index.ts';
import { isProvider } from './providers/types.ts';
import { sentimentOf } from './sentiment.ts';

export const MAX_ATTEMPTS = 5;

interface Row {
  id: string;
  tenant_id: string;
  provider: string;
  event_type: string;
  body: string;
  status: string;
  received_at: Date;
}

/**
 * Applies one stored event in one transaction: the domain change, its signals, its outbox events and
 * the inbox row's new status commit together, and the message is acked only after that commit. The
 * row lock makes a redelivered message wait, then find the event done: processing is idempotent.
 */
export async function processInboxEvent(pool: pg.Pool, id: string): Promise<'processed' | 'ignored' | 'already_done'> {
  // The commit does not wait for the disk: the event itself was stored durably on acceptance, so a crash
  // of PostgreSQL that loses this transaction loses all of it (effects and status, never half), leaving the
  // event 'received' with its message acked; the inbox sweep publishes such an event again once its
  // publish is stale (Inbox.sweep). Waiting for the disk per event capped one worker below the accept rate.
  return inTransaction(
    pool,
    async (sql) => {
      const [row] = await sql.query<Row>(
        'SELECT id, tenant_id, provider, event_type, body, status::text AS status, received_at FROM inbox_events WHERE id = $1 FOR UPDATE',
        [id],
      );
      if (!row || row.status !== 'received') return 'already_done';
      const normalize = isProvider(row.provider) ? PROVIDER_SPECS[row.provider].normalize : undefined;
      const outcome = normalize
        ? await normalize({
            sql,
            event: {
              id: row.id,
              tenantId: row.tenant_id,
              provider: row.provider,
              eventType: row.event_type,
              body: parseEventJson(row.body),
              receivedAt: row.received_at,
            },
            sentiment: sentimentOf,
          })
        : 'ignored';
      await sql.query(
        `UPDATE inbox_events SET status = $2::"InboxStatus", processed_at = now(), attempts = attempts + 1, last_error = NULL WHERE id = $1`,
        [id, outcome],
      );
      return outcome;
    },
    { synchronousCommit: false },
  );
}

export function startInboxConsumer(
  pool: pg.Pool,
  queue: Queue,
  opts: { prefetch: number; log: { error: (o: object, m: string) => void } },
): Consumer {
  return queue.consume<InboxMessage>(
    'inbound.events',
    async ({ body, attempt }) => {
      try {
        await processInboxEvent(pool, body.id);
      } catch (err) {
        opts.log.error({ err, inboxEventId: body.id, attempt }, 'inbound event failed; it will be retried');
        await pool
          .query('UPDATE inbox_events SET attempts = attempts + 1, last_error = $2 WHERE id = $1', [body.id, String(err).slice(0, 1000)])
          .catch(() => {});
        throw err;
      }
    },
    {
      prefetch: opts.prefetch,
      maxAttempts: MAX_ATTEMPTS,
      // Parked for a human: the event stays in the inbox with its error, marked failed.
      onDead: async (b) => {
        await pool.query(`UPDATE inbox_events SET status = 'failed' WHERE id = $1 AND status = 'received'`, [(b as InboxMessage).id]);
      },
    },
  );
}
