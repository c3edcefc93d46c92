import { describe, expect, it } from 'vitest';
import { FEATURE_CODES, FEATURE_SIGNS, sigmoid } from './churn-model.ts';
import { fitLogistic, fitSigned } from './logistic.ts';
import {
  calibrated,
  chooseKind,
  fitSelected,
  LAMBDAS,
  mayReplaceDefault,
  platt,
  stratifiedFolds,
  trainingInputs,
} from './model-selection.ts';

function seeded(seed: number) {
  return () => {
    seed = (seed * 1664525 + 1013904223) % 4294967296;
    return seed / 4294967296;
  };
}
const normal = (r: () => number) => Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());

/** n customers with three standard-normal inputs and outcomes drawn from the given slopes. */
function sample(n: number, slopes: number[], intercept: number, seed: number) {
  const r = seeded(seed);
  const x = Array.from({ length: n }, () => slopes.map(() => normal(r)));
  const y = x.map((row) => (r() < sigmoid(intercept + row.reduce((z, v, j) => z + slopes[j]! * v, 0)) ? 1 : 0));
  return { x, y, keys: x.map((_, i) => `k${String(i).padStart(5, '0')}`) };
}

describe('model selection', () => {
  it('deals every fold its share of each class, the same folds for the same keys', () => {
    const y = Array.from({ length: 100 }, (_, i) => (i % 4 === 0 ? 1 : 0));
    const keys = y.map((_, i) => `c${(i * 37) % 100}`);
    const folds = stratifiedFolds(y, keys, 5);
    for (let f = 0; f < 5; f++) {
      expect(folds.filter((v, i) => v === f && y[i] === 1)).toHaveLength(5);
      expect(folds.filter((v, i) => v === f && y[i] === 0)).toHaveLength(15);
    }
    expect(stratifiedFolds(y, keys, 5)).toEqual(folds);
  });

  it('Platt scaling halves the logits of a model twice as confident as the outcomes warrant', () => {
    const r = seeded(3);
    const truth = Array.from({ length: 4000 }, () => 2 * normal(r));
    const y = truth.map((z) => (r() < sigmoid(z) ? 1 : 0));
    const c = platt(
      truth.map((z) => 2 * z),
      y,
    );
    expect(c.slope).toBeGreaterThan(0.4);
    expect(c.slope).toBeLessThan(0.6);
    expect(Math.abs(c.intercept)).toBeLessThan(0.15);
  });

  it('with many labels, learns the slopes that drive the outcomes even when the prior says otherwise', () => {
    const { x, y, keys } = sample(2000, [0, 1.5, -1], -1, 7);
    const fit = fitSelected(x, y, keys, [1.5, 0, 0]);
    expect(fit.lambda).toBeLessThanOrEqual(30);
    expect(Math.abs(fit.weights[0]!)).toBeLessThan(0.2);
    expect(fit.weights[1]!).toBeGreaterThan(1.2);
    expect(fit.weights[2]!).toBeLessThan(-0.8);
  });

  it('with few labels that agree with the prior, stays close to the prior’s slopes', () => {
    const { x, y, keys } = sample(60, [1.2, 0, 0.8], -0.5, 11);
    const fit = fitSelected(x, y, keys, [1.2, 0, 0.8]);
    expect(fit.lambda).toBeGreaterThanOrEqual(30);
    const uncalibrated = fit.weights.map((w) => w / fit.calibration.slope);
    expect(uncalibrated[0]!).toBeCloseTo(1.2, 0);
    expect(Math.abs(uncalibrated[1]!)).toBeLessThan(0.3);
    expect(uncalibrated[2]!).toBeCloseTo(0.8, 0);
  });

  it('fills an unknown input with its neutral value and keeps that as its baseline, so it contributes nothing', () => {
    const raw = [
      [0.2, null, 3],
      [0.6, 1.5, 5],
      [null, 0.5, 4],
    ];
    const { x, baseline } = trainingInputs(raw, [0, Math.log(9), undefined]);
    expect(baseline).toEqual([0, Math.log(9), 4]);
    expect(x).toEqual([
      [0.2, Math.log(9), 3],
      [0.6, 1.5, 5],
      [0, 0.5, 4],
    ]);
  });

  it('centres an input that is always known on the mean of the customers it is fitted on', () => {
    const { baseline } = trainingInputs([[1], [2], [6]], [undefined]);
    expect(baseline).toEqual([3]);
  });

  it('reports the cross-validated log loss of every strength it tried', () => {
    const { x, y, keys } = sample(200, [1, 0, 0], 0, 5);
    const fit = fitSelected(x, y, keys, [0, 0, 0]);
    expect(fit.curve.map((c) => c.lambda)).toEqual(LAMBDAS);
    expect(Math.min(...fit.curve.map((c) => c.logLoss))).toBe(fit.curve.find((c) => c.lambda === fit.lambda)!.logLoss);
  });
});

