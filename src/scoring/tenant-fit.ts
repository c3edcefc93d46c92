import { type ChurnModel, DEFAULT_MODEL, FEATURE_CODES, FEATURE_SIGNS, MODEL_FEATURES, probabilityOf, sigmoid } from './churn-model.ts';
import { auc, brier, logLoss } from './logistic.ts';
import {
  type Calibration,
  calibrated,
  chooseKind,
  fitSelected,
  type ModelKind,
  mayReplaceDefault,
  platt,
  type Selected,
  stratifiedFolds,
  trainingInputs,
} from './model-selection.ts';
import { round } from './numbers.ts';

const OUTER_FOLDS = 5;

/** What a tenant's labelled customers give the fit: their model inputs, outcomes and fold keys. */
export interface FitInput {
  raw: (number | null)[][];
  /** 1 churned, 0 retained. */
  y: number[];
  /** Stable per customer, so a customer stays in its fold from one training to the next. */
  keys: string[];
}

/** The fitted model, or the calibrated default, with its held-out figures beside the default's. */
export interface FitOutcome {
  kind: ModelKind;
  metrics: { auc: number; brier: number; logLoss: number };
  trained: { auc: number; brier: number; logLoss: number };
  baseline: { modelVersion: string; auc: number; brier: number };
  eligible: boolean;
  reliability: { predicted: number; observed: number; count: number }[];
  calibration: Calibration;
  stored: Pick<ChurnModel, 'intercept' | 'coefficients' | 'baseline'>;
  lambda: number | null;
}

/**
 * The training procedure on the rows `rows`: unknown inputs take their neutral value (as they will at
 * prediction time, through the model's baseline), then fitSelected (cross-validated λ, shrinkage toward
 * the default model's slopes, Platt calibration).
 */
function fitModel(
  raw: (number | null)[][],
  y: number[],
  keys: string[],
  rows: number[],
  pace?: () => void,
): { model: ChurnModel; fit: Selected } {
  const { x, baseline: fill } = trainingInputs(
    rows.map((i) => raw[i]!),
    MODEL_FEATURES.map((d) => d.neutral),
  );
  const prior = FEATURE_CODES.map((c) => DEFAULT_MODEL.coefficients[c] ?? 0);
  const fit = fitSelected(
    x,
    rows.map((i) => y[i]!),
    rows.map((i) => keys[i]!),
    prior,
    FEATURE_SIGNS,
    pace,
  );
  const model: ChurnModel = {
    version: '',
    intercept: fit.intercept,
    coefficients: Object.fromEntries(FEATURE_CODES.map((c, j) => [c, fit.weights[j]!])),
    baseline: Object.fromEntries(FEATURE_CODES.map((c, j) => [c, fill[j]!])),
    trainedAt: null, // stored with the training's time by its caller
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
 * The whole of training's arithmetic, with no I/O: pure, so it can run off the request's thread
 * (fit-runner.ts). Every labelled customer is held out once and predicted by a model fitted on the others.
 * `pace` is called between the fits' steps, where a thread may be held to its tenant's share.
 */
export function fitTenantModel({ raw, y, keys }: FitInput, pace?: () => void): FitOutcome {
  const churned = y.filter((v) => v === 1).length;
  // Held out: every labelled customer is predicted by a model fitted, with the whole procedure, on the
  // other folds (cross-validation around cross-validation), and judged against the default on the same customers.
  const folds = stratifiedFolds(y, keys, Math.min(OUTER_FOLDS, churned, y.length - churned));
  const defaults = raw.map((r) => probabilityOf(DEFAULT_MODEL, r));
  const defaultLogits = defaults.map((p) => Math.log(p / (1 - p)));
  const heldOut = new Array<number>(y.length).fill(0);
  const heldOutCalibrated = new Array<number>(y.length).fill(0);
  for (let f = 0; f <= Math.max(...folds); f++) {
    const rows = y.map((_, i) => i).filter((i) => folds[i] !== f);
    const { model } = fitModel(raw, y, keys, rows, pace);
    const c = platt(
      rows.map((i) => defaultLogits[i]!),
      rows.map((i) => y[i]!),
    );
    y.forEach((_, i) => {
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
  const reliability = bins(kind === 'trained' ? heldOut : heldOutCalibrated, y, 5);
  // What is stored: the same procedure on every label.
  const all = y.map((_, i) => i);
  const final = kind === 'trained' ? fitModel(raw, y, keys, all, pace) : null;
  const calibration = final ? final.fit.calibration : platt(defaultLogits, y);
  const stored = final
    ? final.model
    : {
        ...calibrated({ intercept: DEFAULT_MODEL.intercept, coefficients: DEFAULT_MODEL.coefficients }, calibration),
        baseline: DEFAULT_MODEL.baseline,
      };
  const lambda = final ? final.fit.lambda : null;
  return { kind, metrics, trained, baseline, eligible, reliability, calibration, stored, lambda };
}
