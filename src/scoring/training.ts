import { createHash } from 'node:crypto';
import { trainingDuration } from '../runtime/metrics.ts';
import type pg from 'pg';
import { inTransaction, onPg, type Sql } from '../db/sql.ts';
import { DomainError } from '../errors.ts';
import { assessHealth, carryFrom } from './assess.ts';
import { featureVector } from './churn-model.ts';
import { tenantWeights } from './dimensions.ts';
import { type AsOf, extractFeatures } from './features.ts';
import { mayReplaceDefault, type ModelKind } from './model-selection.ts';
import { type Fitter, fitHere } from './fit-runner.ts';
import { type CpuShare, unmetered } from '../runtime/cpu-share.ts';
import { requestTenant } from './scoring-queue.ts';
import { type TrainResult, trainingRuns } from './training-runs.ts';

export const MIN_PER_CLASS = 20;
const CHUNK = 1000;
/** Labels whose vectors are built in one step of the tenant's CPU share. */
const STEP = 100;
const DAY_MS = 86_400_000;

export type { TrainResult } from './training-runs.ts';

interface Label {
  customer_id: string;
  churned: boolean;
  at: Date;
}

/**
 * Feature vectors as of each label's time (just before it, so the churn itself is not an input). The
 * vectors are built STEP labels at a time through the tenant's CPU share (runtime/cpu-share.ts): thousands
 * of labels are seconds of work that would otherwise hold every other tenant's requests.
 */
export async function vectors(
  pool: pg.Pool,
  labels: Label[],
  weights: ReturnType<typeof tenantWeights>,
  share: { tenantId: string; cpuShare: CpuShare } = { tenantId: '', cpuShare: unmetered },
  signal?: AbortSignal,
): Promise<(number | null)[][]> {
  const sql = onPg(pool);
  const out: (number | null)[][] = [];
  for (let i = 0; i < labels.length; i += CHUNK) {
    signal?.throwIfAborted();
    const chunk = labels.slice(i, i + CHUNK);
    const at = chunk.map((l): AsOf => ({ customerId: l.customer_id, asOf: new Date(l.at.getTime() - 1) }));
    const before = chunk.map((l): AsOf => ({ customerId: l.customer_id, asOf: new Date(l.at.getTime() - 1 - 30 * DAY_MS) }));
    const [now, then] = await Promise.all([extractFeatures(sql, at), extractFeatures(sql, before)]);
    for (let j = 0; j < chunk.length; j += STEP)
      out.push(...(await share.cpuShare.run(share.tenantId, () => chunk.slice(j, j + STEP).map((l) => vectorOf(l, now, then, weights)))));
  }
  return out;
}

function vectorOf(
  l: Label,
  now: Awaited<ReturnType<typeof extractFeatures>>,
  then: Awaited<ReturnType<typeof extractFeatures>>,
  weights: ReturnType<typeof tenantWeights>,
): (number | null)[] {
  // The score 30 days earlier is rebuilt from the signals, as the daily history would have recorded it.
  const past = assessHealth(then.get(l.customer_id)!, {}, weights);
  const pastDims = Object.fromEntries(past.dimensions.map((d) => [d.key, d.score]));
  const h = assessHealth(now.get(l.customer_id)!, carryFrom(pastDims), weights, {
    score7d: null,
    dimensions7d: {},
    score30d: past.score,
  });
  return featureVector(now.get(l.customer_id)!, h.churnInputs);
}

/**
 * Puts a model in use for the tenant, in the caller's transaction. The tenant's row is the workspace
 * service's to change, and scoring does not import services: the service hands this in.
 */
export type UseModel = (sql: Sql, tenantId: string, modelId: string) => Promise<void>;

export interface TrainOptions {
  now?: Date;
  activate?: boolean;
  fitter?: Fitter;
  cpuShare?: CpuShare;
  /** The training's row (training-runs.ts): its figures are stored with the model, in one transaction. */
  runId?: string;
  /** Ends the training between its steps (the service stopping), with the signal's reason. */
  signal?: AbortSignal;
}

const LATEST_LABELS = `SELECT DISTINCT ON (customer_id) customer_id, churned, at FROM churn_outcomes
  WHERE tenant_id = $1 ORDER BY customer_id, created_at DESC, id DESC`;

function enoughLabels(churned: number, stayed: number): void {
  if (churned < MIN_PER_CLASS || stayed < MIN_PER_CLASS) {
    throw new DomainError(
      'not_enough_data',
      `Training needs at least ${MIN_PER_CLASS} churned and ${MIN_PER_CLASS} retained labelled customers; this tenant has ${churned} and ${stayed}.`,
    );
  }
}

/**
 * Refuses (422 `not_enough_data`) a training that would have too few labels, before it is started; counted
 * among the trainings' outcomes as one that had too few.
 */
export async function checkLabels(sql: Sql, tenantId: string): Promise<void> {
  const end = trainingDuration.startTimer();
  const [c] = await sql.query<{ churned: number; stayed: number }>(
    `SELECT count(*) FILTER (WHERE churned)::int AS churned, count(*) FILTER (WHERE NOT churned)::int AS stayed FROM (${LATEST_LABELS}) l`,
    [tenantId],
  );
  try {
    enoughLabels(c?.churned ?? 0, c?.stayed ?? 0);
  } catch (e) {
    end({ outcome: 'insufficient_labels' });
    throw e;
  }
}

