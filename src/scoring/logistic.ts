import { Matrix, solve } from 'ml-matrix';
import { sigmoid } from './churn-model.ts';

export interface Fit {
  intercept: number;
  /** On the features' own scale. */
  weights: number[];
  /** The training set's feature means. */
  means: number[];
  iterations: number;
}

/**
 * L2-regularised logistic regression by Newton's method (iteratively reweighted least squares) on
 * standardised features; the intercept is not penalised. The penalty pulls the weights toward `prior`
 * (raw-scale weights, zeros by default): λ/2 × Σ (β − prior)² on the standardised scale, so a large λ
 * keeps the prior's slopes. Weights are returned on the raw scale.
 */
export function fitLogistic(x: number[][], y: number[], opts: { lambda?: number; prior?: number[]; maxIterations?: number } = {}): Fit {
  const lambda = opts.lambda ?? 1;
  const n = x.length;
  const d = x[0]!.length;
  const means = Array.from({ length: d }, (_, j) => x.reduce((s, r) => s + r[j]!, 0) / n);
  // A feature that never varies gets scale 1; the penalty then keeps its weight at the prior.
  const scales = means.map((m, j) => Math.sqrt(x.reduce((s, r) => s + (r[j]! - m) ** 2, 0) / n) || 1);
  const prior = [0, ...scales.map((sc, j) => (opts.prior?.[j] ?? 0) * sc)];
  const z = x.map((r) => [1, ...r.map((v, j) => (v - means[j]!) / scales[j]!)]);
  const rate = Math.min(1 - 1e-6, Math.max(1e-6, y.reduce((a, b) => a + b, 0) / n));
  const beta = prior.slice();
  beta[0] = Math.log(rate / (1 - rate));
  let iterations = 0;
  for (; iterations < (opts.maxIterations ?? 100); iterations++) {
    const p = z.map((r) => sigmoid(r.reduce((s, v, j) => s + v * beta[j]!, 0)));
    const gradient = new Array(d + 1).fill(0);
    const hessian = Matrix.zeros(d + 1, d + 1);
    for (let i = 0; i < n; i++) {
      const w = p[i]! * (1 - p[i]!);
      const r = z[i]!;
      for (let a = 0; a <= d; a++) {
        gradient[a] += (y[i]! - p[i]!) * r[a]!;
        for (let b = a; b <= d; b++) hessian.set(a, b, hessian.get(a, b) + w * r[a]! * r[b]!);
      }
    }
    for (let a = 0; a <= d; a++) {
      for (let b = 0; b < a; b++) hessian.set(a, b, hessian.get(b, a));
      if (a > 0) {
        gradient[a] -= lambda * (beta[a]! - prior[a]!);
        hessian.set(a, a, hessian.get(a, a) + lambda);
      }
    }
    // A tiny ridge on the intercept keeps the system solvable when one class is absent from a fold.
    hessian.set(0, 0, hessian.get(0, 0) + 1e-9);
    const step = solve(hessian, Matrix.columnVector(gradient)).to1DArray();
    let largest = 0;
    for (let a = 0; a <= d; a++) {
      beta[a] += step[a]!;
      largest = Math.max(largest, Math.abs(step[a]!));
    }
    if (largest < 1e-8) break;
  }
  const weights = beta.slice(1).map((b, j) => b / scales[j]!);
  const intercept = beta[0]! - weights.reduce((s, w, j) => s + w * means[j]!, 0);
  return { intercept, weights, means, iterations };
}

/** The log-odds of a fit for one raw feature vector. */
export const logitOf = (fit: Pick<Fit, 'intercept' | 'weights'>, x: number[]) =>
  x.reduce((z, v, j) => z + fit.weights[j]! * v, fit.intercept);

/** Area under the ROC curve: the chance a random churner scores above a random stayer (ties count half). */
export function auc(scores: number[], labels: number[]): number {
  const pos = scores.filter((_, i) => labels[i] === 1);
  const neg = scores.filter((_, i) => labels[i] === 0);
  if (pos.length === 0 || neg.length === 0) return Number.NaN;
  // Rank-sum form, O(n log n): average ranks over ties.
  const order = scores.map((s, i) => ({ s, y: labels[i]! })).sort((a, b) => a.s - b.s);
  let rankSum = 0;
  for (let i = 0; i < order.length;) {
    let j = i;
    while (j < order.length && order[j]!.s === order[i]!.s) j++;
    const avgRank = (i + 1 + j) / 2;
    for (let k = i; k < j; k++) if (order[k]!.y === 1) rankSum += avgRank;
    i = j;
  }
  return (rankSum - (pos.length * (pos.length + 1)) / 2) / (pos.length * neg.length);
}

/** Mean squared error of the probabilities against the outcomes (lower is better). */
export function brier(probabilities: number[], labels: number[]): number {
  return probabilities.reduce((s, p, i) => s + (p - labels[i]!) ** 2, 0) / probabilities.length;
}

/** Mean negative log-likelihood of the outcomes (lower is better); probabilities are kept within 1e-6 of 0 and 1. */
export function logLoss(probabilities: number[], labels: number[]): number {
  return (
    -probabilities.reduce((s, p, i) => {
      const q = Math.min(1 - 1e-6, Math.max(1e-6, p));
      return s + (labels[i] === 1 ? Math.log(q) : Math.log(1 - q));
    }, 0) / probabilities.length
  );
}
