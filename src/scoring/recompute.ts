import type pg from 'pg';
import { inTransaction, onPg, type Sql } from '../db/sql.ts';
import type { HealthStatus } from '../contract/enums.ts';
import type { RowOf, SourceOf } from '../contract/serialize.ts';
import { columnsOf } from '../db/columns.ts';
import { enqueueEvents, type OutboxInput } from '../outbox/events/enqueue.ts';
import { alertEvent, eventOf } from '../outbox/events/payloads.ts';
import { EVENTS, type PayloadOf } from '../outbox/events/registry.ts';
import {
  type AlertChange,
  type AlertType,
  evaluateAlerts,
  type ExistingAlert,
  MANUAL_RESOLVE_COOLDOWN_MS,
  planAlertChanges,
  type Severity,
} from './alert-rules.ts';
import { ALERT_COLUMNS, type AlertRow, type AlertWrites, writeAlertChanges } from './alert-rows.ts';
import { type Assessment, assessHealth, carryFrom } from './assess.ts';
import { type ChurnModel, daysSinceActivity, DEFAULT_MODEL, predict, type Prediction } from './churn-model.ts';
import { DIMENSIONS, riskLevelFor, tenantWeights } from './dimensions.ts';
import { extractFeatures } from './features.ts';
import { type Claim, finishClaims } from './scoring-queue.ts';
import { attribute, type Change, moved, restoreInputs, type ScoringInputs, storedInputs } from './attribution.ts';
import { type AnnouncedDrivers, announcedDrivers } from './announced-drivers.ts';
import {
  auditedChangesSince,
  driversSince,
  feeds,
  type NewHealthChange,
  type RecordedDrivers,
  recordHealthChanges,
  SETTINGS_ACTIONS,
  signalSourcesSince,
  storedAuditSource,
  storedSignalSource,
} from './health-changes.ts';

/** A change this large (or a new status band) is announced with customer.health_changed. */
const HEALTH_ANNOUNCE_POINTS = 5;
/** A change this large (or a new risk level or model) is announced with churn_prediction.updated. */
const CHURN_ANNOUNCE_DELTA = 0.05;

/** The customer as its events carry it, and what scoring reads beside. */
type CustomerRow = RowOf<PayloadOf<'customer.created'>> & {
  scoring_weights: unknown;
  active_churn_model_id: string | null;
  announced_score: number | null;
  announced_status: HealthStatus | null;
  pred_model_version: string | null;
  announced_probability: number | null;
  /** When the score and the churn probability were last announced. */
  health_announced_at: Date | null;
  churn_announced_at: Date | null;
  /** What the previous computation read, and when it ran. */
  prev_inputs: unknown;
  prev_computed_at: Date | null;
};

interface HistoryRow {
  customer_id: string;
  last_usage: number | null;
  last_engagement: number | null;
  last_support: number | null;
  score_7d: number | null;
  usage_7d: number | null;
  engagement_7d: number | null;
  support_7d: number | null;
  billing_7d: number | null;
  growth_7d: number | null;
  score_30d: number | null;
}

const utcDay = (d: Date) => d.toISOString().slice(0, 10);

// Scores at fixed days back; a missing day (the service was down) falls back up to three days earlier.
const HISTORY = `
SELECT c.id AS customer_id,
  l.usage AS last_usage, l.engagement AS last_engagement, l.support AS last_support,
  w.score AS score_7d, w.usage AS usage_7d, w.engagement AS engagement_7d, w.support AS support_7d, w.billing AS billing_7d, w.growth AS growth_7d,
  m.score AS score_30d
FROM unnest($1::uuid[]) AS c(id)
LEFT JOIN LATERAL (SELECT usage, engagement, support FROM health_history h
  WHERE h.customer_id = c.id AND h.day <= $2::date ORDER BY h.day DESC LIMIT 1) l ON true
LEFT JOIN LATERAL (SELECT score, usage, engagement, support, billing, growth FROM health_history h
  WHERE h.customer_id = c.id AND h.day <= $2::date - 7 AND h.day >= $2::date - 10 ORDER BY h.day DESC LIMIT 1) w ON true
LEFT JOIN LATERAL (SELECT score FROM health_history h
  WHERE h.customer_id = c.id AND h.day <= $2::date - 30 AND h.day >= $2::date - 33 ORDER BY h.day DESC LIMIT 1) m ON true`;

