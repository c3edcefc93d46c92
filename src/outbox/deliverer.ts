import type pg from 'pg';
import { openWithOverlap, type SecretBox } from '../crypto/secret-box.ts';
import { inTransaction, onPg, type Sql } from '../db/sql.ts';
import { enqueueEvents } from './enqueue.ts';
import type { Sender } from './http-send.ts';
import { MAX_ATTEMPTS, nextAttemptAt } from './retry-schedule.ts';
import { signatureHeader } from './signing.ts';

const DISABLE_AFTER_MS = 5 * 86_400_000;
const BUSY_DELAY_MS = 250;

interface Claimed {
  id: string;
  tenant_id: string;
  endpoint_id: string;
  event_type: string;
  envelope: { data: { payload: unknown } };
  is_test: boolean;
  attempts: number;
  url: string;
  enabled: boolean;
  secret: string;
  previous_secret: string | null;
  previous_expires_at: Date | null;
  failing_since: Date | null;
}

export interface AttemptOutcome {
  status: 'succeeded' | 'retrying' | 'failed' | 'skipped' | 'busy';
  statusCode?: number | null;
  error?: string | null;
  durationMs?: number;
}

/**
 * Attempts one delivery: claims it with a lease (a crashed worker's lease expires and another takes
 * over, with the same X-Webhook-Id), sends the signed body, records the attempt and schedules what
 * comes next. A per-endpoint cap keeps one slow receiver from holding every slot.
 */
