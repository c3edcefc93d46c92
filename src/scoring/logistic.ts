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
 * Each feature's mean and standard deviation, and the rows standardised with a leading 1 for the intercept. A
 * feature that does not vary — or varies only by rounding, which standardising would blow up into a signal —
 * gets scale 1 and standardised value 0, so the penalty keeps its weight at the prior.
 */
function standardise(x: number[][]) {
  const n = x.length;
  const d = x[0]!.length;
  const means = Array.from({ length: d }, (_, j) => x.reduce((s, r) => s + r[j]!, 0) / n);
  const sds = means.map((m, j) => Math.sqrt(x.reduce((s, r) => s + (r[j]! - m) ** 2, 0) / n));
  const constant = sds.map((sd, j) => !(sd > 1e-9 * Math.max(1, Math.abs(means[j]!))));
  const scales = sds.map((sd, j) => (constant[j] ? 1 : sd));
  const z = x.map((r) => [1, ...r.map((v, j) => (constant[j] ? 0 : (v - means[j]!) / scales[j]!))]);
  return { means, scales, z };
}

export interface FitOptions {
  lambda?: number;
  prior?: number[];
  penalty?: number[];
  maxIterations?: number;
  /** Called before each Newton step: where a fit on a thread may be held to its tenant's share (runtime/thread-pace.ts). */
  pace?: () => void;
}

/**
 * L2-regularised logistic regression by Newton's method (iteratively reweighted least squares) on
 * standardised features; the intercept is not penalised. The penalty pulls the weights toward `prior`
 * (raw-scale weights, zeros by default): λ/2 × Σ (β − prior)² on the standardised scale, so a large λ
 * keeps the prior's slopes. Weights are returned on the raw scale.
 */