interface Computed {
  row: CustomerRow;
  health: Assessment;
  prediction: Prediction | null;
  alerts: AlertChange[];
  announceHealth: boolean;
  announceChurn: boolean;
  inputs: ScoringInputs;
  /** What moved since the previous computation, with its sources; null when nothing moved or nothing came before. */
  change: NewHealthChange | null;
}

export interface RecomputeResult {
  computed: number;
  alertsCreated: number;
  alertsResolved: number;
  events: number;
}

export interface Scorer {
  /** Recomputes these customers as of `now` and writes everything in one transaction (claims end in it too). */
  recompute(claims: Claim[], now?: Date): Promise<RecomputeResult>;
}

/** A customer's list fields as its score leaves them. */
export interface CustomerScore {
  id: string;
  score: number | null;
  status: string | null;
  probability: number | null;
  risk: string | null;
}

/**
 * Writes the scored customers' list fields in the caller's transaction, after their rows were locked in id
 * order. The customers table is the customer service's to change, and scoring does not import services:
 * the composition root hands this in.
 */
export type SaveScores = (sql: Sql, scores: CustomerScore[]) => Promise<void>;

/** Trained models never change once stored, so each process keeps the ones it has read. */
export function createScorer(pool: pg.Pool, saveScores: SaveScores): Scorer {
  const sql = onPg(pool);
  const models = new Map<string, ChurnModel>();

  async function loadModels(ids: string[]): Promise<void> {
    const missing = ids.filter((id) => !models.has(id));
    if (missing.length === 0) return;
    const rows = await sql.query<{
      id: string;
      version: string;
      intercept: number;
      coefficients: object;
      baseline: object;
      trained_at: Date;
    }>('SELECT id, version, intercept, coefficients, baseline, trained_at FROM churn_models WHERE id = ANY($1::uuid[])', [missing]);
    for (const r of rows) {
      models.set(r.id, {
        version: r.version,
        intercept: r.intercept,
        coefficients: r.coefficients as Record<string, number>,
        baseline: r.baseline as Record<string, number>,
        trainedAt: r.trained_at,
      });
    }
  }

  async function recompute(claims: Claim[], now = new Date()): Promise<RecomputeResult> {
    const ids = claims.map((c) => c.customerId);
    const result: RecomputeResult = { computed: 0, alertsCreated: 0, alertsResolved: 0, events: 0 };
    const [customers, features, history, alerts] = await Promise.all([
      sql.query<CustomerRow>(
        `SELECT ${columnsOf(EVENTS['customer.created'].payload, 'c')},
           t.scoring_weights, t.active_churn_model_id,
           h.announced_score, h.announced_status::text AS announced_status,
           p.model_version AS pred_model_version, p.announced_probability,
           h.announced_at AS health_announced_at, p.announced_at AS churn_announced_at,
           h.inputs AS prev_inputs, h.computed_at AS prev_computed_at
         FROM customers c JOIN tenants t ON t.id = c.tenant_id
         LEFT JOIN health_snapshots h ON h.customer_id = c.id
         LEFT JOIN churn_predictions p ON p.customer_id = c.id
         WHERE c.id = ANY($1::uuid[])`,
        [ids],
      ),
      extractFeatures(
        sql,
        ids.map((customerId) => ({ customerId, asOf: now })),
      ),
      sql.query<HistoryRow>(HISTORY, [ids, utcDay(now)]),
      sql.query<AlertRow>(
        `SELECT ${ALERT_COLUMNS} FROM alerts
         WHERE customer_id = ANY($1::uuid[]) AND (status <> 'resolved' OR (resolved_by = 'user' AND resolved_at > $2))`,
        [ids, new Date(now.getTime() - MANUAL_RESOLVE_COOLDOWN_MS)],
      ),
    ]);
    const previous = new Map(customers.map((c) => [c.id, restoreInputs(c.prev_inputs)]));
    // The models of the previous computations too: a change of model is explained by replaying the old one.
    await loadModels([
      ...new Set(
        customers.flatMap((c) => [c.active_churn_model_id, previous.get(c.id)?.modelId ?? null].filter((id): id is string => id !== null)),
      ),
    ]);
    const modelOf = (id: string | null) => (id && models.get(id)) || DEFAULT_MODEL;
    const pastOf = new Map(history.map((h) => [h.customer_id, h]));
    const alertsOf = new Map<string, AlertRow[]>();
    for (const a of alerts) alertsOf.set(a.customerId, [...(alertsOf.get(a.customerId) ?? []), a]);

    const computed: Computed[] = customers.map((row) => {
      const f = features.get(row.id)!;
      const h = pastOf.get(row.id);
      const inputs: ScoringInputs = {
        features: f,
        carry: carryFrom({ usage: h?.last_usage, engagement: h?.last_engagement, support: h?.last_support }),
        weights: tenantWeights(row.scoring_weights),
        score30d: h?.score_30d ?? null,
        modelId: row.active_churn_model_id && models.has(row.active_churn_model_id) ? row.active_churn_model_id : null,
      };
      const health = assessHealth(f, inputs.carry, inputs.weights, {
        score7d: h?.score_7d ?? null,
        score30d: h?.score_30d ?? null,
        dimensions7d: {
          usage: h?.usage_7d,
          engagement: h?.engagement_7d,
          support: h?.support_7d,
          billing: h?.billing_7d,
          growth: h?.growth_7d,
        },
      });
      const model = modelOf(inputs.modelId);
      const prediction = health.score === null ? null : predict(model, f, health.churnInputs);
      const existing = (alertsOf.get(row.id) ?? []).map(toExisting);
      const firings = evaluateAlerts({
        name: row.name,
        features: f,
        score: health.score,
        change7d: health.change7d,
        weakest: health.weakestDimension,
        daysInactive: daysSinceActivity(f, health.churnInputs),
        prediction,
      });
      const announceHealth =
        health.score !== null &&
        (row.announced_score === null ||
          row.announced_status !== health.status ||
          Math.abs(health.score - row.announced_score) >= HEALTH_ANNOUNCE_POINTS);
      const announceChurn =
        prediction !== null &&
        (row.announced_probability === null ||
          riskLevelFor(row.announced_probability) !== prediction.riskLevel ||
          row.pred_model_version !== prediction.modelVersion ||
          Math.abs(prediction.probability - row.announced_probability) >= CHURN_ANNOUNCE_DELTA);
      return {
        row,
        health,
        prediction,
        alerts: planAlertChanges(
          firings,
          existing.filter((a) => a.status !== 'resolved'),
          existing.filter((a) => a.status === 'resolved'),
          now,
        ),
        announceHealth,
        announceChurn,
        inputs,
        change: null,
      };
    });
    await explainChanges(computed, previous, modelOf, now);

    const written = await inTransaction(pool, async (tx) => {
      // First the customers' rows, in customer order (docs/concurrency.md): an erasure, which locks its
      // customer's row before removing anything, waits for this batch or this batch for it, never both; so
      // does another worker's batch holding some of the same customers (a lease that ran out). Taken for
      // update of anything but their keys, which events being applied (taking them only to check a key)
      // never wait for. A customer erased since it was read is left out.
      const present = await tx.query<{ id: string }>('SELECT id FROM customers WHERE id = ANY($1::uuid[]) ORDER BY id FOR NO KEY UPDATE', [
        computed.map((c) => c.row.id),
      ]);
      const kept = new Set(present.map((r) => r.id));
      // Every statement below then meets the rows of the batch in customer order too.
      const batch = computed.filter((c) => kept.has(c.row.id)).sort((a, b) => (a.row.id < b.row.id ? -1 : 1));
      const { events, ...counts } = await write(tx, saveScores, batch, now);
      Object.assign(result, counts, { events: events.length });
      await finishClaims(tx, claims);
      // Last: the outbox's sequence counters are the last lock a transaction takes (docs/concurrency.md).
      await enqueueEvents(tx, events);
      return batch.length;
    });
    result.computed = written;
    return result;
  }

  /** Attributes each customer's change since its previous computation and gathers the sources it cites. */
  async function explainChanges(
    computed: Computed[],
    previous: Map<string, ScoringInputs | null>,
    modelOf: (id: string | null) => ChurnModel,
    now: Date,
  ): Promise<void> {
    const changed: { c: Computed; change: Change; since: Date }[] = [];
    for (const c of computed) {
      const before = previous.get(c.row.id);
      if (!before || !c.row.prev_computed_at) continue;
      const change = attribute(before, c.inputs, modelOf);
      if (moved(change)) changed.push({ c, change, since: c.row.prev_computed_at });
    }
    if (changed.length === 0) return;
    const needsSettings = changed.filter((x) => x.change.drivers.some((d) => d.group === 'settings'));
    const [signals, audits] = await Promise.all([
      signalSourcesSince(
        sql,
        changed.map((x) => ({ customerId: x.c.row.id, since: x.since })),
        now,
      ),
      needsSettings.length
        ? auditedChangesSince(
            sql,
            [...new Set(needsSettings.map((x) => x.c.row.tenantId))],
            SETTINGS_ACTIONS,
            new Date(Math.min(...needsSettings.map((x) => x.since.getTime()))),
            now,
          )
        : Promise.resolve([]),
    ]);
    for (const { c, change, since } of changed) {
      const own = [
        ...signals.filter((s) => s.customerId === c.row.id).map(storedSignalSource),
        ...audits.filter((a) => a.tenantId === c.row.tenantId && a.occurredAt > since).map(storedAuditSource),
      ];
      // Only sources that feed a driver's group are kept: a chat message does not explain a billing change.
      const sources = own.filter((s) => change.drivers.some((d) => feeds(s, d.group)));
      c.change = { tenantId: c.row.tenantId, customerId: c.row.id, change, sources };
    }
  }

  return { recompute };
}

