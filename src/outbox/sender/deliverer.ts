import type pg from 'pg';
import { openWithOverlap, type SecretBox } from '../../crypto/secret-box.ts';
import { createDeliveryStore, type ClaimedDelivery } from './delivery-store.ts';
import type { Sender } from './http-send.ts';
import { nextAttemptAt } from './retry-schedule.ts';
import { signatureHeader } from './signing.ts';

const BUSY_DELAY_MS = 250;
/**
 * Attempts in flight to an endpoint that has not answered well lately (no success in PROVEN_MS, or failing
 * since its last attempt): a receiver that hangs holds its sockets for the whole timeout, and at the full cap
 * one such endpoint held every slot its tenant has (and, with a few of them, every slot of the process), so
 * due retries to the tenant's healthy endpoints waited for the timeouts. It gets its full cap back with its
 * first success.
 */
const UNPROVEN_CONCURRENCY = 2;
const PROVEN_MS = 5 * 60_000;

export interface AttemptOutcome {
  status: 'succeeded' | 'retrying' | 'failed' | 'skipped' | 'busy';
  statusCode?: number | null;
  error?: string | null;
  durationMs?: number;
}

/**
 * Attempts one delivery: claims it with a lease (a crashed worker's lease expires and another takes
 * over, with the same X-Webhook-Id), sends the signed body, records the attempt and schedules what
 * comes next. A per-endpoint cap keeps one slow receiver from holding every slot (two only, until it has
 * answered well lately), and a per-tenant cap one tenant's many slow receivers (up to 20 endpoints, each
 * within its own cap).
 */
export function createDeliverer(deps: {
  /** Where delivery state lives; see `createDeliveryStore` for why it may commit asynchronously. */
  pool: pg.Pool;
  box: SecretBox;
  sender: Sender;
  perEndpointConcurrency?: number;
  perTenantConcurrency?: number;
  leaseSeconds?: number;
  now?: () => Date;
}) {
  const { box, sender } = deps;
  const cap = deps.perEndpointConcurrency ?? 16;
  const tenantCap = deps.perTenantConcurrency ?? 16;
  const now = deps.now ?? (() => new Date());
  // Attempts in flight by endpoint id and by tenant id (the two kinds of id never collide).
  const active = new Map<string, number>();
  const inFlight = (key: string) => active.get(key) ?? 0;
  const count = (key: string, by: 1 | -1) => {
    const n = inFlight(key) + by;
    if (n > 0) active.set(key, n);
    else active.delete(key);
  };
  const store = createDeliveryStore(deps.pool, { leaseSeconds: deps.leaseSeconds ?? 60 });

  async function attempt(deliveryId: string): Promise<AttemptOutcome> {
    const d = await store.claim(deliveryId);
    if (!d) return { status: 'skipped' };
    if (!d.enabled && !d.is_test) {
      await store.failDisabled(d.id);
      return { status: 'failed', error: 'endpoint disabled' };
    }
    const proven = d.failing_since === null && d.last_success_at !== null && now().getTime() - d.last_success_at.getTime() < PROVEN_MS;
    const endpointCap = proven ? cap : Math.min(cap, UNPROVEN_CONCURRENCY);
    if (inFlight(d.endpoint_id) >= endpointCap || inFlight(d.tenant_id) >= tenantCap) {
      await store.release(d.id, BUSY_DELAY_MS / 1000);
      return { status: 'busy' };
    }
    count(d.endpoint_id, 1);
    count(d.tenant_id, 1);
    try {
      return await send(d);
    } finally {
      count(d.endpoint_id, -1);
      count(d.tenant_id, -1);
    }
  }

  async function send(d: ClaimedDelivery): Promise<AttemptOutcome> {
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
    const record = {
      delivery: d,
      attempt: d.attempts + 1,
      startedAt,
      durationMs: result.durationMs,
      statusCode: result.statusCode,
      responseBody: result.bodyExcerpt,
    };
    if (ok) {
      await store.recordSuccess(record);
      return { status: 'succeeded', statusCode: result.statusCode, error: null, durationMs: result.durationMs };
    }
    const redirect = result.statusCode !== null && result.statusCode >= 300 && result.statusCode < 400;
    const error = result.error ?? `HTTP ${result.statusCode}${redirect ? ' (redirects are not followed)' : ''}`;
    const gone = result.statusCode === 410;
    const next = gone || d.is_test ? null : nextAttemptAt(record.attempt, now(), { retryAfterMs: result.retryAfterMs ?? undefined });
    await store.recordFailure({ ...record, error, nextAttemptAt: next, gone });
    return { status: next ? 'retrying' : 'failed', statusCode: result.statusCode, error, durationMs: result.durationMs };
  }

  return { attempt };
}

export type Deliverer = ReturnType<typeof createDeliverer>;