export function fitLogistic(x: number[][], y: number[], opts: FitOptions = {}): Fit {
  const lambda = opts.lambda ?? 1;
  const n = x.length;
  const d = x[0]!.length;
  const { means, scales, z } = standardise(x);
  const prior = [0, ...scales.map((sc, j) => (opts.prior?.[j] ?? 0) * sc)];
  const rate = Math.min(1 - 1e-6, Math.max(1e-6, y.reduce((a, b) => a + b, 0) / n));
  const beta = prior.slice();
  beta[0] = Math.log(rate / (1 - rate));
  let iterations = 0;
  for (; iterations < (opts.maxIterations ?? 100); iterations++) {
    opts.pace?.();
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
        const l = lambda * (opts.penalty?.[a - 1] ?? 1);
        gradient[a] -= l * (beta[a]! - prior[a]!);
        hessian.set(a, a, hessian.get(a, a) + l);
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

/** Solves the symmetric positive definite system a·x = b (row-major m × m) by Cholesky; null when it is not. */
function choleskySolve(a: Float64Array, b: Float64Array, m: number): Float64Array | null {
  const l = new Float64Array(m * m);
  for (let i = 0; i < m; i++) {
    for (let j = 0; j <= i; j++) {
      let sum = a[i * m + j]!;
      for (let k = 0; k < j; k++) sum -= l[i * m + k]! * l[j * m + k]!;
      if (i === j) {
        if (!(sum > 0)) return null;
        l[i * m + i] = Math.sqrt(sum);
      } else l[i * m + j] = sum / l[j * m + j]!;
    }
  }
  const t = new Float64Array(m);
  for (let i = 0; i < m; i++) {
    let sum = b[i]!;
    for (let k = 0; k < i; k++) sum -= l[i * m + k]! * t[k]!;
    t[i] = sum / l[i * m + i]!;
  }
  const out = new Float64Array(m);
  for (let i = m - 1; i >= 0; i--) {
    let sum = t[i]!;
    for (let k = i + 1; k < m; k++) sum -= l[k * m + i]! * out[k]!;
    out[i] = sum / l[i * m + i]!;
  }
  return out;
}

/**
 * fitLogistic with each weight held to its sign: `signs[j]` is 1 (the weight may not be negative), −1 (may not
 * be positive) or 0 (free). The same penalised likelihood, maximised over the weights that respect their signs by
 * projected Newton steps: each step maximises the local quadratic model within the allowed signs (coordinate
 * ascent, then an exact solve on the weights it leaves away from 0), and is halved until the penalised
 * likelihood rises. The likelihood is concave, so the result is its one maximum within the signs; a weight the
 * labels would pull against its sign ends at exactly 0.
 */
export function fitSigned(x: number[][], y: number[], signs: number[], opts: FitOptions = {}): Fit {
  const n = x.length;
  const d = x[0]!.length;
  const m = d + 1;
  const { means, scales, z: rows } = standardise(x);
  const z = rows.map((r) => Float64Array.from(r));
  const prior = Float64Array.from([0, ...scales.map((sc, j) => (opts.prior?.[j] ?? 0) * sc)]);
  const pen = Float64Array.from([0, ...scales.map((_, j) => (opts.lambda ?? 1) * (opts.penalty?.[j] ?? 1))]);
  // The intercept is free; slope j may not cross 0 against its sign.
  const lo = Float64Array.from([-Infinity, ...signs.map((s) => (s > 0 ? 0 : -Infinity))]);
  const hi = Float64Array.from([Infinity, ...signs.map((s) => (s < 0 ? 0 : Infinity))]);
  const rate = Math.min(1 - 1e-6, Math.max(1e-6, y.reduce((a, b) => a + b, 0) / n));
  const beta = prior.map((v, a) => Math.min(hi[a]!, Math.max(lo[a]!, v)));
  beta[0] = Math.log(rate / (1 - rate));
  const objective = (b: Float64Array) => {
    let f = 0;
    for (let i = 0; i < n; i++) {
      let e = 0;
      for (let a = 0; a < m; a++) e += z[i]![a]! * b[a]!;
      // log-likelihood of the outcome, stable for large |e|
      f += y[i]! * e - (e > 0 ? e + Math.log1p(Math.exp(-e)) : Math.log1p(Math.exp(e)));
    }
    for (let a = 1; a < m; a++) f -= (pen[a]! / 2) * (b[a]! - prior[a]!) ** 2;
    return f - 5e-10 * b[0]! ** 2;
  };
  let current = objective(beta);
  let iterations = 0;
  for (; iterations < (opts.maxIterations ?? 100); iterations++) {
    opts.pace?.();
    const g = new Float64Array(m);
    const h = new Float64Array(m * m);
    for (let i = 0; i < n; i++) {
      const r = z[i]!;
      let e = 0;
      for (let a = 0; a < m; a++) e += r[a]! * beta[a]!;
      const p = sigmoid(e);
      const w = p * (1 - p);
      for (let a = 0; a < m; a++) {
        g[a] += (y[i]! - p) * r[a]!;
        const wa = w * r[a]!;
        for (let b = 0; b <= a; b++) h[a * m + b] += wa * r[b]!;
      }
    }
    for (let a = 0; a < m; a++) {
      for (let b = 0; b < a; b++) h[b * m + a] = h[a * m + b]!;
      g[a] -= pen[a]! * (beta[a]! - prior[a]!);
      h[a * m + a] += pen[a]!;
    }
    g[0] -= 1e-9 * beta[0]!;
    h[0] += 1e-9;
    // The step δ maximising gᵀδ − ½ δᵀHδ with β + δ within the signs: coordinate ascent …
    const step = new Float64Array(m);
    for (let sweep = 0; sweep < 100; sweep++) {
      let largest = 0;
      for (let a = 0; a < m; a++) {
        let r = g[a]!;
        for (let b = 0; b < m; b++) r -= h[a * m + b]! * step[b]!;
        const next = Math.min(hi[a]! - beta[a]!, Math.max(lo[a]! - beta[a]!, step[a]! + r / h[a * m + a]!));
        largest = Math.max(largest, Math.abs(next - step[a]!));
        step[a] = next;
      }
      if (largest < 1e-12) break;
    }
    // … then, with the weights it holds at 0 fixed, the exact maximum over the others, when that stays within the signs.
    const free = Array.from({ length: m }, (_, a) => a).filter((a) => beta[a]! + step[a]! !== lo[a] && beta[a]! + step[a]! !== hi[a]);
    const k = free.length;
    const hf = new Float64Array(k * k);
    const gf = new Float64Array(k);
    free.forEach((a, i) => {
      gf[i] = g[a]!;
      for (let b = 0; b < m; b++) if (!free.includes(b)) gf[i] -= h[a * m + b]! * step[b]!;
      free.forEach((b, j) => (hf[i * k + j] = h[a * m + b]!));
    });
    const exact = choleskySolve(hf, gf, k);
    if (exact && free.every((a, i) => beta[a]! + exact[i]! >= lo[a]! && beta[a]! + exact[i]! <= hi[a]!))
      free.forEach((a, i) => (step[a] = exact[i]!));
    let t = 1;
    let next = beta.map((b, a) => b + step[a]!);
    let value = objective(next);
    while (value < current && t > 1e-6) {
      t /= 2;
      next = beta.map((b, a) => b + t * step[a]!);
      value = objective(next);
    }
    let largest = 0;
    for (let a = 0; a < m; a++) largest = Math.max(largest, Math.abs(next[a]! - beta[a]!));
    if (value >= current) {
      beta.set(next);
      current = value;
    }
    if (largest < 1e-10 || value < current) break;
  }
  const weights = Array.from({ length: d }, (_, j) => beta[j + 1]! / scales[j]!);
  const intercept = beta[0]! - weights.reduce((s, w, j) => s + w * means[j]!, 0);
  return { intercept, weights, means, iterations };
}
