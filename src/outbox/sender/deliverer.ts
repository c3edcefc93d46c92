import { setTimeout } from 'node:timers/promises';
import type pg from 'pg';
import { openWithOverlap, type SecretBox } from '../../crypto/secret-box.ts';
import type { DeliveryJob } from '../events/relay.ts';
import type { CircuitSettings } from './circuit-breaker.ts';
import { createDeliveryStore, type ClaimedDelivery } from './delivery-store.ts';
import type { Sender } from './http-send.ts';
import { nextAttemptAt } from './retry-schedule.ts';
import { signedHeaders } from './signing.ts';
import { contextOf, inSpan, SpanKind, SpanStatusCode } from '../../runtime/trace-context.ts';
import {
  statusClass,
  webhookCircuitClosings,
  webhookCircuitOpenings,
  webhookDeliveries,
  webhookDeliveryDuration,
  webhookEndpointsDisabled,
  webhookRetries,
} from '../../runtime/metrics.ts';

const BUSY_DELAY_MS = 250;
/**
 * Deliveries this process holds in memory until their endpoint (or tenant) has a free slot; past this, a job
 * that finds no slot is left as it is, queued, and the due-delivery pass queues it again once its job counts
 * as lost (the lease time).
 */
const MAX_WAITING = 10_000;
/**
 * How long a delivery given back waits when its endpoint is held to CAUTIOUS_CONCURRENCY: a slot frees only
 * when a slow attempt ends, and given back every 250 ms its deliveries would crowd the queue ahead of every
 * other endpoint's, each costing a claim and a release. Spread by up to a fifth, so they do not come back as one.
 */
const CAUTIOUS_BUSY_DELAY_MS = 5_000;
/**
 * Attempts in flight to an endpoint whose last attempt from this process was slow (`slowMs` or more:
 * answered late, or not at all before the timeout), or that this process has not tried yet: a receiver that hangs holds its
 * sockets for the whole timeout, and at the full cap one such endpoint held every slot its tenant has (and,
 * with a few of them, every slot of the process), so due retries to the tenant's other endpoints waited for
 * the timeouts. One that ends its attempts promptly, even with an error, holds a slot a moment and has its
 * full cap.
 */
const CAUTIOUS_CONCURRENCY = 2;
/** Endpoints whose last attempt's speed this process remembers; the oldest is forgotten past this. */
const REMEMBERED_ENDPOINTS = 10_000;

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
 *
 * A job that names its endpoint and tenant (`deliver`) is claimed only when both have a free slot; otherwise
 * it waits in this process's memory, touching no row, and is attempted as soon as an attempt to the same
 * tenant ends. Claiming it only to give it back would cost two writes every few seconds for every delivery
 * behind a slow receiver, for as long as it stays slow.
 */
