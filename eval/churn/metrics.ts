import { auc } from '../../src/scoring/logistic.ts';

export interface Metrics {
  auc: number;
  prAuc: number;
  brier: number;
  logLoss: number;
  /** Churn rate among the top tenth by score over the overall churn rate. */
  lift10: number;
}

export { auc };

/** Average precision: the mean, over churners, of the precision at each churner's rank (ties broken pessimistically). */
export function prAuc(scores: number[], labels: number[]): number {
  const order = scores.map((s, i) => ({ s, y: labels[i]! })).sort((a, b) => b.s - a.s || a.y - b.y);
  const positives = labels.filter((y) => y === 1).length;
  if (positives === 0) return Number.NaN;
  let hits = 0;
  let sum = 0;
  order.forEach((o, k) => {
    if (o.y === 1) {
      hits++;
      sum += hits / (k + 1);
    }
  });
  return sum / positives;
}

export const brier = (p: number[], y: number[]) => p.reduce((s, v, i) => s + (v - y[i]!) ** 2, 0) / p.length;

export function logLoss(p: number[], y: number[]): number {
  const eps = 1e-6;
  return (
    -p.reduce((s, v, i) => {
      const q = Math.min(1 - eps, Math.max(eps, v));
      return s + (y[i] === 1 ? Math.log(q) : Math.log(1 - q));
    }, 0) / p.length
  );
}

/**
 * The ROC AUC a model's scores are expected to reach under the true probabilities: over every pair of customers,
 * the chance the one who churns is scored above the one who stays, weighting each ordered pair (i, j) by
 * p_i × (1 − p_j) (ties count half). Free of the luck of which customers happened to churn, so two models
 * measured on the same customers can be told apart by much less than the realised AUC's noise.
 */
export function expectedAuc(scores: number[], truth: number[]): number {
  const order = scores.map((s, i) => ({ s, p: truth[i]! })).sort((a, b) => a.s - b.s);
  let num = 0;
  let negativesBelow = 0;
  for (let i = 0; i < order.length;) {
    let j = i;
    let pos = 0;
    let neg = 0;
    let self = 0;
    for (; j < order.length && order[j]!.s === order[i]!.s; j++) {
      pos += order[j]!.p;
      neg += 1 - order[j]!.p;
      self += order[j]!.p * (1 - order[j]!.p);
    }
    num += pos * negativesBelow + 0.5 * (pos * neg - self);
    negativesBelow += neg;
    i = j;
  }
  const positives = truth.reduce((a, b) => a + b, 0);
  const den = positives * (truth.length - positives) - truth.reduce((s, p) => s + p * (1 - p), 0);
  return num / den;
}

export function lift10(scores: number[], labels: number[]): number {
  const n = Math.max(1, Math.round(scores.length / 10));
  const top = scores
    .map((s, i) => ({ s, y: labels[i]! }))
    .sort((a, b) => b.s - a.s)
    .slice(0, n);
  const base = labels.reduce((a, b) => a + b, 0) / labels.length;
  return top.reduce((a, b) => a + b.y, 0) / n / base;
}

export function metricsOf(p: number[], y: number[]): Metrics {
  return { auc: auc(p, y), prAuc: prAuc(p, y), brier: brier(p, y), logLoss: logLoss(p, y), lift10: lift10(p, y) };
}

export interface Bin {
  predicted: number;
  observed: number;
  count: number;
}

/** Reliability: customers in ten groups of equal size by predicted probability, mean predicted vs observed churn. */
export function reliability(p: number[], y: number[], bins = 10): Bin[] {
  const order = p.map((v, i) => ({ v, y: y[i]! })).sort((a, b) => a.v - b.v);
  const out: Bin[] = [];
  for (let b = 0; b < bins; b++) {
    const part = order.slice(Math.floor((b * order.length) / bins), Math.floor(((b + 1) * order.length) / bins));
    if (part.length === 0) continue;
    out.push({
      predicted: part.reduce((s, o) => s + o.v, 0) / part.length,
      observed: part.reduce((s, o) => s + o.y, 0) / part.length,
      count: part.length,
    });
  }
  return out;
}
