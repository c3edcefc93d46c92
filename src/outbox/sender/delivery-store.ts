import DataLoader from 'dataloader';
import type pg from 'pg';
import type { SignatureScheme } from '../../contract/enums.ts';
import { inTransaction, onPg, type Sql } from '../../db/sql.ts';
import { enqueueEvents } from '../events/enqueue.ts';
import { heldByEarlier } from '../events/ordering.ts';

const DISABLE_AFTER_MS = 5 * 86_400_000;
// Claims and successful attempts arriving within this window share one statement: at a few hundred
// deliveries a second that turns two statements per delivery into two per batch.
const BATCH_WINDOW_MS = 2;
const MAX_BATCH = 100;
/**
 * How far ahead of its send slot a rate-limited delivery is leased, the deliverer holding it until then. The
 * due-delivery pass runs every second, so a delivery brought back this long before its slot is sent on time.
 */
export const PACING_HORIZON_SECONDS = 1;

/** A delivery leased for one attempt, with what sending it needs from its endpoint. */
export interface ClaimedDelivery {
  id: string;
  tenant_id: string;
  endpoint_id: string;
  event_type: string;
  envelope: { data: { payload: unknown } };
  is_test: boolean;
  attempts: number;
  /** The event's sequence subject and number; null for Test deliveries. */
  sequence_subject: string | null;
  sequence: number | null;
  url: string;
  enabled: boolean;
  secret: string;
  previous_secret: string | null;
  previous_expires_at: Date | null;
  failing_since: Date | null;
  signature_scheme: SignatureScheme;
  /** The endpoint's sealed Ed25519 keys, current and rotated out (docs/receiving-webhooks.md). */
  signing_key: string | null;
  previous_signing_key: string | null;
  /** How long to wait for the send slot the endpoint's rate limit gave the delivery; 0 when there is no limit. */
  wait_ms: number;
  /** The W3C traceparent its event was emitted under (tracing on), which the attempt's span continues. */
  trace_context: string | null;
}

/** One finished attempt, as recorded. */
export interface AttemptRecord {
  delivery: ClaimedDelivery;
  attempt: number;
  startedAt: Date;
  durationMs: number;
  statusCode: number | null;
  responseBody: string | null;
}

export interface FailedAttemptRecord extends AttemptRecord {
  error: string;
  /** When to try again; null when this was the last attempt. */
  nextAttemptAt: Date | null;
  /** The receiver answered 410: the endpoint is disabled at once. */
  gone: boolean;
}

/**
 * The deliverer's database side. Delivery bookkeeping may commit without waiting for its WAL flush
 * (the pool decides, see `createPool`): if a crash loses the last moments of it, a delivery is sent
 * again with the same X-Webhook-Id, which at-least-once already allows.
 */
