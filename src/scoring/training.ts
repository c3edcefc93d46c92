import { createHash } from 'node:crypto';
import type pg from 'pg';
import { inTransaction, onPg } from '../db/sql.ts';
import { DomainError } from '../errors.ts';
import { assessHealth, carryFrom } from './assess.ts';
import { type ChurnModel, DEFAULT_MODEL, FEATURE_CODES, featureVector, probabilityOf, sigmoid } from './churn-model.ts';
import { tenantWeights } from './dimensions.ts';
import { type AsOf, extractFeatures } from './features.ts';
import { auc, brier, logLoss } from './logistic.ts';
import { calibrated, chooseKind, fitSelected, type ModelKind, mayReplaceDefault, platt, type Selected, stratifiedFolds } from './model-selection.ts';
import { round } from './numbers.ts';
import { queueTenant } from './scoring-queue.ts';

export const MIN_PER_CLASS = 20;
const OUTER_FOLDS = 5;
const CHUNK = 1000;
const DAY_MS = 86_400_000;

export interface TrainResult {
  modelVersion: string;
  /** `trained` (its own slopes) or `calibrated_default` (the default's slopes, calibrated on the tenant's labels). */
  kind: ModelKind;
  trainedAt: Date;
  samples: number;
  churned: number;
  holdout: number;
  auc: number;
  brier: number;
  logLoss: number;
  /** The regularisation strength cross-validation chose for the stored model. */
  lambda: number | null;
  /** Held-out customers in five groups by predicted probability: mean predicted against observed churn. */
  reliability: { predicted: number; observed: number; count: number }[];
  /** It did at least as well as the default coefficients on the held-out customers, so it may be put in use. */
  eligible: boolean;
  /** The model fitted with its own slopes, held out: stored only when it ranks at least as well as the default. */
  trained: { auc: number; brier: number };
  /** Whether it is now in use: eligible, and the caller asked for it to be used straight away. */
  activated: boolean;
  baseline: { modelVersion: string; auc: number; brier: number };
}

interface Label {
  customer_id: string;
  churned: boolean;
  at: Date;
}

/** Feature vectors as of each label's time (just before it, so the churn itself is not an input). */
async function vectors(pool: pg.Pool, labels: Label[], weights: ReturnType<typeof tenantWeights>): Promise<(number | null)[][]> {
  const sql = onPg(pool);
  const out: (number | null)[][] = [];
  for (let i = 0; i < labels.length; i += CHUNK) {
    const chunk = labels.slice(i, i + CHUNK);
    const at = chunk.map((l): AsOf => ({ customerId: l.customer_id, asOf: new Date(l.at.getTime() - 1) }));
    const before = chunk.map((l): AsOf => ({ customerId: l.customer_id, asOf: new Date(l.at.getTime() - 1 - 30 * DAY_MS) }));
    const [now, then] = await Promise.all([extractFeatures(sql, at), extractFeatures(sql, before)]);
    for (const l of chunk) {
      // The score 30 days earlier is rebuilt from the signals, as the daily history would have recorded it.
      const past = assessHealth(then.get(l.customer_id)!, {}, weights);
      const pastDims = Object.fromEntries(past.dimensions.map((d) => [d.key, d.score]));
      const h = assessHealth(now.get(l.customer_id)!, carryFrom(pastDims), weights, {
        score7d: null,
        dimensions7d: {},
        score30d: past.score,
      });
      out.push(featureVector(now.get(l.customer_id)!, h.churnInputs));
    }
  }
  return out;
}

/**
 * The training procedure on the rows `rows`: unknown inputs take those rows' mean (as they will at
 * prediction time, through the model's baseline), then fitSelected (cross-validated λ, shrinkage toward
 * the default model's slopes, Platt calibration).
 */