export function createDeliverer(deps: {
  pool: pg.Pool;
  box: SecretBox;
  sender: Sender;
  perEndpointConcurrency?: number;
  leaseSeconds?: number;
  now?: () => Date;
}) {
  const { pool, box, sender } = deps;
  const cap = deps.perEndpointConcurrency ?? 16;
  const leaseSeconds = deps.leaseSeconds ?? 60;
  const now = deps.now ?? (() => new Date());
  const active = new Map<string, number>();
  const sql = onPg(pool);
  // Delivery state commits without waiting for its WAL flush: if a crash loses the last moments of it,
  // the delivery is simply sent again with the same X-Webhook-Id, which at-least-once already allows.
  // (Inbound acceptance, which answers a provider, keeps synchronous commits.)
  const relaxed = <T>(fn: (tx: Sql) => Promise<T>) =>
    inTransaction(pool, async (tx) => {
      await tx.query('SET LOCAL synchronous_commit TO OFF');
      return fn(tx);
    });

  async function attempt(deliveryId: string): Promise<AttemptOutcome> {
    const [d] = await relaxed((sql) =>
      sql.query<Claimed>(
        `UPDATE webhook_deliveries d SET locked_until = now() + make_interval(secs => $2)
       FROM webhook_endpoints e
       WHERE d.id = $1 AND e.id = d.endpoint_id AND d.status = 'pending'
         AND (d.locked_until IS NULL OR d.locked_until < now())
         AND (d.next_attempt_at IS NULL OR d.next_attempt_at <= now() + interval '1 second')
       RETURNING d.id, d.tenant_id, d.endpoint_id, d.event_type, d.envelope, d.is_test, d.attempts,
                 e.url, e.enabled, e.secret, e.previous_secret, e.previous_expires_at, e.failing_since`,
        [deliveryId, leaseSeconds],
      ),
    );
    if (!d) return { status: 'skipped' };
    if (!d.enabled && !d.is_test) {
      await sql.query(
        `UPDATE webhook_deliveries SET status = 'failed', locked_until = NULL, last_error = 'endpoint disabled', updated_at = now() WHERE id = $1`,
        [d.id],
      );
      return { status: 'failed', error: 'endpoint disabled' };
    }
    if ((active.get(d.endpoint_id) ?? 0) >= cap) {
      await sql.query(
        `UPDATE webhook_deliveries SET locked_until = NULL, queued_at = NULL, next_attempt_at = now() + make_interval(secs => $2), updated_at = now() WHERE id = $1`,
        [d.id, BUSY_DELAY_MS / 1000],
      );
      return { status: 'busy' };
    }
    active.set(d.endpoint_id, (active.get(d.endpoint_id) ?? 0) + 1);
    try {
      return await send(d);
    } finally {
      active.set(d.endpoint_id, (active.get(d.endpoint_id) ?? 1) - 1);
    }
  }

  async function send(d: Claimed): Promise<AttemptOutcome> {
    const body = JSON.stringify(d.envelope.data.payload);
    const startedAt = now();
    const timestamp = Math.floor(startedAt.getTime() / 1000);
    const secrets = openWithOverlap(
      box,
      { secret: d.secret, previousSecret: d.previous_secret, previousExpiresAt: d.previous_expires_at },
      startedAt,
    );
    const result = await sender.send(
      d.url,
      {
        'content-type': 'application/json',
        'user-agent': 'CustomerHealthService-Webhooks/1.0',
        'x-webhook-event': d.event_type,
        'x-webhook-id': d.id,
        'x-webhook-timestamp': String(timestamp),
        'x-webhook-signature': signatureHeader(secrets, timestamp, body),
      },
      body,
    );
    const ok = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
    const attempts = d.attempts + 1;
    const error = ok
      ? null
      : (result.error ??
        `HTTP ${result.statusCode}${result.statusCode && result.statusCode >= 300 && result.statusCode < 400 ? ' (redirects are not followed)' : ''}`);
    const gone = result.statusCode === 410;
    const next = ok || gone || d.is_test ? null : nextAttemptAt(attempts, now(), { retryAfterMs: result.retryAfterMs ?? undefined });
    const status = ok ? 'succeeded' : next ? 'pending' : 'failed';

    await relaxed(async (tx) => {
      await tx.query(
        `INSERT INTO webhook_attempts (id, delivery_id, attempt, started_at, duration_ms, status_code, error, response_body)
         VALUES (gen_random_uuid(), $1, $2, $3, $4, $5, $6, $7)`,
        [d.id, attempts, startedAt, result.durationMs, result.statusCode, error, result.bodyExcerpt],
      );
      await tx.query(
        `UPDATE webhook_deliveries SET status = $2::"DeliveryStatus", attempts = $3, next_attempt_at = $4, locked_until = NULL, queued_at = NULL,
           last_status_code = $5, last_error = $6, updated_at = now() WHERE id = $1`,
        [d.id, status, attempts, next, result.statusCode, error],
      );
      if (d.is_test) return;
      if (ok) {
        // Touch the endpoint row only when it changes: every delivery updating it would queue them all on its lock.
        await tx.query(
          `UPDATE webhook_endpoints SET last_success_at = now(), failing_since = NULL
           WHERE id = $1 AND (failing_since IS NOT NULL OR last_success_at IS NULL OR last_success_at < now() - interval '10 seconds')`,
          [d.endpoint_id],
        );
        return;
      }
      const failingSince = d.failing_since ?? startedAt;
      const reason = gone
        ? 'the endpoint answered 410 Gone'
        : startedAt.getTime() - failingSince.getTime() >= DISABLE_AFTER_MS
          ? 'failing with no success for 5 days'
          : null;
      const [disabled] = await tx.query<{ id: string; url: string }>(
        `UPDATE webhook_endpoints SET failing_since = COALESCE(failing_since, $2),
           enabled = CASE WHEN $3::text IS NULL THEN enabled ELSE false END,
           disabled_reason = COALESCE($3, disabled_reason), updated_at = now()
         WHERE id = $1 RETURNING CASE WHEN $3::text IS NULL THEN NULL ELSE id END AS id, url`,
        [d.endpoint_id, startedAt, reason],
      );
      if (reason && disabled?.id) {
        // The tenant's other endpoints hear about it.
        await enqueueEvents(tx, [
          {
            tenantId: d.tenant_id,
            type: 'endpoint.disabled',
            subject: d.endpoint_id,
            dedupKey: `endpoint.disabled:${d.endpoint_id}:${startedAt.toISOString()}`,
            payload: { tenant_id: d.tenant_id, id: d.endpoint_id, url: disabled.url, enabled: false, disabled_reason: reason },
          },
        ]);
      }
    });
    return {
      status: ok ? 'succeeded' : status === 'pending' ? 'retrying' : 'failed',
      statusCode: result.statusCode,
      error,
      durationMs: result.durationMs,
    };
  }

  return { attempt, MAX_ATTEMPTS };
}

export type Deliverer = ReturnType<typeof createDeliverer>;
