import pg from 'pg';
import type { Logger } from 'pino';
import { onPg } from '../../db/sql.ts';
import { OUTBOX_CHANNEL } from './enqueue.ts';
import { envelopeSql } from './envelope.ts';
import { passesFilterSql } from './filters.ts';
import { publishJobs } from '../../queue/publish-ids.ts';
import type { Queue } from '../../queue/queue.ts';
import type { ChangeFeed, CustomerChangeMessage } from '../../queue/change-feed.ts';
import { CUSTOMER_CHANGE_EVENTS } from './registry.ts';

/**
 * A delivery to attempt, with its endpoint and tenant: the deliverer sees from them whether it has a free slot
 * before it claims anything. A job without them (Test deliveries, jobs published before they were added) is
 * claimed first.
 */
export interface DeliveryJob {
  id: string;
  endpointId?: string;
  tenantId?: string;
}

/** The jobs of delivery rows, round-robin across endpoints (`interleaveByEndpoint`). */
export function deliveryJobs(rows: { id: string; endpoint_id: string; tenant_id: string }[]): DeliveryJob[] {
  const byId = new Map(rows.map((r) => [r.id, r]));
  return interleaveByEndpoint(rows).map((id) => {
    const r = byId.get(id)!;
    return { id, endpointId: r.endpoint_id, tenantId: r.tenant_id };
  });
}

/**
 * Jobs in round-robin order across endpoints: a batch queued endpoint by endpoint would fill every
 * consumer slot with one endpoint's deliveries, which its concurrency cap then turns away.
 */
export function interleaveByEndpoint(rows: { id: string; endpoint_id: string }[]): string[] {
  const byEndpoint = new Map<string, string[]>();
  for (const r of rows) {
    const list = byEndpoint.get(r.endpoint_id);
    if (list) list.push(r.id);
    else byEndpoint.set(r.endpoint_id, [r.id]);
  }
  const lists = [...byEndpoint.values()];
  const out: string[] = [];
  for (let i = 0; out.length < rows.length; i++) for (const l of lists) if (i < l.length) out.push(l[i]!);
  return out;
}

/**
 * Fans the oldest outbox events not relayed yet (their outbox_pending rows, removed as they are claimed) out
 * to the enabled endpoints subscribed to their type whose filter for the type, if any, lets the payload
 * through (filters.ts), as delivery rows carrying the CloudEvents envelope, in one statement; SKIP LOCKED
 * lets several relays share the work. The event's row is taken too (key share), in the same statement and
 * SKIP LOCKED: an event being deleted (an erasure, a removal) is passed by, and one the relay holds cannot be
 * deleted while it is fanned out; the relay never waits for a deletion (docs/concurrency.md, step 10). Then publishes a job per delivery. A job that fails to
 * publish is picked up by `queueDue`. The same statement answers the customer changes among the events it took
 * (CUSTOMER_CHANGE_EVENTS), which go to the live feed once it has committed: every event passes here once,
 * after the transaction that wrote it committed, so a change that rolled back is never announced.
 */
const ENVELOPE = envelopeSql({
  id: 'c.id',
  tenantId: 'c.tenant_id',
  type: 'c.type',
  subject: 'c.subject',
  time: 'c.created_at',
  payload: 'c.payload',
  sequenceSubject: 'c.sequence_subject',
  sequence: 'c.sequence',
});

