import { sigmoid } from './churn-model.ts';
import { type Fit, fitLogistic, fitSigned, logitOf, logLoss } from './logistic.ts';

/**
 * The rows' inputs as training fits them, and the baseline the model stores: an input that can be unknown
 * (`neutral[j]` defined) takes its neutral value where unknown and keeps it as baseline, so an unknown input
 * contributes nothing and a customer with nothing to report on a source is read as one with nothing wrong
 * there; an input that is always known keeps the rows' mean as baseline (explanations then measure from the
 * average customer; the fit is the same whatever the baseline).
 */
export function trainingInputs(raw: (number | null)[][], neutral: (number | undefined)[]): { x: number[][]; baseline: number[] } {
  const baseline = neutral.map((n, j) => {
    if (n !== undefined) return n;
    const known = raw.map((r) => r[j]).filter((v): v is number => v !== null && v !== undefined);
    return known.length ? known.reduce((a, b) => a + b, 0) / known.length : 0;
  });
  return { x: raw.map((r) => r.map((v, j) => v ?? baseline[j]!)), baseline };
}

/** Regularisation strengths tried by cross-validation; the largest all but keeps the prior's slopes. */
export const LAMBDAS = [0.3, 1, 3, 10, 30, 100, 300, 1000, 3000];
const MAX_FOLDS = 5;

/**
 * Fold of each sample: within each class, in the order of `keys`, folds are dealt in turn, so every fold
 * has its share of churners and a rerun on the same labels makes the same folds.
 */
export function stratifiedFolds(y: number[], keys: string[], k: number): number[] {
  const fold = new Array<number>(y.length).fill(0);
  for (const cls of [0, 1]) {
    const idx = y.map((v, i) => ({ v, i })).filter((e) => e.v === cls);
    idx.sort((a, b) => (keys[a.i]! < keys[b.i]! ? -1 : keys[a.i]! > keys[b.i]! ? 1 : 0));
    idx.forEach((e, n) => (fold[e.i] = n % k));
  }
  return fold;
}

export interface Calibration {
  /** p = sigmoid(slope × logit + intercept), fitted on out-of-fold logits (Platt scaling). */
  slope: number;
  intercept: number;
}

/** Platt scaling: a one-feature logistic regression of the outcomes on the model's logits; the slope is kept positive. */
export function platt(logits: number[], y: number[]): Calibration {
  const fit = fitLogistic(
    logits.map((z) => [z]),
    y,
    { lambda: 1e-3 },
  );
  const slope = Math.max(0.05, fit.weights[0]!);
  // With the slope held, the intercept that matches the observed rate on average.
  let intercept = slope === fit.weights[0] ? fit.intercept : 0;
  if (slope !== fit.weights[0]) {
    for (let i = 0; i < 50; i++) {
      const p = logits.map((z) => sigmoid(slope * z + intercept));
      const g = y.reduce((s, v, k) => s + v - p[k]!, 0);
      const h = p.reduce((s, v) => s + v * (1 - v), 0) || 1;
      intercept += g / h;
    }
  }
  return { slope, intercept };
}

/** Held-out figures of a model, measured on the same customers as the default's. */
export interface HeldOut {
  auc: number;
  brier: number;
}

/**
 * Which model a training run stores: `trained` (its own slopes) or `calibrated_default` (the default's slopes
 * with a Platt calibration fitted on the tenant's labels: the same ranking as the default, probabilities that
 * match the tenant).
 */
export type ModelKind = 'trained' | 'calibrated_default';

/**
 * A trained model replaces the default's ranking only when, held out, it ranks customers at least as well
 * as the default; a calibrated default ranks exactly as the default, so it earns its place by its Brier score.
 */
export function mayReplaceDefault(model: HeldOut & { kind?: ModelKind }, baseline: HeldOut): boolean {
  return model.kind === 'calibrated_default' ? model.auc >= baseline.auc && model.brier <= baseline.brier : model.auc >= baseline.auc;
}

/** The trained model when it ranks at least as well as the default held out; otherwise the calibrated default. */
export function chooseKind(trained: HeldOut, baseline: HeldOut): ModelKind {
  return mayReplaceDefault({ ...trained, kind: 'trained' }, baseline) ? 'trained' : 'calibrated_default';
}

/**
 * A logistic model (intercept, slopes) with a calibration applied: slope and intercept of the logit. The slope
 * is positive, so every customer keeps their rank and every feature its share of the risk factors.
 */
export function calibrated(model: { intercept: number; coefficients: Record<string, number> }, c: Calibration) {
  return {
    intercept: c.slope * model.intercept + c.intercept,
    coefficients: Object.fromEntries(Object.entries(model.coefficients).map(([k, w]) => [k, c.slope * w])),
  };
}

export interface Selected extends Fit {
  lambda: number;
  folds: number;
  calibration: Calibration;
  /** Mean out-of-fold log loss of each λ tried. */
  curve: { lambda: number; logLoss: number }[];
}

/**
 * Fits the model the way training does: λ chosen by stratified k-fold cross-validation on the out-of-fold
 * log loss, the fit shrunk toward `prior` (the default model's slopes), then Platt-calibrated on the
 * out-of-fold logits at that λ. Calibration is linear in the logit, so the result is again one logistic
 * model: intercept and weights scaled, explanations unchanged in kind.
 */
export function fitSelected(x: number[][], y: number[], keys: string[], prior: number[], signs?: number[], pace?: () => void): Selected {
  const fitAt = (tx: number[][], ty: number[], lambda: number) =>
    signs ? fitSigned(tx, ty, signs, { lambda, prior, pace }) : fitLogistic(tx, ty, { lambda, prior, pace });
  const minority = Math.min(y.filter((v) => v === 1).length, y.filter((v) => v === 0).length);
  const k = Math.max(2, Math.min(MAX_FOLDS, minority));
  const fold = stratifiedFolds(y, keys, k);
  const oof = LAMBDAS.map(() => new Array<number>(y.length).fill(0));
  for (let f = 0; f < k; f++) {
    const train = y.map((_, i) => i).filter((i) => fold[i] !== f);
    const test = y.map((_, i) => i).filter((i) => fold[i] === f);
    const tx = train.map((i) => x[i]!);
    const ty = train.map((i) => y[i]!);
    LAMBDAS.forEach((lambda, l) => {
      const fit = fitAt(tx, ty, lambda);
      for (const i of test) oof[l]![i] = logitOf(fit, x[i]!);
    });
  }
  const curve = LAMBDAS.map((lambda, l) => ({ lambda, logLoss: logLoss(oof[l]!.map(sigmoid), y) }));
  const best = curve.reduce((a, b) => (b.logLoss < a.logLoss ? b : a));
  const l = LAMBDAS.indexOf(best.lambda);
  const calibration = platt(oof[l]!, y);
  const fit = fitAt(x, y, best.lambda);
  return {
    intercept: calibration.slope * fit.intercept + calibration.intercept,
    weights: fit.weights.map((w) => calibration.slope * w),
    means: fit.means,
    iterations: fit.iterations,
    lambda: best.lambda,
    folds: k,
    calibration,
    curve,
  };
}