const toExisting = (a: AlertRow): ExistingAlert => ({
  id: a.id,
  alertType: a.alertType as AlertType,
  severity: a.severity as Severity,
  status: a.status as ExistingAlert['status'],
  details: a.details,
  resolvedBy: a.resolvedBy,
  resolvedAt: a.resolvedAt,
});

/**
 * Every write of a batch, set-based: a fixed number of statements whatever the batch size. Answers the
 * outbound events it makes, for the caller to write last.
 */
async function write(
  sql: Sql,
  saveScores: SaveScores,
  batch: Computed[],
  now: Date,
): Promise<Omit<RecomputeResult, 'computed' | 'events'> & { events: OutboxInput[] }> {
  const events: OutboxInput[] = [];
  const col = <T>(f: (c: Computed) => T) => batch.map(f);

  // Customers: the denormalised list fields (written by the customers' owner, only where they changed).
  await saveScores(
    sql,
    batch.map((c) => ({
      id: c.row.id,
      score: c.health.score,
      status: c.health.status,
      probability: c.prediction?.probability ?? null,
      risk: c.prediction?.riskLevel ?? null,
    })),
  );

  await sql.query(
    `INSERT INTO health_snapshots (id, tenant_id, customer_id, score, status, dimensions, trend_7d, trend_30d, weakest_dimension,
       announced_score, announced_status, announced_at, inputs, computed_at)
     SELECT gen_random_uuid(), t.tenant_id, t.customer_id, t.score, t.status::"HealthStatus", t.dimensions, t.trend_7d, t.trend_30d,
       t.weakest, t.announced_score, t.announced_status::"HealthStatus", t.announced_at, t.inputs, $11
     FROM unnest($1::uuid[], $2::uuid[], $3::int[], $4::text[], $5::jsonb[], $6::float8[], $7::float8[], $8::text[], $9::int[], $10::text[], $12::jsonb[],
       $13::timestamptz[])
       AS t(tenant_id, customer_id, score, status, dimensions, trend_7d, trend_30d, weakest, announced_score, announced_status, inputs, announced_at)
     ON CONFLICT (customer_id) DO UPDATE SET score = excluded.score, status = excluded.status, dimensions = excluded.dimensions,
       trend_7d = excluded.trend_7d, trend_30d = excluded.trend_30d, weakest_dimension = excluded.weakest_dimension,
       announced_score = excluded.announced_score, announced_status = excluded.announced_status, announced_at = excluded.announced_at,
       inputs = excluded.inputs, computed_at = excluded.computed_at`,
    [
      col((c) => c.row.tenantId),
      col((c) => c.row.id),
      col((c) => c.health.score),
      col((c) => c.health.status),
      col((c) =>
        JSON.stringify(
          c.health.dimensions.map(({ key, score, weight, contribution, trend, signals }) => ({
            key,
            score,
            weight,
            contribution,
            trend,
            signals,
          })),
        ),
      ),
      col((c) => c.health.change7d),
      col((c) => c.health.change30d),
      col((c) => c.health.weakestDimension),
      col((c) => (c.announceHealth ? c.health.score : c.row.announced_score)),
      col((c) => (c.announceHealth ? c.health.status : c.row.announced_status)),
      now,
      col((c) => storedInputs(c.inputs)),
      col((c) => (c.announceHealth ? now : c.row.health_announced_at)),
    ],
  );

  const dim = (key: (typeof DIMENSIONS)[number]) => col((c) => c.health.dimensions.find((d) => d.key === key)!.score);
  await sql.query(
    `INSERT INTO health_history (customer_id, day, tenant_id, score, status, usage, engagement, support, billing, growth, churn_probability, computed_at)
     SELECT t.customer_id, $11::date, t.tenant_id, t.score, t.status::"HealthStatus", t.usage, t.engagement, t.support, t.billing, t.growth,
       t.probability, $12
     FROM unnest($1::uuid[], $2::uuid[], $3::int[], $4::text[], $5::float8[], $6::float8[], $7::float8[], $8::float8[], $9::float8[], $10::float8[])
       AS t(customer_id, tenant_id, score, status, usage, engagement, support, billing, growth, probability)
     ON CONFLICT (customer_id, day) DO UPDATE SET score = excluded.score, status = excluded.status, usage = excluded.usage,
       engagement = excluded.engagement, support = excluded.support, billing = excluded.billing, growth = excluded.growth,
       churn_probability = excluded.churn_probability, computed_at = excluded.computed_at`,
    [
      col((c) => c.row.id),
      col((c) => c.row.tenantId),
      col((c) => c.health.score),
      col((c) => c.health.status),
      dim('usage'),
      dim('engagement'),
      dim('support'),
      dim('billing'),
      dim('growth'),
      col((c) => c.prediction?.probability ?? null),
      utcDay(now),
      now,
    ],
  );

  // The explanations, beside the history they explain (step 8, in customer order like the batch).
  await recordHealthChanges(
    sql,
    batch.flatMap((c) => (c.change ? [c.change] : [])),
    now,
  );

  const predicted = batch.filter((c) => c.prediction);
  if (predicted.length) {
    const p = <T>(f: (c: Computed & { prediction: Prediction }) => T) =>
      predicted.map((c) => f(c as Computed & { prediction: Prediction }));
    await sql.query(
      `INSERT INTO churn_predictions (id, tenant_id, customer_id, probability, risk_level, risk_factors, recommended_interventions, features,
         model_version, announced_probability, announced_at, predicted_at)
       SELECT gen_random_uuid(), t.tenant_id, t.customer_id, t.probability, t.risk::"RiskLevel", t.factors, t.interventions, t.features,
         t.model_version, t.announced, t.announced_at, $10
       FROM unnest($1::uuid[], $2::uuid[], $3::float8[], $4::text[], $5::jsonb[], $6::jsonb[], $7::jsonb[], $8::text[], $9::float8[], $11::timestamptz[])
         AS t(tenant_id, customer_id, probability, risk, factors, interventions, features, model_version, announced, announced_at)
       ON CONFLICT (customer_id) DO UPDATE SET probability = excluded.probability, risk_level = excluded.risk_level,
         risk_factors = excluded.risk_factors, recommended_interventions = excluded.recommended_interventions, features = excluded.features,
         model_version = excluded.model_version, announced_probability = excluded.announced_probability, announced_at = excluded.announced_at,
         predicted_at = excluded.predicted_at`,
      [
        p((c) => c.row.tenantId),
        p((c) => c.row.id),
        p((c) => c.prediction.probability),
        p((c) => c.prediction.riskLevel),
        p((c) => JSON.stringify(c.prediction.riskFactors)),
        p((c) => JSON.stringify(c.prediction.recommendedInterventions)),
        p((c) => JSON.stringify(c.prediction.features)),
        p((c) => c.prediction.modelVersion),
        p((c) => (c.announceChurn ? c.prediction.probability : c.row.announced_probability)),
        now,
        p((c) => (c.announceChurn ? now : c.row.churn_announced_at)),
      ],
    );
  }
  const unpredicted = batch.filter((c) => !c.prediction).map((c) => c.row.id);
  if (unpredicted.length) await sql.query('DELETE FROM churn_predictions WHERE customer_id = ANY($1::uuid[])', [unpredicted]);

  const why = await whyAnnounced(sql, batch);
  for (const c of batch) {
    // The customer as the batch leaves it: its new score, status and prediction.
    const customer = {
      ...c.row,
      healthScore: c.health.score,
      healthStatus: c.health.status,
      churnProbability: c.prediction?.probability ?? null,
      churnRiskLevel: c.prediction?.riskLevel ?? null,
    };
    if (c.announceHealth) {
      events.push(
        eventOf(
          'customer.health_changed',
          {
            ...customer,
            previousHealthScore: c.row.announced_score,
            previousHealthStatus: c.row.announced_status,
            drivers: why.get(c.row.id)?.health ?? null,
          },
          { subject: c.row.id, dedupKey: `customer.health_changed:${c.row.id}:${now.toISOString()}` },
        ),
      );
    }
    if (c.announceChurn && c.prediction) {
      events.push(
        eventOf(
          'churn_prediction.updated',
          {
            ...c.prediction,
            tenantId: c.row.tenantId,
            customerId: c.row.id,
            predictedAt: now,
            previousProbability: c.row.announced_probability,
            drivers: why.get(c.row.id)?.churn ?? null,
          },
          { subject: c.row.id, dedupKey: `churn_prediction.updated:${c.row.id}:${now.toISOString()}` },
        ),
      );
    }
  }

  const { created, resolved } = await writeAlerts(sql, batch, now);
  events.push(...created.map((a) => alertEvent('alert.created', a)), ...resolved.map((a) => alertEvent('alert.resolved', a)));
  return { alertsCreated: created.length, alertsResolved: resolved.length, events };
}