export async function relayOutbox(pool: pg.Pool, queue: Queue, limit = 500, feed?: ChangeFeed): Promise<number> {
  const rows = await onPg(pool).query<{
    id: string;
    endpoint_id: string | null;
    tenant_id: string;
    type: string | null;
    subject: string | null;
    time: Date | null;
  }>(
    `WITH taken AS (
       SELECT p.event_id FROM outbox_pending p JOIN outbox_events o ON o.id = p.event_id
       ORDER BY p.created_at LIMIT $1
       FOR UPDATE OF p SKIP LOCKED FOR KEY SHARE OF o SKIP LOCKED),
     relayed AS (
       DELETE FROM outbox_pending WHERE event_id IN (SELECT event_id FROM taken) RETURNING event_id),
     claimed AS (
       SELECT o.id, o.tenant_id, o.type, o.subject, o.payload, o.created_at, o.sequence_subject, o.sequence
       FROM relayed r JOIN outbox_events o ON o.id = r.event_id),
     -- The endpoints the new deliveries name, key-shared in id order before any is inserted: the inserts'
     -- foreign-key checks would otherwise take them in the order the rows are made, and meet a removal
     -- (a workspace's, an endpoint's) taking them in id order (docs/concurrency.md, step 11).
     endpoints AS MATERIALIZED (
       SELECT e.id, e.tenant_id, e.events, e.filter_paths FROM webhook_endpoints e
       WHERE e.tenant_id IN (SELECT tenant_id FROM claimed) AND e.enabled
       ORDER BY e.id FOR KEY SHARE),
     delivered AS (
       INSERT INTO webhook_deliveries (id, tenant_id, endpoint_id, outbox_event_id, event_type, envelope, sequence_subject, sequence,
                                       status, next_attempt_at, queued_at, created_at, updated_at)
       SELECT gen_random_uuid(), c.tenant_id, e.id, c.id, c.type,
              ${ENVELOPE}, c.sequence_subject, c.sequence,
              'pending', now(), now(), now(), now()
       FROM claimed c JOIN endpoints e ON e.tenant_id = c.tenant_id AND c.type = ANY(e.events)
                           AND ${passesFilterSql('c.type', 'c.payload')}
       ON CONFLICT (outbox_event_id, endpoint_id) DO NOTHING
       RETURNING id, endpoint_id, tenant_id)
     SELECT id, endpoint_id, tenant_id, NULL AS type, NULL AS subject, NULL::timestamptz AS time FROM delivered
     UNION ALL
     SELECT id, NULL, tenant_id, type, sequence_subject, created_at FROM claimed WHERE $2::boolean AND type = ANY($3::text[])`,
    [limit, feed !== undefined, CUSTOMER_CHANGE_EVENTS],
  );
  const deliveries = rows.filter((r): r is typeof r & { endpoint_id: string } => r.endpoint_id !== null);
  if (feed) announce(feed, rows);
  // A job that fails to publish leaves queued_at set; queueDue queues it again after the lease time.
  await publishJobs(queue, 'outbound.deliveries', deliveryJobs(deliveries));
  return deliveries.length;
}

const CUSTOMER_SUBJECT = 'customer:';

/** Each tenant's customer changes, in the order their events were written. */
function announce(
  feed: ChangeFeed,
  rows: { id: string; tenant_id: string; type: string | null; subject: string | null; time: Date | null }[],
) {
  const byTenant = new Map<string, (CustomerChangeMessage & { at: number })[]>();
  for (const r of rows) {
    if (r.type === null || !r.subject?.startsWith(CUSTOMER_SUBJECT)) continue;
    const list = byTenant.get(r.tenant_id) ?? [];
    list.push({
      id: r.id,
      type: r.type,
      customerId: r.subject.slice(CUSTOMER_SUBJECT.length),
      occurredAt: r.time!.toISOString(),
      at: r.time!.getTime(),
    });
    byTenant.set(r.tenant_id, list);
  }
  for (const [tenantId, list] of byTenant)
    feed.publish(
      tenantId,
      list.sort((a, b) => a.at - b.at).map(({ at: _, ...change }) => change),
    );
}

/**
 * LISTEN/NOTIFY is only a wake-up hint so new events go out at once; the caller's polling is the
 * guarantee. The listener reconnects on its own.
 */
export function listenForOutbox(databaseUrl: string, onNotify: () => void, log: Logger) {
  let client: pg.Client | null = null;
  let stopped = false;
  const connect = async () => {
    if (stopped) return;
    const c = new pg.Client({ connectionString: databaseUrl });
    c.on('error', () => {});
    c.on('end', () => {
      client = null;
      if (!stopped) setTimeout(() => void connect(), 1000);
    });
    c.on('notification', onNotify);
    try {
      await c.connect();
      await c.query(`LISTEN ${OUTBOX_CHANNEL}`);
      client = c;
    } catch (err) {
      log.warn({ err }, 'outbox listener could not connect; polling only');
      await c.end().catch(() => {});
    }
  };
  void connect();
  return async () => {
    stopped = true;
    await client?.end().catch(() => {});
  };
}
