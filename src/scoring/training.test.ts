import { describe, expect, it } from 'vitest';
import { mayReplaceDefault } from './training.ts';

describe('replacing the default model', () => {
  it('is allowed to a model that ranks held-out customers at least as well', () => {
    expect(mayReplaceDefault({ auc: 0.8, brier: 0.2 }, { auc: 0.8, brier: 0.1 })).toBe(true);
  });
  it('is allowed to a model within 0.01 AUC of the default whose probabilities are closer to the outcomes', () => {
    expect(mayReplaceDefault({ auc: 0.795, brier: 0.12 }, { auc: 0.8, brier: 0.18 })).toBe(true);
  });
  it('is refused to a model within 0.01 AUC whose probabilities are further off', () => {
    expect(mayReplaceDefault({ auc: 0.795, brier: 0.19 }, { auc: 0.8, brier: 0.18 })).toBe(false);
  });
  it('is refused to a model that ranks clearly worse, however well calibrated', () => {
    expect(mayReplaceDefault({ auc: 0.78, brier: 0.05 }, { auc: 0.8, brier: 0.18 })).toBe(false);
  });
});