export function createDeliveryStore(pool: pg.Pool, opts: { leaseSeconds: number }) {
  const sql = onPg(pool);
  const batched = { cache: false, maxBatchSize: MAX_BATCH, batchScheduleFn: (run: () => void) => setTimeout(run, BATCH_WINDOW_MS) };

  /**
   * Leases each pending, due, unleased delivery; null for one that is not (done, leased elsewhere, not due),
   * and for one an ordered endpoint holds behind an earlier event of its subject (ordering.ts): that one is
   * marked unqueued, so the due-delivery pass queues it again once the earlier one is settled.
   *
   * An endpoint with a rate limit has one budget row shared by every process (webhook_endpoint_pacing): the
   * time its next send slot is free. A delivery to it without a slot is given the next free one, the row
   * moving on by one slot (1 / rate seconds) per delivery, and keeps it until its attempt is recorded. One
   * whose slot is at most PACING_HORIZON_SECONDS away is leased and told how long to wait for it (`wait_ms`);
   * one whose slot is further is not leased but unqueued and due just before its slot, so the due-delivery
   * pass brings it back then: nothing is leased only to be given back, and the endpoint's backlog waits in
   * rows, not in the queue ahead of other endpoints' deliveries. An attempt starts no earlier than its slot,
   * and no two attempts share one, so no more than the rate goes out over any stretch of time; one that
   * missed its slot by more than the horizon takes a new one rather than go out in a bunch.
   */
  const claims = new DataLoader<string, ClaimedDelivery | null>(async (ids) => {
    const rows = await sql.query<ClaimedDelivery & { leased: boolean }>(
      `WITH claim AS (
         -- In delivery order, as every writer of several deliveries locks them (docs/concurrency.md).
         SELECT d.id, d.endpoint_id, d.created_at, d.is_test, d.send_slot_at, ${heldByEarlier('d')} AS held,
                d.status = 'pending'
                  AND (d.locked_until IS NULL OR d.locked_until < now())
                  AND (d.next_attempt_at IS NULL OR d.next_attempt_at <= now() + interval '1 second')
                  -- A workspace whose owner asked for its deletion sends nothing (docs/data-lifecycle.md).
                  AND NOT EXISTS (SELECT 1 FROM tenants t WHERE t.id = d.tenant_id AND t.deletion_requested_at IS NOT NULL) AS claimable
         FROM webhook_deliveries d WHERE d.id = ANY($1::uuid[]) ORDER BY d.id FOR NO KEY UPDATE),
       unpaced AS (
         SELECT c.id, c.endpoint_id, e.rate_limit_per_second AS rate,
                row_number() OVER (PARTITION BY c.endpoint_id ORDER BY c.created_at, c.id) AS k,
                count(*) OVER (PARTITION BY c.endpoint_id) AS n
         FROM claim c JOIN webhook_endpoints e ON e.id = c.endpoint_id
         WHERE c.claimable AND NOT c.held AND NOT c.is_test AND e.rate_limit_per_second IS NOT NULL
           -- A slot missed by more than the horizon (its job came late, its lease ran out) is given up for the
           -- next free one: sent late in the old slot, it would go out beside the ones on time after it.
           AND (c.send_slot_at IS NULL OR c.send_slot_at < now() - make_interval(secs => $3))),
       -- The budget rows after the deliveries, in endpoint order (docs/concurrency.md, step 12). Each exists
       -- while its endpoint has a limit (\`setPacing\`), so the claim only updates them.
       wanted AS (SELECT endpoint_id, max(n) AS n, max(rate) AS rate FROM unpaced GROUP BY endpoint_id),
       paced AS (
         UPDATE webhook_endpoint_pacing p SET next_slot_at = greatest(p.next_slot_at, now()) + make_interval(secs => w.n / w.rate)
         FROM wanted w
         WHERE p.endpoint_id = w.endpoint_id
           AND p.endpoint_id IN (SELECT endpoint_id FROM webhook_endpoint_pacing WHERE endpoint_id IN (SELECT endpoint_id FROM wanted)
                                 ORDER BY endpoint_id FOR UPDATE)
         RETURNING p.endpoint_id, p.next_slot_at),
       slotted AS (
         SELECT c.id, c.held, c.claimable,
                COALESCE(p.next_slot_at - make_interval(secs => (u.n - u.k + 1) / u.rate), c.send_slot_at) AS slot
         FROM claim c LEFT JOIN unpaced u ON u.id = c.id LEFT JOIN paced p ON p.endpoint_id = u.endpoint_id),
       decided AS (
         SELECT id, held, slot, NOT held AND (slot IS NULL OR slot <= now() + make_interval(secs => $3)) AS leased
         FROM slotted WHERE held OR claimable)
       UPDATE webhook_deliveries d
       SET locked_until = CASE WHEN x.leased THEN now() + make_interval(secs => $2) ELSE d.locked_until END,
           queued_at = CASE WHEN x.leased THEN d.queued_at ELSE NULL END,
           send_slot_at = x.slot,
           next_attempt_at = CASE WHEN x.leased OR x.held THEN d.next_attempt_at ELSE x.slot - make_interval(secs => $3) END
       FROM decided x, webhook_endpoints e
       WHERE d.id = x.id AND e.id = d.endpoint_id
       RETURNING d.id, d.tenant_id, d.endpoint_id, d.event_type, d.envelope, d.is_test, d.attempts, d.sequence_subject, d.sequence,
                 e.url, e.enabled, e.secret, e.previous_secret, e.previous_expires_at, e.failing_since,
                 e.signature_scheme, e.signing_key, e.previous_signing_key, x.leased,
                 (SELECT o.trace_context FROM outbox_events o WHERE o.id = d.outbox_event_id) AS trace_context,
                 CASE WHEN x.leased THEN greatest(0, ceil(extract(epoch FROM x.slot - now()) * 1000))::int ELSE 0 END AS wait_ms`,
      [ids, opts.leaseSeconds, PACING_HORIZON_SECONDS],
    );
    // Two jobs for one delivery can land in one batch (a requeued job next to its original): one lease, one holder.
    const byId = new Map(rows.filter((r) => r.leased).map(({ leased: _, ...r }) => [r.id, r]));
    return ids.map((id) => {
      const row = byId.get(id) ?? null;
      byId.delete(id);
      return row;
    });
  }, batched);

  /**
   * Records successful attempts: each attempt row, its delivery settled, and its endpoint's health only
   * when that changes (every delivery touching the endpoint row would queue them all on its lock; a row
   * another statement holds is skipped, since that statement is recording a success too).
   */
  const successes = new DataLoader<AttemptRecord, void>(async (records) => {
    await sql.query(
      `WITH input AS (
         SELECT * FROM unnest($1::uuid[], $2::int[], $3::timestamptz[], $4::int[], $5::int[], $6::text[], $7::uuid[], $8::boolean[])
           AS t(id, attempt, started_at, duration_ms, status_code, response_body, endpoint_id, is_test)),
       attempt AS (
         INSERT INTO webhook_attempts (id, delivery_id, attempt, started_at, duration_ms, status_code, error, response_body)
         SELECT gen_random_uuid(), id, attempt, started_at, duration_ms, status_code, NULL, response_body FROM input),
       -- Endpoints first (skipping any another statement holds), then deliveries in order (docs/concurrency.md).
       stale AS (
         SELECT e.id FROM webhook_endpoints e
         WHERE e.id IN (SELECT endpoint_id FROM input WHERE NOT is_test)
           AND (e.failing_since IS NOT NULL OR e.last_success_at IS NULL OR e.last_success_at < now() - interval '10 seconds')
         ORDER BY e.id FOR NO KEY UPDATE SKIP LOCKED),
       delivery AS (
         UPDATE webhook_deliveries d SET status = 'succeeded', attempts = i.attempt, next_attempt_at = NULL, locked_until = NULL,
           queued_at = NULL, send_slot_at = NULL, last_status_code = i.status_code, last_error = NULL, updated_at = now()
         FROM input i WHERE d.id = i.id
           AND d.id IN (SELECT id FROM webhook_deliveries WHERE id IN (SELECT id FROM input) ORDER BY id FOR NO KEY UPDATE))
       UPDATE webhook_endpoints e SET last_success_at = now(), failing_since = NULL FROM stale WHERE e.id = stale.id`,
      [
        records.map((r) => r.delivery.id),
        records.map((r) => r.attempt),
        records.map((r) => r.startedAt),
        records.map((r) => r.durationMs),
        records.map((r) => r.statusCode),
        records.map((r) => r.responseBody),
        records.map((r) => r.delivery.endpoint_id),
        records.map((r) => r.delivery.is_test),
      ],
    );
    return records.map(() => undefined);
  }, batched);

  /**
   * A failed attempt: scheduled again or given up, and the endpoint disabled after 410 or five failing days.
   * Answers why the endpoint was disabled by this attempt, or null.
   */
  async function recordFailure(f: FailedAttemptRecord): Promise<'gone' | 'failing' | null> {
    const d = f.delivery;
    return inTransaction(pool, async (tx): Promise<'gone' | 'failing' | null> => {
      // The endpoint's row before the delivery's, as every writer of both takes them (docs/concurrency.md).
      if (!d.is_test) await tx.query('SELECT 1 FROM webhook_endpoints WHERE id = $1 FOR NO KEY UPDATE', [d.endpoint_id]);
      await tx.query(
        `INSERT INTO webhook_attempts (id, delivery_id, attempt, started_at, duration_ms, status_code, error, response_body)
         VALUES (gen_random_uuid(), $1, $2, $3, $4, $5, $6, $7)`,
        [d.id, f.attempt, f.startedAt, f.durationMs, f.statusCode, f.error, f.responseBody],
      );
      await tx.query(
        `UPDATE webhook_deliveries SET status = $2::"DeliveryStatus", attempts = $3, next_attempt_at = $4, locked_until = NULL, queued_at = NULL, send_slot_at = NULL,
           last_status_code = $5, last_error = $6, updated_at = now() WHERE id = $1`,
        [d.id, f.nextAttemptAt ? 'pending' : 'failed', f.attempt, f.nextAttemptAt, f.statusCode, f.error],
      );
      if (d.is_test) return null;
      const failingSince = d.failing_since ?? f.startedAt;
      const reason = f.gone
        ? 'the endpoint answered 410 Gone'
        : f.startedAt.getTime() - failingSince.getTime() >= DISABLE_AFTER_MS
          ? 'failing with no success for 5 days'
          : null;
      const [disabled] = await tx.query<{ id: string; url: string }>(
        `UPDATE webhook_endpoints SET failing_since = COALESCE(failing_since, $2),
           enabled = CASE WHEN $3::text IS NULL THEN enabled ELSE false END,
           disabled_reason = COALESCE($3, disabled_reason), updated_at = now()
         WHERE id = $1 RETURNING CASE WHEN $3::text IS NULL THEN NULL ELSE id END AS id, url`,
        [d.endpoint_id, f.startedAt, reason],
      );
      if (reason && disabled?.id) {
        // The tenant's other endpoints hear about it.
        await enqueueEvents(tx, [
          {
            tenantId: d.tenant_id,
            type: 'endpoint.disabled',
            subject: d.endpoint_id,
            dedupKey: `endpoint.disabled:${d.endpoint_id}:${f.startedAt.toISOString()}`,
            payload: { tenant_id: d.tenant_id, id: d.endpoint_id, url: disabled.url, enabled: false, disabled_reason: reason },
          },
        ]);
        return f.gone ? 'gone' : 'failing';
      }
      return null;
    });
  }

  return {
    claim: (id: string) => claims.load(id),
    recordSuccess: (r: AttemptRecord) => successes.load(r),
    recordFailure,
    /** Gives a leased delivery back, due again after `delaySeconds`. */
    async release(id: string, delaySeconds: number) {
      await sql.query(
        `UPDATE webhook_deliveries SET locked_until = NULL, queued_at = NULL, next_attempt_at = now() + make_interval(secs => $2), updated_at = now() WHERE id = $1`,
        [id, delaySeconds],
      );
    },
    async failDisabled(id: string) {
      await sql.query(
        `UPDATE webhook_deliveries SET status = 'failed', locked_until = NULL, send_slot_at = NULL, last_error = 'endpoint disabled', updated_at = now() WHERE id = $1`,
        [id],
      );
    },
  };
}