function fitModel(raw: (number | null)[][], y: number[], keys: string[], rows: number[], now: Date): { model: ChurnModel; fit: Selected } {
  const fill = FEATURE_CODES.map((_, j) => {
    const known = rows.map((i) => raw[i]![j]).filter((v): v is number => v !== null);
    return known.length ? known.reduce((a, b) => a + b, 0) / known.length : 0;
  });
  const x = rows.map((i) => raw[i]!.map((v, j) => v ?? fill[j]!));
  const prior = FEATURE_CODES.map((c) => DEFAULT_MODEL.coefficients[c] ?? 0);
  const fit = fitSelected(
    x,
    rows.map((i) => y[i]!),
    rows.map((i) => keys[i]!),
    prior,
  );
  const model: ChurnModel = {
    version: '',
    intercept: fit.intercept,
    coefficients: Object.fromEntries(FEATURE_CODES.map((c, j) => [c, fit.weights[j]!])),
    baseline: Object.fromEntries(FEATURE_CODES.map((c, j) => [c, fill[j]!])),
    trainedAt: now,
  };
  return { model, fit };
}

/** Equal-count groups by predicted probability: mean predicted and observed churn in each. */
function bins(p: number[], y: number[], n: number) {
  const order = p.map((v, i) => ({ v, y: y[i]! })).sort((a, b) => a.v - b.v);
  return Array.from({ length: n }, (_, b) => order.slice(Math.floor((b * order.length) / n), Math.floor(((b + 1) * order.length) / n)))
    .filter((g) => g.length > 0)
    .map((g) => ({
      predicted: round(g.reduce((s, o) => s + o.v, 0) / g.length, 4),
      observed: round(g.reduce((s, o) => s + o.y, 0) / g.length, 4),
      count: g.length,
    }));
}

/**
 * Fits the tenant's churn model on its labelled customers (the latest label of each), reports held-out
 * AUC and Brier score beside the default model's on the same customers, stores the model under a new
 * version and, when it does no worse than the default, puts it in use and queues every prediction.
 */
