import { describe, expect, it } from 'vitest';
import { sigmoid } from './churn-model.ts';
import { calibrated, chooseKind, fitSelected, LAMBDAS, mayReplaceDefault, platt, stratifiedFolds } from './model-selection.ts';

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
});
