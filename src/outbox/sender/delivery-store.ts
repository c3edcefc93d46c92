import DataLoader from 'dataloader';
import type pg from 'pg';
import type { SignatureScheme } from '../../contract/enums.ts';
import { inTransaction, onPg, type Sql } from '../../db/sql.ts';
import { enqueueEvents } from '../events/enqueue.ts';
import { envelopeSql } from '../events/envelope.ts';
import { heldByEarlier } from '../events/ordering.ts';
import { deliveryJobs } from '../events/relay.ts';
import { publishJobs } from '../../queue/publish-ids.ts';
import type { Queue } from '../../queue/queue.ts';
import { webhookCircuit } from '../../contract/entities.ts';
import { serialize } from '../../contract/serialize.ts';
import { type CircuitSettings, type CircuitState, DEFAULT_CIRCUIT, circuitView, rolledWindowSql } from './circuit-breaker.ts';
import { bucketOf, emptyHistogram } from './latency-histogram.ts';

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
  /** The attempt is its endpoint's circuit-breaker probe: delivered, it closes the breaker (circuit-breaker.ts). */
  probe: boolean;
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

/** What recording a failed attempt did to its endpoint. */
export interface FailureEffect {
  /** Why the endpoint was disabled by this attempt, or null. */
  disabled: 'gone' | 'failing' | null;
  /** The circuit breaker opened: past its threshold (`opened`) or after a failed probe (`reopened`); or null. */
  circuit: 'opened' | 'reopened' | null;
}

/** How many of an endpoint's held deliveries one statement releases; the rest go in the next. */
const RELEASE_BATCH = 1000;

/** The minute an attempt started in, as the delivery figures count it. */
const minuteOf = (d: Date) => new Date(Math.floor(d.getTime() / 60_000) * 60_000);

/**
 * The delivery figures of attempts (webhook_endpoint_stats): one row per endpoint and minute, with the
 * attempts, the failures and the histogram of durations (latency-histogram.ts), as JSON for jsonb_to_recordset.
 */
function figuresOf(records: { endpointId: string; startedAt: Date; durationMs: number; failed: boolean }[]): string {
  const rows = new Map<string, { endpoint_id: string; minute: string; attempts: number; failures: number; latency: number[] }>();
  for (const r of records) {
    const minute = minuteOf(r.startedAt).toISOString();
    const key = `${r.endpointId} ${minute}`;
    let row = rows.get(key);
    if (!row) rows.set(key, (row = { endpoint_id: r.endpointId, minute, attempts: 0, failures: 0, latency: emptyHistogram() }));
    row.attempts++;
    if (r.failed) row.failures++;
    row.latency[bucketOf(r.durationMs)]!++;
  }
  return JSON.stringify([...rows.values()]);
}

/**
 * Adds figures (`figuresOf`, the parameter `p`) to the endpoints' rows of their minutes, in key order: the last
 * rows an attempt's record takes (docs/concurrency.md, step 12).
 */
const addFiguresSql = (p: string, after = 'true') => `
  INSERT INTO webhook_endpoint_stats AS s (endpoint_id, minute, attempts, failures, latency)
  SELECT endpoint_id, minute, attempts, failures, latency
  FROM jsonb_to_recordset(${p}::jsonb) AS f(endpoint_id uuid, minute timestamptz, attempts int, failures int, latency int[])
  WHERE ${after}
  ORDER BY endpoint_id, minute
  ON CONFLICT (endpoint_id, minute) DO UPDATE SET
    attempts = s.attempts + excluded.attempts,
    failures = s.failures + excluded.failures,
    latency = (SELECT array_agg(coalesce(a, 0) + coalesce(b, 0) ORDER BY i)
               FROM unnest(s.latency, excluded.latency) WITH ORDINALITY AS u(a, b, i))`;

/** A breaker's row as its statements return it. */
interface CircuitRow {
  state: CircuitState;
  opened_at: Date | null;
  next_probe_at: Date | null;
  window_started_at: Date;
  window_attempts: number;
  window_failures: number;
  previous_attempts: number;
  previous_failures: number;
}

const CIRCUIT_COLUMNS = `state, opened_at, next_probe_at, window_started_at, window_attempts, window_failures, previous_attempts, previous_failures`;

/** A breaker as its endpoint.circuit_* events carry it. */
const wireCircuit = (r: CircuitRow, windowSeconds: number) =>
  serialize(
    webhookCircuit,
    circuitView(
      {
        state: r.state,
        openedAt: r.opened_at,
        nextProbeAt: r.next_probe_at,
        windowStartedAt: r.window_started_at,
        windowAttempts: r.window_attempts,
        windowFailures: r.window_failures,
        previousAttempts: r.previous_attempts,
        previousFailures: r.previous_failures,
      },
      windowSeconds,
    ),
  );

/** A circuit as it is after being closed or reset: nothing counted, nothing held back. */
const CLOSED_CIRCUIT = `state = 'closed', opened_at = NULL, openings = 0, next_probe_at = NULL, probe_delivery_id = NULL,
  probe_until = NULL, window_started_at = now(), window_attempts = 0, window_failures = 0, previous_attempts = 0,
  previous_failures = 0, updated_at = now()`;