export async function trainChurnModel(
  pool: pg.Pool,
  tenantId: string,
  opts: { now?: Date; activate?: boolean } = {},
): Promise<TrainResult> {
  const now = opts.now ?? new Date();
  const sql = onPg(pool);
  const labels = await sql.query<Label>(
    `SELECT DISTINCT ON (customer_id) customer_id, churned, at FROM churn_outcomes
     WHERE tenant_id = $1 ORDER BY customer_id, created_at DESC, id DESC`,
    [tenantId],
  );
  const churned = labels.filter((l) => l.churned).length;
  const stayed = labels.length - churned;
  if (churned < MIN_PER_CLASS || stayed < MIN_PER_CLASS) {
    throw new DomainError(
      'not_enough_data',
      `Training needs at least ${MIN_PER_CLASS} churned and ${MIN_PER_CLASS} retained labelled customers; this tenant has ${churned} and ${stayed}.`,
    );
  }
  const [tenant] = await sql.query<{ scoring_weights: unknown }>('SELECT scoring_weights FROM tenants WHERE id = $1', [tenantId]);
  const raw = await vectors(pool, labels, tenantWeights(tenant?.scoring_weights));
  const y = labels.map((l) => (l.churned ? 1 : 0));
  const keys = labels.map((l) => createHash('sha256').update(l.customer_id).digest('hex'));
  // Held out: every labelled customer is predicted by a model fitted, with the whole procedure, on the
  // other folds (cross-validation around cross-validation), and judged against the default on the same customers.
  const folds = stratifiedFolds(y, keys, Math.min(OUTER_FOLDS, churned, stayed));
  const defaults = raw.map((r) => probabilityOf(DEFAULT_MODEL, r));
  const defaultLogits = defaults.map((p) => Math.log(p / (1 - p)));
  const heldOut = new Array<number>(labels.length).fill(0);
  const heldOutCalibrated = new Array<number>(labels.length).fill(0);
  for (let f = 0; f <= Math.max(...folds); f++) {
    const rows = labels.map((_, i) => i).filter((i) => folds[i] !== f);
    const { model } = fitModel(raw, y, keys, rows, now);
    const c = platt(
      rows.map((i) => defaultLogits[i]!),
      rows.map((i) => y[i]!),
    );
    labels.forEach((_, i) => {
      if (folds[i] !== f) return;
      heldOut[i] = probabilityOf(model, raw[i]!);
      heldOutCalibrated[i] = sigmoid(c.slope * defaultLogits[i]! + c.intercept);
    });
  }
  const figures = (p: number[]) => ({ auc: round(auc(p, y), 4), brier: round(brier(p, y), 4), logLoss: round(logLoss(p, y), 4) });
  const trained = figures(heldOut);
  const baseline = {
    modelVersion: DEFAULT_MODEL.version,
    auc: round(auc(defaults, y), 4),
    brier: round(brier(defaults, y), 4),
  };
  // A trained model that ranks worse than the default never replaces its ranking; the tenant's labels still
  // calibrate the default's probabilities.
  const kind = chooseKind(trained, baseline);
  // The calibrated default ranks every customer exactly as the default does (one positive slope on its
  // logit), so its AUC is the default's; pooling five folds' calibrations would only blur that ranking.
  const metrics = kind === 'trained' ? trained : { ...figures(heldOutCalibrated), auc: baseline.auc };
  const eligible = mayReplaceDefault({ ...metrics, kind }, baseline);
  const activated = eligible && (opts.activate ?? true);
  const reliability = bins(kind === 'trained' ? heldOut : heldOutCalibrated, y, 5);
  // What is stored: the same procedure on every label.
  const all = labels.map((_, i) => i);
  const final = kind === 'trained' ? fitModel(raw, y, keys, all, now) : null;
  const calibration = final ? final.fit.calibration : platt(defaultLogits, y);
  const stored = final
    ? final.model
    : { ...calibrated({ intercept: DEFAULT_MODEL.intercept, coefficients: DEFAULT_MODEL.coefficients }, calibration), baseline: DEFAULT_MODEL.baseline };
  const lambda = final ? final.fit.lambda : null;

  const version = await inTransaction(pool, async (tx) => {
    // One training at a time per tenant, so version numbers are never taken twice.
    await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`churn-train:${tenantId}`]);
    const [{ n }] = (await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM churn_models WHERE tenant_id = $1', [tenantId])) as [
      { n: number },
    ];
    const v = `${kind === 'trained' ? 'trained' : 'calibrated-default'}-v${n + 1}`;
    const [row] = await tx.query<{ id: string }>(
      `INSERT INTO churn_models (id, tenant_id, version, intercept, coefficients, baseline, metrics, trained_at)
       VALUES (gen_random_uuid(), $1, $2, $3, $4, $5, $6, $7) RETURNING id`,
      [
        tenantId,
        v,
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
      await tx.query('UPDATE tenants SET active_churn_model_id = $2 WHERE id = $1', [tenantId, row!.id]);
      await queueTenant(tx, tenantId);
    }
    return v;
  });

  return {
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
}

/**
 * Puts a stored trained model in use (one trained with `activate: false`, or one used before) and queues
 * every customer of the tenant. Only a model that did at least as well as the default on its held-out
 * customers may be used.
 */
export async function activateChurnModel(pool: pg.Pool, tenantId: string, version: string): Promise<void> {
  await inTransaction(pool, async (tx) => {
    const [row] = await tx.query<{
      id: string;
      metrics: { auc: number; brier: number; kind?: ModelKind; baseline: { auc: number; brier: number } };
    }>(
      'SELECT id, metrics FROM churn_models WHERE tenant_id = $1 AND version = $2',
      [tenantId, version],
    );
    if (!row) throw new DomainError('not_found', `Churn model ${version} was not found.`);
    if (!mayReplaceDefault(row.metrics, row.metrics.baseline)) {
      throw new DomainError(
        'conflict',
        `Churn model ${version} ranked held-out customers worse than the default model; it cannot be used.`,
      );
    }
    await tx.query('UPDATE tenants SET active_churn_model_id = $2 WHERE id = $1', [tenantId, row.id]);
    await queueTenant(tx, tenantId);
  });
}