describe('replacing the default model', () => {
  it('keeps a trained model that ranks held-out customers at least as well as the default', () => {
    expect(chooseKind({ auc: 0.8, brier: 0.2 }, { auc: 0.8, brier: 0.1 })).toBe('trained');
  });

  it('falls back to the calibrated default when the trained model ranks worse, however well calibrated', () => {
    expect(chooseKind({ auc: 0.875, brier: 0.05 }, { auc: 0.89, brier: 0.18 })).toBe('calibrated_default');
    expect(chooseKind({ auc: 0.7999, brier: 0.05 }, { auc: 0.8, brier: 0.18 })).toBe('calibrated_default');
  });

  it('lets a trained model replace the default only on its ranking', () => {
    expect(mayReplaceDefault({ auc: 0.81, brier: 0.3, kind: 'trained' }, { auc: 0.8, brier: 0.1 })).toBe(true);
    expect(mayReplaceDefault({ auc: 0.795, brier: 0.05, kind: 'trained' }, { auc: 0.8, brier: 0.18 })).toBe(false);
  });

  it('lets a calibrated default replace the default only when its probabilities are closer to the outcomes', () => {
    expect(mayReplaceDefault({ auc: 0.8, brier: 0.12, kind: 'calibrated_default' }, { auc: 0.8, brier: 0.18 })).toBe(true);
    expect(mayReplaceDefault({ auc: 0.8, brier: 0.19, kind: 'calibrated_default' }, { auc: 0.8, brier: 0.18 })).toBe(false);
  });

  it('calibrating the default keeps every customer’s rank and every feature’s share of the risk', () => {
    const model: { intercept: number; coefficients: Record<string, number> } = { intercept: -3, coefficients: { a: 1.6, b: 0.6 } };
    const c = calibrated(model, { slope: 0.5, intercept: 1 });
    expect(c).toEqual({ intercept: -0.5, coefficients: { a: 0.8, b: 0.3 } });
    const logit = (m: typeof model, x: number[]) => m.intercept + m.coefficients.a! * x[0]! + m.coefficients.b! * x[1]!;
    const xs = [
      [1, 0],
      [0, 1],
      [0.4, 0.9],
      [0.2, 0.1],
    ];
    const rank = (m: typeof model) => xs.map((x) => logit(m, x)).map((z, _, all) => all.filter((o) => o < z).length);
    expect(rank(c)).toEqual(rank(model));
    expect(c.coefficients.a! / c.coefficients.b!).toBeCloseTo(model.coefficients.a! / model.coefficients.b!, 10);
  });

  it('holds a weight that the labels pull against its risk direction at zero and fits the others freely', () => {
    // The second input lowers risk in these labels, but its direction says it may only raise it.
    const { x, y } = sample(400, [1.2, -0.8, 0.5], -1, 7);
    const free = fitLogistic(x, y, { lambda: 1 });
    expect(free.weights[1]).toBeLessThan(-0.3);
    const signed = fitSigned(x, y, [1, 1, 0], { lambda: 1 });
    expect(signed.weights[1]).toBe(0);
    expect(signed.weights[0]).toBeGreaterThan(0.8);
    expect(signed.weights[2]).toBeGreaterThan(0.2);
  });

  it('fits exactly as without signs when every weight already has its sign', () => {
    const { x, y } = sample(300, [1, -0.7, 0.4], -1, 11);
    const free = fitLogistic(x, y, { lambda: 3 });
    const signed = fitSigned(x, y, [1, -1, 1], { lambda: 3 });
    signed.weights.forEach((w, j) => expect(w).toBeCloseTo(free.weights[j]!, 9));
    expect(signed.intercept).toBeCloseTo(free.intercept, 9);
  });

  it('keeps the prior weight of an input that varies only by rounding, instead of blowing its noise up into a signal', () => {
    const { x, y } = sample(300, [1, 0.5], -1, 5);
    const withNoise = x.map((r, i) => [...r, 0.25 + (i % 3) * 1e-17 + (i % 2) * 2e-16]);
    for (const fit of [
      fitSigned(withNoise, y, [1, 1, 1], { lambda: 1, prior: [0, 0, 0.6] }),
      fitLogistic(withNoise, y, { lambda: 1, prior: [0, 0, 0.6] }),
    ]) {
      expect(fit.weights[2]).toBeCloseTo(0.6, 9);
      expect(fit.weights[0]).toBeGreaterThan(0.6);
    }
  });

  it('reaches the maximum within the signs on correlated inputs whose labels pull against the prior, in a few steps', () => {
    // Six inputs sharing one factor, random slopes, and a weak prior on the allowed side of each sign: the labels
    // pull several weights against their sign, which the fit must hold at exactly 0 without diverging.
    const r = seeded(38);
    const base = Array.from({ length: 120 }, () => Array.from({ length: 6 }, () => normal(r)));
    const x = base.map((b) => b.map((v, j) => (j > 0 ? 0.8 * b[0]! + 0.6 * v : v)));
    const slopes = Array.from({ length: 6 }, () => 2 * normal(r));
    const y = x.map((row) => (r() < sigmoid(-1 + row.reduce((z, v, j) => z + slopes[j]! * v, 0)) ? 1 : 0));
    const signs = Array.from({ length: 6 }, () => (r() < 0.5 ? 1 : -1));
    const prior = signs.map((s) => 0.8 * s);
    const lambda = 0.3;
    const fit = fitSigned(x, y, signs, { lambda, prior });
    expect(fit.iterations).toBeLessThan(30);
    fit.weights.forEach((w, j) => expect(signs[j]! * w).toBeGreaterThanOrEqual(0));
    expect(fit.weights.filter((w) => w === 0).length).toBeGreaterThan(0);
    // No move of one weight the way its sign allows, the intercept refitted, raises the penalised likelihood.
    const sd = x[0]!.map((_, j) => {
      const m = x.reduce((s, row) => s + row[j]!, 0) / x.length;
      return Math.sqrt(x.reduce((s, row) => s + (row[j]! - m) ** 2, 0) / x.length);
    });
    const objective = (w: number[], b: number) =>
      x.reduce((s, row, i) => {
        const z = row.reduce((t, v, j) => t + w[j]! * v, b);
        return s + y[i]! * z - Math.log1p(Math.exp(z));
      }, 0) - w.reduce((s, v, j) => s + (lambda / 2) * ((v - prior[j]!) * sd[j]!) ** 2, 0);
    const best = objective(fit.weights, fit.intercept);
    for (let j = 0; j < 6; j++)
      for (const step of [1e-3, -1e-3]) {
        const w = fit.weights.slice();
        w[j] = w[j]! + step / sd[j]!;
        if (signs[j]! * w[j]! < 0) continue;
        const moved = Math.max(...[-1e-3, 0, 1e-3].map((db) => objective(w, fit.intercept + db)));
        expect(moved).toBeLessThanOrEqual(best + 1e-9);
      }
  });

  it('gives every model input a risk direction', () => {
    expect(FEATURE_SIGNS).toHaveLength(FEATURE_CODES.length);
    for (const s of FEATURE_SIGNS) expect([1, -1, 0]).toContain(s);
  });
});