/**
 * Fits the tenant's churn model on its labelled customers (the latest label of each), reports held-out
 * AUC and Brier score beside the default model's on the same customers, stores the model under a new
 * version and, when it does no worse than the default, puts it in use and queues every prediction.
 */
export async function trainChurnModel(pool: pg.Pool, tenantId: string, useModel: UseModel, opts: TrainOptions = {}): Promise<TrainResult> {
  const end = trainingDuration.startTimer();
  try {
    const result = await train(pool, tenantId, useModel, opts);
    end({ outcome: result.kind });
    return result;
  } catch (err) {
    end({ outcome: err instanceof DomainError && err.code === 'not_enough_data' ? 'insufficient_labels' : 'failed' });
    throw err;
  }
}

async function train(pool: pg.Pool, tenantId: string, useModel: UseModel, opts: TrainOptions): Promise<TrainResult> {
  const now = opts.now ?? new Date();
  const sql = onPg(pool);
  const labels = await sql.query<Label>(LATEST_LABELS, [tenantId]);
  const churned = labels.filter((l) => l.churned).length;
  enoughLabels(churned, labels.length - churned);
  const [tenant] = await sql.query<{ scoring_weights: unknown }>('SELECT scoring_weights FROM tenants WHERE id = $1', [tenantId]);
  const cpuShare = opts.cpuShare ?? unmetered;
  const release = await cpuShare.hold(tenantId);
  const raw = await vectors(pool, labels, tenantWeights(tenant?.scoring_weights), { tenantId, cpuShare }, opts.signal).finally(release);
  opts.signal?.throwIfAborted();
  const y = labels.map((l) => (l.churned ? 1 : 0));
  const keys = labels.map((l) => createHash('sha256').update(l.customer_id).digest('hex'));
  const fitter = opts.fitter ?? fitHere;
  const { kind, metrics, trained, baseline, eligible, reliability, calibration, stored, lambda } = await fitter(tenantId, { raw, y, keys });
  const activated = eligible && (opts.activate ?? true);
  opts.signal?.throwIfAborted();

  return inTransaction(pool, async (tx) => {
    // One training at a time per tenant, so version numbers are never taken twice.
    await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`churn-train:${tenantId}`]);
    const [{ n }] = (await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM churn_models WHERE tenant_id = $1', [tenantId])) as [
      { n: number },
    ];
    const version = `${kind === 'trained' ? 'trained' : 'calibrated-default'}-v${n + 1}`;
    const [row] = await tx.query<{ id: string }>(
      `INSERT INTO churn_models (id, tenant_id, version, intercept, coefficients, baseline, metrics, trained_at)
       VALUES (gen_random_uuid(), $1, $2, $3, $4, $5, $6, $7) RETURNING id`,
      [
        tenantId,
        version,
        stored.intercept,
        JSON.stringify(stored.coefficients),
        JSON.stringify(stored.baseline),
        JSON.stringify({
          kind,
          samples: labels.length,
          churned,
          holdout: labels.length,
          auc: metrics.auc,
          brier: metrics.brier,
          log_loss: metrics.logLoss,
          lambda,
          calibration,
          reliability,
          eligible,
          activated,
          trained: { auc: trained.auc, brier: trained.brier },
          baseline: { model_version: baseline.modelVersion, auc: baseline.auc, brier: baseline.brier },
        }),
        now,
      ],
    );
    if (activated) {
      await useModel(tx, tenantId, row!.id);
      await requestTenant(tx, tenantId);
    }
    const result: TrainResult = {
      modelVersion: version,
      kind,
      trainedAt: now,
      samples: labels.length,
      churned,
      holdout: labels.length,
      ...metrics,
      lambda,
      reliability,
      eligible,
      trained: { auc: trained.auc, brier: trained.brier },
      activated,
      baseline,
    };
    if (opts.runId) await trainingRuns.succeed(tx, opts.runId, result);
    return result;
  });
}

/**
 * Puts a stored trained model in use (one trained with `activate: false`, or one used before) and queues
 * every customer of the tenant. Only a model that did at least as well as the default on its held-out
 * customers may be used.
 */
export async function activateChurnModel(pool: pg.Pool, tenantId: string, version: string, useModel: UseModel): Promise<void> {
  await inTransaction(pool, async (tx) => {
    const [row] = await tx.query<{
      id: string;
      metrics: { auc: number; brier: number; kind?: ModelKind; baseline: { auc: number; brier: number } };
    }>('SELECT id, metrics FROM churn_models WHERE tenant_id = $1 AND version = $2', [tenantId, version]);
    if (!row) throw new DomainError('not_found', `Churn model ${version} was not found.`);
    if (!mayReplaceDefault(row.metrics, row.metrics.baseline)) {
      throw new DomainError(
        'conflict',
        `Churn model ${version} ranked held-out customers worse than the default model; it cannot be used.`,
      );
    }
    await useModel(tx, tenantId, row.id);
    await requestTenant(tx, tenantId);
  });
}