/**
 * After an endpoint's rate limit was set, changed or removed: the slots its pending deliveries were given
 * under the old limit are dropped, and those not leased are due at once, to be given slots under the new one;
 * its budget row starts afresh, or goes with the limit. The caller holds the endpoint's row (just made or
 * updated); its deliveries are taken in id order, then the budget row (docs/concurrency.md, steps 11 and 12).
 */
export async function setPacing(sql: Sql, endpointId: string, limited: boolean): Promise<void> {
  await sql.query(
    `UPDATE webhook_deliveries d
     SET send_slot_at = NULL,
         next_attempt_at = CASE WHEN d.locked_until IS NULL OR d.locked_until < now() THEN now() ELSE d.next_attempt_at END,
         updated_at = now()
     WHERE d.id IN (SELECT id FROM webhook_deliveries WHERE endpoint_id = $1::uuid AND status = 'pending' AND send_slot_at IS NOT NULL
                    ORDER BY id FOR NO KEY UPDATE)`,
    [endpointId],
  );
  await sql.query(
    limited
      ? `INSERT INTO webhook_endpoint_pacing (endpoint_id, next_slot_at) VALUES ($1::uuid, now())
         ON CONFLICT (endpoint_id) DO UPDATE SET next_slot_at = now()`
      : 'DELETE FROM webhook_endpoint_pacing WHERE endpoint_id = $1::uuid',
    [endpointId],
  );
}