export function createDeliverer(deps: {
  /** Where delivery state lives; see `createDeliveryStore` for why it may commit asynchronously. */
  pool: pg.Pool;
  box: SecretBox;
  sender: Sender;
  perEndpointConcurrency?: number;
  perTenantConcurrency?: number;
  leaseSeconds?: number;
  /** An attempt this long or longer is slow (CAUTIOUS_CONCURRENCY); a third of the send timeout by default. */
  slowMs?: number;
  /** When an endpoint's circuit breaker opens, and how long it waits before each probe (circuit-breaker.ts). */
  circuit?: CircuitSettings;
  now?: () => Date;
  /** Told of a failure nothing waits for (the worker's passes finish the work), with what failed. */
  onError?: (err: unknown, what: string) => void;
}) {
  const { box, sender } = deps;
  const cap = deps.perEndpointConcurrency ?? 16;
  const tenantCap = deps.perTenantConcurrency ?? 16;
  const slowMs = deps.slowMs ?? 5_000;
  const now = deps.now ?? (() => new Date());
  // Attempts in flight by endpoint id and by tenant id (the two kinds of id never collide).
  const active = new Map<string, number>();
  const inFlight = (key: string) => active.get(key) ?? 0;
  const count = (key: string, by: 1 | -1) => {
    const n = inFlight(key) + by;
    if (n > 0) active.set(key, n);
    else active.delete(key);
  };
  const store = createDeliveryStore(deps.pool, { leaseSeconds: deps.leaseSeconds ?? 60, circuit: deps.circuit });
  // Endpoint id → whether its last attempt from this process was answered promptly.
  const prompt = new Map<string, boolean>();
  const remember = (endpointId: string, durationMs: number | undefined) => {
    prompt.delete(endpointId);
    prompt.set(endpointId, durationMs !== undefined && durationMs < slowMs);
    if (prompt.size > REMEMBERED_ENDPOINTS) prompt.delete(prompt.keys().next().value!);
  };

  const endpointCapOf = (endpointId: string) => (prompt.get(endpointId) ? cap : Math.min(cap, CAUTIOUS_CONCURRENCY));
  const hasSlot = (endpointId: string, tenantId: string) =>
    inFlight(endpointId) < endpointCapOf(endpointId) && inFlight(tenantId) < tenantCap;

  // Deliveries waiting for a slot: by endpoint in arrival order, and the endpoints of each tenant that have some.
  const waiting = new Map<string, string[]>();
  const waitingIds = new Set<string>();
  const waitingEndpoints = new Map<string, Set<string>>();

  function wait(id: string, endpointId: string, tenantId: string) {
    if (waitingIds.size >= MAX_WAITING) return;
    waitingIds.add(id);
    const list = waiting.get(endpointId);
    if (list) list.push(id);
    else waiting.set(endpointId, [id]);
    const endpoints = waitingEndpoints.get(tenantId);
    if (endpoints) endpoints.add(endpointId);
    else waitingEndpoints.set(tenantId, new Set([endpointId]));
  }

  /** Starts what waits for the tenant's endpoints while slots are free, taking the endpoints in turn. */
  function pump(tenantId: string) {
    const endpoints = waitingEndpoints.get(tenantId);
    if (!endpoints) return;
    for (const endpointId of [...endpoints]) {
      if (inFlight(tenantId) >= tenantCap) break;
      const list = waiting.get(endpointId)!;
      while (list.length && hasSlot(endpointId, tenantId)) {
        const id = list.shift()!;
        waitingIds.delete(id);
        // A failure here leaves the delivery queued as it was; the due-delivery pass queues it again.
        void attemptWithSlot(id, endpointId, tenantId).catch((err) =>
          deps.onError?.(err, 'a delivery waiting for a slot failed; the due-delivery pass queues it again'),
        );
      }
      // The endpoint served goes last, so that one endpoint's backlog cannot keep the tenant's slots.
      endpoints.delete(endpointId);
      if (list.length) endpoints.add(endpointId);
      else waiting.delete(endpointId);
    }
    if (!endpoints.size) waitingEndpoints.delete(tenantId);
  }

  /** Sends a leased delivery in the slot its caller counted, and remembers how promptly the endpoint answered. */
  async function sendInSlot(d: ClaimedDelivery): Promise<AttemptOutcome> {
    let outcome: AttemptOutcome | undefined;
    try {
      return (outcome = await send(d));
    } finally {
      remember(d.endpoint_id, outcome?.durationMs);
    }
  }

  /** Claims and sends a delivery in a slot taken before the claim (the caller saw it free). */
  async function attemptWithSlot(id: string, endpointId: string, tenantId: string): Promise<AttemptOutcome> {
    count(endpointId, 1);
    count(tenantId, 1);
    try {
      const d = await store.claim(id);
      if (!d) return { status: 'skipped' };
      if (!d.enabled && !d.is_test) {
        await store.failDisabled(d.id);
        return { status: 'failed', error: 'endpoint disabled' };
      }
      return await sendInSlot(d);
    } finally {
      count(endpointId, -1);
      count(tenantId, -1);
      pump(tenantId);
    }
  }

  /** A worker's job: claimed only when its endpoint and tenant have a slot, else held in memory until they do. */
  async function deliver(job: DeliveryJob): Promise<AttemptOutcome> {
    if (!job.endpointId || !job.tenantId) return attempt(job.id);
    if (waitingIds.has(job.id)) return { status: 'busy' };
    if (!hasSlot(job.endpointId, job.tenantId)) {
      wait(job.id, job.endpointId, job.tenantId);
      return { status: 'busy' };
    }
    return attemptWithSlot(job.id, job.endpointId, job.tenantId);
  }

  /** One delivery by id, its endpoint known only once claimed (a Test, a job without its endpoint). */
  async function attempt(deliveryId: string): Promise<AttemptOutcome> {
    const d = await store.claim(deliveryId);
    if (!d) return { status: 'skipped' };
    if (!d.enabled && !d.is_test) {
      await store.failDisabled(d.id);
      return { status: 'failed', error: 'endpoint disabled' };
    }
    const cautious = !prompt.get(d.endpoint_id);
    const endpointCap = endpointCapOf(d.endpoint_id);
    if (!hasSlot(d.endpoint_id, d.tenant_id)) {
      const delayMs = cautious && inFlight(d.endpoint_id) >= endpointCap ? CAUTIOUS_BUSY_DELAY_MS * (1 + Math.random() / 5) : BUSY_DELAY_MS;
      await store.release(d.id, delayMs / 1000);
      return { status: 'busy' };
    }
    count(d.endpoint_id, 1);
    count(d.tenant_id, 1);
    try {
      return await sendInSlot(d);
    } finally {
      count(d.endpoint_id, -1);
      count(d.tenant_id, -1);
      pump(d.tenant_id);
    }
  }

  /** Closes the breaker whose probe was just delivered, then releases what it held. */
  async function closeAfterProbe(d: ClaimedDelivery) {
    try {
      if (!(await store.closeCircuit(d))) return;
      webhookCircuitClosings.inc();
      await store.releaseCircuit(d.endpoint_id);
    } catch (err) {
      // The delivery is recorded; the worker's pass finishes the release, or a later probe closes the breaker.
      deps.onError?.(err, 'could not release the deliveries a closed circuit breaker held; the worker releases them');
    }
  }

  /**
   * One attempt as a client span in the trace its event was emitted in. The receiver is sent no trace
   * headers (http-send.ts): our trace ids are ours, as the signed headers are all a receiver is promised.
   */
  async function send(d: ClaimedDelivery): Promise<AttemptOutcome> {
    // The endpoint's rate limit gave the delivery a send slot a moment ahead (delivery-store.ts): not before it.
    if (d.wait_ms > 0) await setTimeout(d.wait_ms);
    return inSpan(
      'webhook.deliver',
      {
        kind: SpanKind.CLIENT,
        parent: contextOf(d.trace_context),
        attributes: {
          'http.request.method': 'POST',
          'server.address': hostOf(d.url),
          'tenant.id': d.tenant_id,
          'chs.delivery.id': d.id,
          'chs.webhook.endpoint_id': d.endpoint_id,
          'chs.event_type': d.event_type,
          'chs.delivery.attempt': d.attempts + 1,
        },
      },
      async (span) => {
        const outcome = await attemptNow(d);
        if (outcome.statusCode != null) span.setAttribute('http.response.status_code', outcome.statusCode);
        span.setAttribute('chs.delivery.outcome', outcome.status);
        if (outcome.status !== 'succeeded') {
          span.setAttribute('error.type', outcome.statusCode == null ? 'no_response' : String(outcome.statusCode));
          span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error ?? undefined });
        }
        return outcome;
      },
    );
  }

  async function attemptNow(d: ClaimedDelivery): Promise<AttemptOutcome> {
    const body = JSON.stringify(d.envelope.data.payload);
    const startedAt = now();
    const timestamp = Math.floor(startedAt.getTime() / 1000);
    const secrets = openWithOverlap(
      box,
      { secret: d.secret, previousSecret: d.previous_secret, previousExpiresAt: d.previous_expires_at },
      startedAt,
    );
    // Only the Standard Webhooks scheme signs with the endpoint's Ed25519 keys.
    const signingKeys =
      d.signature_scheme === 'standard' && d.signing_key
        ? openWithOverlap(
            box,
            { secret: d.signing_key, previousSecret: d.previous_signing_key, previousExpiresAt: d.previous_expires_at },
            startedAt,
          )
        : [];
    const result = await sender.send(
      d.url,
      {
        'content-type': 'application/json',
        'user-agent': 'CustomerHealthService-Webhooks/1.0',
        'x-webhook-event': d.event_type,
        ...signedHeaders(d.signature_scheme, { secrets, signingKeys }, d.id, timestamp, body),
        // The event's place among its subject's events (docs/receiving-webhooks.md); a Test delivery has none.
        ...(d.sequence !== null && d.sequence_subject !== null
          ? { 'x-webhook-sequence': String(d.sequence), 'x-webhook-sequence-subject': d.sequence_subject }
          : {}),
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
    const observed = (outcome: 'succeeded' | 'retrying' | 'failed') => {
      webhookDeliveries.inc({ outcome, status_class: statusClass(result.statusCode) });
      webhookDeliveryDuration.observe({ outcome }, result.durationMs / 1000);
    };
    if (ok) {
      await store.recordSuccess(record);
      observed('succeeded');
      // The breaker's probe was delivered: it closes, and what it held goes out. Were this process to stop
      // between the two, the probe's turn runs out and the next probe closes it.
      if (d.probe) await closeAfterProbe(d);
      return { status: 'succeeded', statusCode: result.statusCode, error: null, durationMs: result.durationMs };
    }
    const redirect = result.statusCode !== null && result.statusCode >= 300 && result.statusCode < 400;
    const error = result.error ?? `HTTP ${result.statusCode}${redirect ? ' (redirects are not followed)' : ''}`;
    const gone = result.statusCode === 410;
    const next = gone || d.is_test ? null : nextAttemptAt(record.attempt, now(), { retryAfterMs: result.retryAfterMs ?? undefined });
    const effect = await store.recordFailure({ ...record, error, nextAttemptAt: next, gone });
    // Counted once recorded: an attempt whose record failed is attempted again, and counted then.
    observed(next ? 'retrying' : 'failed');
    if (next) webhookRetries.inc();
    if (effect.disabled) webhookEndpointsDisabled.inc({ reason: effect.disabled });
    if (effect.circuit) webhookCircuitOpenings.inc({ reason: effect.circuit === 'opened' ? 'threshold' : 'probe_failed' });
    return { status: next ? 'retrying' : 'failed', statusCode: result.statusCode, error, durationMs: result.durationMs };
  }

  return { attempt, deliver };
}

/** The receiver's host name only: a URL's path and query may carry a tenant's secrets. */
function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return '';
  }
}

export type Deliverer = ReturnType<typeof createDeliverer>;