type HealthDrivers = NonNullable<SourceOf<PayloadOf<'customer.health_changed'>['drivers']>>;
type ChurnDrivers = NonNullable<SourceOf<PayloadOf<'churn_prediction.updated'>['drivers']>>;

/**
 * What moved each announced value since it was announced before: the drivers of the changes recorded since
 * (this batch's included, written above), summed. Nothing for a first announcement.
 */
async function whyAnnounced(sql: Sql, batch: Computed[]) {
  const health = (c: Computed) =>
    c.announceHealth && c.health.score !== null && c.row.announced_score !== null ? c.row.health_announced_at : null;
  const churn = (c: Computed) =>
    c.announceChurn && c.prediction && c.row.announced_probability !== null ? c.row.churn_announced_at : null;
  const since = batch.flatMap((c) => {
    const times = [health(c), churn(c)].filter((t): t is Date => t !== null);
    return times.length ? [{ customerId: c.row.id, since: new Date(Math.min(...times.map((t) => t.getTime()))) }] : [];
  });
  const recorded = new Map<string, RecordedDrivers[]>();
  for (const r of await driversSince(sql, since)) {
    const mine = recorded.get(r.customerId);
    if (mine) mine.push(r);
    else recorded.set(r.customerId, [r]);
  }
  const out = new Map<string, { health: HealthDrivers | null; churn: ChurnDrivers | null }>();
  const inPoints = (d: AnnouncedDrivers | null) => d && { ...d, top: d.top.map(({ amount, ...t }) => ({ ...t, score: amount })) };
  const inProbability = (d: AnnouncedDrivers | null) =>
    d && { ...d, top: d.top.map(({ amount, ...t }) => ({ ...t, churnProbability: amount })) };
  const tenThousandths = (p: number) => Math.round(p * 10_000);
  // The moment just after the announcement before: the changes' own `?since=` (from that moment on) then
  // lists exactly the changes summed, without the one that was announced then.
  const justAfter = (t: Date) => new Date(t.getTime() + 1);
  for (const c of batch) {
    const [h, p] = [health(c), churn(c)];
    if (!h && !p) continue;
    const mine = recorded.get(c.row.id) ?? [];
    const after = (t: Date) => mine.filter((r) => r.computedAt > t).map((r) => r.drivers);
    out.set(c.row.id, {
      health: h && inPoints(announcedDrivers(after(h), 'score', c.health.score! - c.row.announced_score!, justAfter(h))),
      churn:
        p &&
        inProbability(
          announcedDrivers(
            after(p),
            'churn',
            tenThousandths(c.prediction!.probability) - tenThousandths(c.row.announced_probability!),
            justAfter(p),
          ),
        ),
    });
  }
  return out;
}

/** The alert changes the batch's computations decided, written by their owner (alert-rows.ts). */
function writeAlerts(sql: Sql, batch: Computed[], now: Date) {
  const w: AlertWrites = { creates: [], updates: [], resolves: [] };
  for (const c of batch) {
    for (const change of c.alerts) {
      if (change.kind === 'create')
        w.creates.push({ tenantId: c.row.tenantId, customerId: c.row.id, alertType: change.alertType, firing: change.firing });
      else if (change.kind === 'update') w.updates.push(change);
      else w.resolves.push(change.id);
    }
  }
  return writeAlertChanges(sql, w, now);
}