/**
 * The deliverer's database side. Delivery bookkeeping may commit without waiting for its WAL flush
 * (the pool decides, see `createPool`): if a crash loses the last moments of it, a delivery is sent
 * again with the same X-Webhook-Id, which at-least-once already allows.
 */
export function createDeliveryStore(pool: pg.Pool, opts: { leaseSeconds: number; circuit?: CircuitSettings }) {
  const sql = onPg(pool);
  const breaker = opts.circuit ?? DEFAULT_CIRCUIT;
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
    const rows = await sql.query<ClaimedDelivery & { leased: boolean; blocked: boolean }>(
      `WITH claim AS (
         -- In delivery order, as every writer of several deliveries locks them (docs/concurrency.md). The
         -- endpoint's circuit breaker is read, not locked: a delivery it holds is left to \`hold\` (below).
         SELECT d.id, d.endpoint_id, d.created_at, d.is_test, d.send_slot_at, ${heldByEarlier('d')} AS held,
                d.status = 'pending'
                  AND (d.locked_until IS NULL OR d.locked_until < now())
                  AND (d.next_attempt_at IS NULL OR d.next_attempt_at <= now() + interval '1 second')
                  -- A workspace whose owner asked for its deletion sends nothing (docs/data-lifecycle.md).
                  AND NOT EXISTS (SELECT 1 FROM tenants t WHERE t.id = d.tenant_id AND t.deletion_requested_at IS NOT NULL) AS claimable,
                -- Test deliveries go out whatever the breaker says, and do not count for it.
                NOT d.is_test AND COALESCE(ci.state <> 'closed' AND ci.probe_delivery_id IS DISTINCT FROM d.id, false) AS blocked,
                NOT d.is_test AND COALESCE(ci.state = 'half_open' AND ci.probe_delivery_id = d.id, false) AS probe
         FROM webhook_deliveries d LEFT JOIN webhook_endpoint_circuits ci ON ci.endpoint_id = d.endpoint_id
         WHERE d.id = ANY($1::uuid[]) ORDER BY d.id FOR NO KEY UPDATE OF d),
       unpaced AS (
         SELECT c.id, c.endpoint_id, e.rate_limit_per_second AS rate,
                row_number() OVER (PARTITION BY c.endpoint_id ORDER BY c.created_at, c.id) AS k,
                count(*) OVER (PARTITION BY c.endpoint_id) AS n
         FROM claim c JOIN webhook_endpoints e ON e.id = c.endpoint_id
         WHERE c.claimable AND NOT c.held AND NOT c.blocked AND NOT c.is_test AND e.rate_limit_per_second IS NOT NULL
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
         SELECT c.id, c.held, c.claimable, c.blocked, c.probe,
                COALESCE(p.next_slot_at - make_interval(secs => (u.n - u.k + 1) / u.rate), c.send_slot_at) AS slot
         FROM claim c LEFT JOIN unpaced u ON u.id = c.id LEFT JOIN paced p ON p.endpoint_id = u.endpoint_id),
       decided AS (
         SELECT id, held, slot, probe, NOT held AND (slot IS NULL OR slot <= now() + make_interval(secs => $3)) AS leased
         FROM slotted WHERE (held OR claimable) AND NOT (claimable AND blocked)),
       updated AS (
         UPDATE webhook_deliveries d
         SET locked_until = CASE WHEN x.leased THEN now() + make_interval(secs => $2) ELSE d.locked_until END,
             queued_at = CASE WHEN x.leased THEN d.queued_at ELSE NULL END,
             send_slot_at = x.slot,
             next_attempt_at = CASE WHEN x.leased OR x.held THEN d.next_attempt_at ELSE x.slot - make_interval(secs => $3) END
         FROM decided x, webhook_endpoints e
         WHERE d.id = x.id AND e.id = d.endpoint_id
         RETURNING d.id, d.tenant_id, d.endpoint_id, d.event_type, d.envelope, d.is_test, d.attempts, d.sequence_subject, d.sequence,
                   e.url, e.enabled, e.secret, e.previous_secret, e.previous_expires_at, e.failing_since,
                   e.signature_scheme, e.signing_key, e.previous_signing_key, x.leased, x.probe,
                   (SELECT o.trace_context FROM outbox_events o WHERE o.id = d.outbox_event_id) AS trace_context,
                   CASE WHEN x.leased THEN greatest(0, ceil(extract(epoch FROM x.slot - now()) * 1000))::int ELSE 0 END AS wait_ms)
       SELECT id, tenant_id, endpoint_id, event_type, envelope, is_test, attempts, sequence_subject, sequence, url, enabled, secret,
              previous_secret, previous_expires_at, failing_since, signature_scheme, signing_key, previous_signing_key,
              leased, probe, trace_context, false AS blocked, wait_ms
       FROM updated
       UNION ALL
       -- What the endpoint's open breaker holds: neither leased nor given a slot here.
       SELECT id, NULL, endpoint_id, NULL, NULL, is_test, NULL, NULL, NULL, NULL, NULL, NULL,
              NULL, NULL, NULL, NULL, NULL, NULL, false, false, NULL, true, 0
       FROM claim WHERE claimable AND blocked`,
      [ids, opts.leaseSeconds, PACING_HORIZON_SECONDS],
    );
    const blocked = rows.filter((r) => r.blocked).map((r) => r.id);
    if (blocked.length) await hold(blocked);
    // Two jobs for one delivery can land in one batch (a requeued job next to its original): one lease, one holder.
    const byId = new Map(rows.filter((r) => r.leased).map(({ leased: _, blocked: __, ...r }) => [r.id, r]));
    return ids.map((id) => {
      const row = byId.get(id) ?? null;
      byId.delete(id);
      return row;
    });
  }, batched);

  /**
   * Holds deliveries whose endpoint's circuit breaker is open (circuit-breaker.ts): each keeps its attempts and
   * its due time, is no longer queued by the due-delivery pass (its index leaves held rows out), and waits for the
   * breaker to close, which releases it (`releaseHeld`). The breaker's row is locked, shared, after the
   * deliveries (docs/concurrency.md, step 12), and what it says then decides: a breaker closed meanwhile, or a
   * delivery made its probe meanwhile, leaves the delivery unqueued instead, for the due-delivery pass to queue
   * at once; closing waits for this statement, so nothing is held after the breaker closed and released.
   */
  async function hold(ids: string[]) {
    await sql.query(
      `WITH d AS (
         SELECT id, endpoint_id FROM webhook_deliveries
         WHERE id = ANY($1::uuid[]) AND status = 'pending' AND held_at IS NULL AND NOT is_test
           AND (locked_until IS NULL OR locked_until < now())
         ORDER BY id FOR NO KEY UPDATE),
       -- The breakers after every delivery: the array is made (from all of d) before the first breaker is read.
       c AS (
         SELECT endpoint_id, state, probe_delivery_id FROM webhook_endpoint_circuits
         WHERE endpoint_id = ANY(ARRAY(SELECT DISTINCT endpoint_id FROM d)) ORDER BY endpoint_id FOR SHARE),
       decided AS (
         SELECT d.id, COALESCE(c.state <> 'closed' AND c.probe_delivery_id IS DISTINCT FROM d.id, false) AS held
         FROM d LEFT JOIN c ON c.endpoint_id = d.endpoint_id)
       UPDATE webhook_deliveries w
       SET held_at = CASE WHEN x.held THEN now() END,
           send_slot_at = CASE WHEN x.held THEN NULL ELSE w.send_slot_at END,
           queued_at = NULL, updated_at = now()
       FROM decided x WHERE w.id = x.id`,
      [ids],
    );
  }

  /**
   * Records successful attempts: each attempt row, its delivery settled, and its endpoint's health only
   * when that changes (every delivery touching the endpoint row would queue them all on its lock; a row
   * another statement holds is skipped, since that statement is recording a success too). Then, after the
   * deliveries, the attempts counted in their endpoints' circuit breakers and delivery figures, in endpoint
   * order (docs/concurrency.md, step 12). A probe's success closes its breaker afterwards (`closeCircuit`).
   */
  const successes = new DataLoader<AttemptRecord, void>(async (records) => {
    const counted = records.filter((r) => !r.delivery.is_test);
    await sql.query(
      `WITH input AS (
         SELECT * FROM unnest($1::uuid[], $2::int[], $3::timestamptz[], $4::int[], $5::int[], $6::text[], $7::uuid[], $8::boolean[])
           AS t(id, attempt, started_at, duration_ms, status_code, response_body, endpoint_id, is_test)),
       -- Endpoints first (skipping any another statement holds), then deliveries in order (docs/concurrency.md).
       stale AS (
         SELECT e.id FROM webhook_endpoints e
         WHERE e.id IN (SELECT endpoint_id FROM input WHERE NOT is_test)
           AND (e.failing_since IS NOT NULL OR e.last_success_at IS NULL OR e.last_success_at < now() - interval '10 seconds')
         ORDER BY e.id FOR NO KEY UPDATE SKIP LOCKED),
       delivery AS (
         UPDATE webhook_deliveries d SET status = 'succeeded', attempts = i.attempt, next_attempt_at = NULL, locked_until = NULL,
           queued_at = NULL, send_slot_at = NULL, held_at = NULL, last_status_code = i.status_code, last_error = NULL, updated_at = now()
         FROM input i WHERE d.id = i.id
           AND d.id IN (SELECT id FROM webhook_deliveries WHERE id IN (SELECT id FROM input) ORDER BY id FOR NO KEY UPDATE)
         RETURNING d.id),
       -- Attempts of the deliveries still there: one erased, or removed with its workspace, while its attempt
       -- was out has nothing left to record it against, and must not fail the others of the batch.
       attempt AS (
         INSERT INTO webhook_attempts (id, delivery_id, attempt, started_at, duration_ms, status_code, error, response_body)
         SELECT gen_random_uuid(), i.id, i.attempt, i.started_at, i.duration_ms, i.status_code, NULL, i.response_body
         FROM input i JOIN delivery x ON x.id = i.id),
       -- After the deliveries (an aggregate of what their update returns), the breakers of their endpoints.
       counted AS (
         SELECT i.endpoint_id, count(*)::int AS n FROM input i JOIN delivery x ON x.id = i.id WHERE NOT i.is_test GROUP BY i.endpoint_id),
       locked AS (
         SELECT c.endpoint_id, ${rolledWindowSql('$10')}
         FROM webhook_endpoint_circuits c WHERE c.endpoint_id = ANY(ARRAY(SELECT endpoint_id FROM counted))
         ORDER BY c.endpoint_id FOR NO KEY UPDATE),
       circuit AS (
         UPDATE webhook_endpoint_circuits c
         SET window_started_at = l.w_started_at, window_attempts = l.w_attempts + k.n, window_failures = l.w_failures,
             previous_attempts = l.p_attempts, previous_failures = l.p_failures
         FROM locked l JOIN counted k ON k.endpoint_id = l.endpoint_id
         WHERE c.endpoint_id = l.endpoint_id
         RETURNING 1),
       -- Then the figures: the breakers' rows are taken before these (the condition runs first, once).
       figures AS (${addFiguresSql('$9', '(SELECT count(*) FROM circuit) >= 0')})
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
        figuresOf(
          counted.map((r) => ({ endpointId: r.delivery.endpoint_id, startedAt: r.startedAt, durationMs: r.durationMs, failed: false })),
        ),
        breaker.windowSeconds,
      ],
    );
    return records.map(() => undefined);
  }, batched);

  /**
   * A failed attempt: scheduled again or given up, counted in the endpoint's circuit breaker and its figures,
   * and the endpoint disabled after 410 or five failing days. The breaker opens when the failures of its recent
   * attempts reach the threshold, and opens again, for twice as long, when this was its probe; while it is open
   * the delivery, if it has attempts left, is held rather than queued for its retry. Locks: the endpoint's row,
   * the delivery's, then the breaker's and the figures' (docs/concurrency.md, steps 11 and 12), then the
   * events telling the tenant's endpoints (steps 13 and 15).
   */
  async function recordFailure(f: FailedAttemptRecord): Promise<FailureEffect> {
    const d = f.delivery;
    return inTransaction(pool, async (tx): Promise<FailureEffect> => {
      // The endpoint's row before the delivery's, as every writer of both takes them (docs/concurrency.md).
      if (!d.is_test) await tx.query('SELECT 1 FROM webhook_endpoints WHERE id = $1 FOR NO KEY UPDATE', [d.endpoint_id]);
      const [still] = await tx.query('SELECT 1 FROM webhook_deliveries WHERE id = $1 FOR NO KEY UPDATE', [d.id]);
      // Erased, or removed with its workspace, while the attempt was out: nothing is left to record.
      if (!still) return { disabled: null, circuit: null };
      await tx.query(
        `INSERT INTO webhook_attempts (id, delivery_id, attempt, started_at, duration_ms, status_code, error, response_body)
         VALUES (gen_random_uuid(), $1, $2, $3, $4, $5, $6, $7)`,
        [d.id, f.attempt, f.startedAt, f.durationMs, f.statusCode, f.error, f.responseBody],
      );
      // A Test does not count for the breaker (nor for the endpoint's health).
      const [circuit] = d.is_test ? [] : await countFailure(tx, d, f);
      // Held while the breaker is open, unless it has no attempt left.
      const held = circuit !== undefined && circuit.state !== 'closed' && f.nextAttemptAt !== null;
      await tx.query(
        `UPDATE webhook_deliveries SET status = $2::"DeliveryStatus", attempts = $3, next_attempt_at = $4, locked_until = NULL, queued_at = NULL,
           send_slot_at = NULL, held_at = CASE WHEN $7::boolean THEN now() END,
           last_status_code = $5, last_error = $6, updated_at = now() WHERE id = $1`,
        [d.id, f.nextAttemptAt ? 'pending' : 'failed', f.attempt, f.nextAttemptAt, f.statusCode, f.error, held],
      );
      if (d.is_test) return { disabled: null, circuit: null };
      await tx.query(addFiguresSql('$1'), [
        figuresOf([{ endpointId: d.endpoint_id, startedAt: f.startedAt, durationMs: f.durationMs, failed: true }]),
      ]);
      const failingSince = d.failing_since ?? f.startedAt;
      const reason = f.gone
        ? 'the endpoint answered 410 Gone'
        : f.startedAt.getTime() - failingSince.getTime() >= DISABLE_AFTER_MS
          ? 'failing with no success for 5 days'
          : null;
      const [endpoint] = await tx.query<{ id: string; url: string }>(
        `UPDATE webhook_endpoints SET failing_since = COALESCE(failing_since, $2),
           enabled = CASE WHEN $3::text IS NULL THEN enabled ELSE false END,
           disabled_reason = COALESCE($3, disabled_reason), updated_at = now()
         WHERE id = $1 RETURNING CASE WHEN $3::text IS NULL THEN NULL ELSE id END AS id, url`,
        [d.endpoint_id, f.startedAt, reason],
      );
      if (reason && endpoint?.id) {
        // A disabled endpoint's breaker is closed, and what it held released: the deliverer then fails each
        // one as "endpoint disabled" (replayable once re-enabled), as it does every pending delivery of a
        // disabled endpoint.
        await tx.query(`UPDATE webhook_endpoint_circuits SET ${CLOSED_CIRCUIT}, release_pending = true WHERE endpoint_id = $1`, [
          d.endpoint_id,
        ]);
        // The tenant's other endpoints hear about it.
        await enqueueEvents(tx, [
          {
            tenantId: d.tenant_id,
            type: 'endpoint.disabled',
            subject: d.endpoint_id,
            dedupKey: `endpoint.disabled:${d.endpoint_id}:${f.startedAt.toISOString()}`,
            payload: { tenant_id: d.tenant_id, id: d.endpoint_id, url: endpoint.url, enabled: false, disabled_reason: reason },
          },
        ]);
        return { disabled: f.gone ? 'gone' : 'failing', circuit: null };
      }
      if (circuit?.transition === 'opened' && endpoint) {
        // Opening (not opening again after a failed probe) is told, as disabling is.
        await enqueueEvents(tx, [
          {
            tenantId: d.tenant_id,
            type: 'endpoint.circuit_opened',
            subject: d.endpoint_id,
            dedupKey: `endpoint.circuit_opened:${d.endpoint_id}:${circuit.opened_at!.toISOString()}`,
            payload: { tenant_id: d.tenant_id, id: d.endpoint_id, url: endpoint.url, circuit: wireCircuit(circuit, breaker.windowSeconds) },
          },
        ]);
      }
      return { disabled: null, circuit: circuit?.transition ?? null };
    });
  }

  /**
   * Counts a failed attempt in its endpoint's breaker (its row locked after the delivery's) and opens it when
   * due: past the threshold while closed, or when the attempt was its probe. Answers the breaker as it now is.
   */
  function countFailure(tx: Sql, d: ClaimedDelivery, f: FailedAttemptRecord) {
    return tx.query<CircuitRow & { transition: 'opened' | 'reopened' | null }>(
      `WITH l AS (
         SELECT c.endpoint_id, c.state, c.probe_delivery_id, ${rolledWindowSql('$2')}
         FROM webhook_endpoint_circuits c WHERE c.endpoint_id = $1 FOR NO KEY UPDATE),
       counted AS (
         SELECT l.*, l.w_attempts + 1 AS attempts, l.w_failures + 1 AS failures,
                greatest(0, 1 - extract(epoch FROM now() - l.w_started_at) / $2) AS weight
         FROM l),
       t AS (
         SELECT counted.*, CASE
           WHEN state = 'half_open' AND probe_delivery_id = $3 THEN 'reopened'
           WHEN state = 'closed' AND p_attempts * weight + attempts >= $4
                AND p_failures * weight + failures >= $5 * (p_attempts * weight + attempts) THEN 'opened'
         END AS transition
         FROM counted)
       UPDATE webhook_endpoint_circuits c
       SET window_started_at = t.w_started_at, window_attempts = t.attempts, window_failures = t.failures,
           previous_attempts = t.p_attempts, previous_failures = t.p_failures,
           state = CASE WHEN t.transition IS NULL THEN c.state ELSE 'open' END,
           opened_at = CASE WHEN t.transition = 'opened' THEN now() ELSE c.opened_at END,
           openings = CASE WHEN t.transition IS NULL THEN c.openings ELSE c.openings + 1 END,
           -- The nth opening since the breaker was closed waits probe × 2^(n-1) seconds, up to the cap.
           next_probe_at = CASE WHEN t.transition IS NULL THEN c.next_probe_at
                                ELSE now() + make_interval(secs => least($7, $6 * power(2, least(30, c.openings)))) END,
           probe_delivery_id = CASE WHEN t.transition IS NULL THEN c.probe_delivery_id END,
           probe_until = CASE WHEN t.transition IS NULL THEN c.probe_until END,
           release_pending = CASE WHEN t.transition IS NULL THEN c.release_pending ELSE false END,
           updated_at = now()
       FROM t WHERE c.endpoint_id = t.endpoint_id
       RETURNING ${CIRCUIT_COLUMNS.split(', ')
         .map((col) => `c.${col}`)
         .join(', ')}, t.transition`,
      [d.endpoint_id, breaker.windowSeconds, d.id, breaker.minAttempts, breaker.failureRate, breaker.probeSeconds, breaker.probeMaxSeconds],
    );
  }

  /**
   * After its probe was delivered: closes the endpoint's breaker, if that attempt is still its probe, and tells
   * the tenant's endpoints (endpoint.circuit_closed). The deliveries it held are released afterwards
   * (`releaseHeld`), in transactions of their own: this one takes the breaker's row alone (then the events,
   * steps 13 and 15), and a statement holding deliveries for the breaker has ended before it (`hold`).
   * Answers whether it closed the breaker.
   */
  async function closeCircuit(d: ClaimedDelivery): Promise<boolean> {
    return inTransaction(pool, async (tx) => {
      const [closed] = await tx.query<CircuitRow & { url: string }>(
        `UPDATE webhook_endpoint_circuits c SET ${CLOSED_CIRCUIT}, release_pending = true
         FROM webhook_endpoints e
         WHERE c.endpoint_id = $1 AND c.state = 'half_open' AND c.probe_delivery_id = $2 AND e.id = c.endpoint_id
         RETURNING ${CIRCUIT_COLUMNS.split(', ')
           .map((col) => `c.${col}`)
           .join(', ')}, e.url`,
        [d.endpoint_id, d.id],
      );
      if (!closed) return false;
      await enqueueEvents(tx, [
        {
          tenantId: d.tenant_id,
          type: 'endpoint.circuit_closed',
          subject: d.endpoint_id,
          dedupKey: `endpoint.circuit_closed:${d.endpoint_id}:${d.id}`,
          payload: { tenant_id: d.tenant_id, id: d.endpoint_id, url: closed.url, circuit: wireCircuit(closed, breaker.windowSeconds) },
        },
      ]);
      return true;
    });
  }

  return {
    claim: (id: string) => claims.load(id),
    recordSuccess: (r: AttemptRecord) => successes.load(r),
    recordFailure,
    closeCircuit,
    /** Releases what the endpoint's closed breaker still holds (`releaseAllHeld`). */
    releaseCircuit: (endpointId: string) => releaseAllHeld(sql, endpointId),
    /** Gives a leased delivery back, due again after `delaySeconds`. */
    async release(id: string, delaySeconds: number) {
      await sql.query(
        `UPDATE webhook_deliveries SET locked_until = NULL, queued_at = NULL, next_attempt_at = now() + make_interval(secs => $2), updated_at = now() WHERE id = $1`,
        [id, delaySeconds],
      );
    },
    async failDisabled(id: string) {
      await sql.query(
        `UPDATE webhook_deliveries SET status = 'failed', locked_until = NULL, send_slot_at = NULL, held_at = NULL, last_error = 'endpoint disabled', updated_at = now() WHERE id = $1`,
        [id],
      );
    },
  };
}

/**
 * Deletes the deliveries of an erased customer's events (`eventIds`) and any other whose body names it, with
 * their attempts (and the receivers' response excerpts), in id order (docs/concurrency.md, step 12).
 * Answers how many went.
 */
export async function forgetDeliveriesAbout(sql: Sql, tenantId: string, eventIds: string[], customerId: string): Promise<number> {
  const rows = await sql.query(
    `DELETE FROM webhook_deliveries WHERE id IN (
       SELECT id FROM webhook_deliveries WHERE tenant_id = $1
         AND (outbox_event_id = ANY($2::uuid[]) OR strpos(envelope::text, $3) > 0)
       ORDER BY id FOR UPDATE)
     RETURNING id`,
    [tenantId, eventIds, customerId],
  );
  return rows.length;
}

/**
 * Re-arms the deliveries `where` picks (over webhook_deliveries, with `values`) for one more attempt now,
 * marked queued, in id order (docs/concurrency.md, step 12): a resend or a replay. Answers them with their
 * endpoint's URL.
 */
export function rearmDeliveries(sql: Sql, where: string, values: unknown[]) {
  return sql.query<{ id: string; endpoint_id: string; tenant_id: string; url: string }>(
    `WITH target AS (SELECT id FROM webhook_deliveries WHERE ${where} ORDER BY id FOR NO KEY UPDATE)
     UPDATE webhook_deliveries d SET status = 'pending', next_attempt_at = now(), locked_until = NULL, queued_at = now(), held_at = NULL, updated_at = now()
     FROM target, webhook_endpoints e WHERE d.id = target.id AND e.id = d.endpoint_id
     RETURNING d.id, d.endpoint_id, d.tenant_id, e.url`,
    values,
  );
}

const TEST_ENVELOPE = envelopeSql({
  id: '$1::uuid',
  tenantId: '$2::uuid',
  type: '$4::text',
  subject: "'test'",
  time: 'now()',
  payload: '$5::jsonb',
});

/**
 * A Test delivery of `event` with its sample `payload`, marked queued: its request attempts it at once, so
 * the due-delivery pass must not take it first. None for a workspace whose deletion is scheduled (it sends
 * nothing); answers whether it was made.
 */
export async function insertTestDelivery(
  sql: Sql,
  t: { id: string; tenantId: string; endpointId: string; event: string; payload: unknown },
): Promise<boolean> {
  const inserted = await sql.query(
    `INSERT INTO webhook_deliveries (id, tenant_id, endpoint_id, event_type, envelope, is_test, status, next_attempt_at, queued_at, created_at, updated_at)
     SELECT $1::uuid, $2::uuid, $3::uuid, $4::text, ${TEST_ENVELOPE}, true, 'pending', now(), now(), now(), now()
     WHERE NOT EXISTS (SELECT 1 FROM tenants t WHERE t.id = $2::uuid AND t.deletion_requested_at IS NOT NULL)
     RETURNING 1`,
    [t.id, t.tenantId, t.endpointId, t.event, JSON.stringify(t.payload)],
  );
  return inserted.length > 0;
}

/** A Test the deliverer could not send now is settled as failed, so that no worker sends it later. */
export async function settleUnsentTest(sql: Sql, id: string, reason: string): Promise<void> {
  await sql.query(
    `UPDATE webhook_deliveries SET status = 'failed', queued_at = NULL, next_attempt_at = NULL, last_error = $2, updated_at = now()
     WHERE id = $1 AND status = 'pending'`,
    [id, reason],
  );
}

/** Every pending delivery is to be queued again: the in-process queue that held their jobs started empty. */
export async function requeuePendingDeliveries(sql: Sql): Promise<void> {
  await sql.query(`UPDATE webhook_deliveries SET queued_at = NULL WHERE status = 'pending'`);
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

/**
 * Releases up to RELEASE_BATCH deliveries held by an endpoint's breaker once it is closed (or was reset): each is
 * due at once, whatever retry it was waiting for, and queued by the due-delivery pass. When fewer remain, the
 * breaker no longer has any to release. The deliveries are taken in id order, holding nothing else, then the
 * breaker's row (docs/concurrency.md, step 12); a breaker that opened again meanwhile keeps what it holds.
 * Answers how many it released.
 */
export async function releaseHeld(sql: Sql, endpointId: string): Promise<number> {
  const [row] = await sql.query<{ released: number }>(
    `WITH c AS (SELECT updated_at FROM webhook_endpoint_circuits WHERE endpoint_id = $1 AND state = 'closed' AND release_pending),
     released AS (
       UPDATE webhook_deliveries d SET held_at = NULL, queued_at = NULL, next_attempt_at = LEAST(d.next_attempt_at, now()), updated_at = now()
       WHERE d.id IN (SELECT id FROM webhook_deliveries
                      WHERE endpoint_id = $1 AND status = 'pending' AND held_at IS NOT NULL AND EXISTS (SELECT 1 FROM c)
                      ORDER BY id LIMIT $2 FOR NO KEY UPDATE)
       RETURNING 1),
     counted AS (SELECT count(*)::int AS n FROM released),
     -- Done when a batch was not full, unless the breaker changed since it was read (it may hold others now).
     done AS (
       UPDATE webhook_endpoint_circuits SET release_pending = false
       WHERE endpoint_id = $1 AND state = 'closed' AND release_pending AND updated_at = (SELECT updated_at FROM c)
         AND (SELECT n FROM counted) < $2)
     SELECT n AS released FROM counted`,
    [endpointId, RELEASE_BATCH],
  );
  return row!.released;
}

/** Releases what an endpoint's closed breaker holds, batch after batch; answers how many. */
export async function releaseAllHeld(sql: Sql, endpointId: string): Promise<number> {
  let released = 0;
  let n: number;
  do {
    n = await releaseHeld(sql, endpointId);
    released += n;
  } while (n === RELEASE_BATCH);
  return released;
}

/**
 * The worker's pass over the breakers that need it (every second, in every worker; a few rows by their index):
 * those whose deliveries are to be released, and the open ones whose probe is due. A probe is armed in one
 * statement that waits on nothing (both rows SKIP LOCKED, the delivery's first, as step 12 orders them): the
 * endpoint's delivery due soonest by its own schedule (and not held back by ordered delivery) becomes the
 * probe, no longer held and marked queued, and the breaker half open, its probe its own until the lease ends.
 * A breaker with nothing due to probe with is looked at again `revisitSeconds` later (its breaker row alone).
 * Answers the probes armed, whose jobs the caller publishes, and the endpoints to release.
 */
export async function circuitsToTend(
  sql: Sql,
  opts: { leaseSeconds: number; revisitSeconds: number },
): Promise<{ probes: { id: string; endpoint_id: string; tenant_id: string }[]; releases: string[] }> {
  const due = await sql.query<{ endpoint_id: string; release: boolean }>(
    `SELECT endpoint_id, release_pending AS release FROM webhook_endpoint_circuits
     WHERE (state <> 'closed' OR release_pending)
       AND (release_pending OR (state = 'open' AND next_probe_at <= now()) OR (state = 'half_open' AND probe_until < now()))
     ORDER BY release_pending DESC, coalesce(next_probe_at, probe_until) LIMIT 500`,
  );
  const probes: { id: string; endpoint_id: string; tenant_id: string }[] = [];
  for (const c of due.filter((r) => !r.release)) {
    const armed = await sql.query<{ id: string; endpoint_id: string; tenant_id: string }>(
      `WITH candidate AS (
         SELECT d.id FROM webhook_deliveries d
         WHERE d.endpoint_id = $1 AND d.status = 'pending' AND NOT d.is_test AND d.next_attempt_at <= now()
           AND (d.locked_until IS NULL OR d.locked_until < now())
           AND NOT ${heldByEarlier('d')}
         ORDER BY d.next_attempt_at, d.id LIMIT 1 FOR NO KEY UPDATE SKIP LOCKED),
       circuit AS (
         UPDATE webhook_endpoint_circuits c
         SET state = 'half_open', probe_delivery_id = (SELECT id FROM candidate), probe_until = now() + make_interval(secs => $2),
             next_probe_at = NULL, updated_at = now()
         WHERE c.endpoint_id IN (SELECT endpoint_id FROM webhook_endpoint_circuits
                                 WHERE endpoint_id = $1 AND EXISTS (SELECT 1 FROM candidate)
                                   AND ((state = 'open' AND next_probe_at <= now()) OR (state = 'half_open' AND probe_until < now()))
                                 FOR NO KEY UPDATE SKIP LOCKED)
         RETURNING c.probe_delivery_id)
       UPDATE webhook_deliveries d SET held_at = NULL, queued_at = now(), updated_at = now()
       FROM circuit WHERE d.id = circuit.probe_delivery_id
       RETURNING d.id, d.endpoint_id, d.tenant_id`,
      [c.endpoint_id, opts.leaseSeconds],
    );
    probes.push(...armed);
    // With no delivery due to probe with (none pending, or none whose own retry has come), the breaker stays open
    // and is looked at again later, so that it does not come first in every pass ahead of those with one.
    if (!armed.length)
      await sql.query(
        `UPDATE webhook_endpoint_circuits
         SET state = 'open', next_probe_at = now() + make_interval(secs => $2), probe_delivery_id = NULL, probe_until = NULL
         WHERE endpoint_id = $1 AND ((state = 'open' AND next_probe_at <= now()) OR (state = 'half_open' AND probe_until < now()))
           AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d
                           WHERE d.endpoint_id = $1 AND d.status = 'pending' AND NOT d.is_test AND d.next_attempt_at <= now())`,
        [c.endpoint_id, opts.revisitSeconds],
      );
  }
  return { probes, releases: due.filter((r) => r.release).map((r) => r.endpoint_id) };
}

/**
 * The API closing an endpoint's breaker when the tenant enables or disables it: nothing counted, nothing held
 * back, what it held released by the worker's pass (to be sent, or failed as "endpoint disabled" while the
 * endpoint is). The caller holds the endpoint's row; the breaker's comes after it (docs/concurrency.md, step 12).
 */
export async function resetCircuit(sql: Sql, endpointId: string): Promise<void> {
  await sql.query(`UPDATE webhook_endpoint_circuits SET ${CLOSED_CIRCUIT}, release_pending = true WHERE endpoint_id = $1::uuid`, [
    endpointId,
  ]);
}

/**
 * Deliveries whose (re)attempt is due and that no job is waiting for: queue them. One an ordered endpoint
 * holds behind an earlier event of its subject is left until that one is settled (ordering.ts), and one its
 * endpoint's open circuit breaker holds (held_at) until the breaker releases it: the walk is over an index that
 * leaves those out (webhook_deliveries_due_idx), so a large held backlog costs it nothing.
 */
export async function queueDue(pool: pg.Pool, queue: Queue, opts: { requeueAfterSeconds?: number; limit?: number } = {}): Promise<number> {
  const rows = await onPg(pool).query<{ id: string; endpoint_id: string; tenant_id: string }>(
    `UPDATE webhook_deliveries SET queued_at = now()
     WHERE id IN (
       SELECT id FROM webhook_deliveries
       WHERE status = 'pending' AND held_at IS NULL AND next_attempt_at <= now()
         AND (locked_until IS NULL OR locked_until < now())
         AND (queued_at IS NULL OR queued_at < now() - make_interval(secs => $2))
         AND NOT EXISTS (SELECT 1 FROM tenants t WHERE t.id = webhook_deliveries.tenant_id AND t.deletion_requested_at IS NOT NULL)
         AND NOT ${heldByEarlier('webhook_deliveries')}
       ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED)
     RETURNING id, endpoint_id, tenant_id`,
    [opts.limit ?? 500, opts.requeueAfterSeconds ?? 60],
  );
  // A job that fails to publish leaves queued_at set; queueDue queues it again after the lease time.
  await publishJobs(queue, 'outbound.deliveries', deliveryJobs(rows));
  return rows.length;
}

/**
 * After a workspace's deletion is cancelled: its pending deliveries, whose jobs were turned away while it was
 * scheduled, are marked unqueued so that the next due-delivery pass (every second) queues them, rather than
 * only once their jobs count as lost. In id order, as every writer of several deliveries takes them
 * (docs/concurrency.md, step 12). Answers how many deliveries are pending, all of which may now go out.
 */
export async function releaseHeldDeliveries(sql: Sql, tenantId: string): Promise<number> {
  const [row] = await sql.query<{ held: number }>(
    `WITH released AS (
       UPDATE webhook_deliveries SET queued_at = NULL
       WHERE id IN (SELECT id FROM webhook_deliveries WHERE tenant_id = $1 AND status = 'pending' AND queued_at IS NOT NULL ORDER BY id FOR NO KEY UPDATE)
       RETURNING 1)
     SELECT (SELECT count(*) FROM webhook_deliveries WHERE tenant_id = $1 AND status = 'pending')::int AS held`,
    [tenantId],
  );
  return row!.held;
}
