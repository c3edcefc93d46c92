import { DIMENSIONS, type DimensionKey } from '../contract/enums.ts';

export { DIMENSIONS, type DimensionKey };
export type Weights = Record<DimensionKey, number>;

/** docs/decisions.md §7; a tenant may set its own (they must be non-negative and sum to 1). */
export const DEFAULT_WEIGHTS: Weights = { usage: 0.3, engagement: 0.2, support: 0.15, billing: 0.25, growth: 0.1 };

/** Health status bands of docs/decisions.md §6. */
export function healthStatusFor(score: number): 'healthy' | 'neutral' | 'at_risk' {
  return score >= 75 ? 'healthy' : score >= 50 ? 'neutral' : 'at_risk';
}

/** Churn risk bands of docs/decisions.md §6. */
export function riskLevelFor(p: number): 'low' | 'medium' | 'high' | 'critical' {
  return p < 0.25 ? 'low' : p < 0.5 ? 'medium' : p < 0.75 ? 'high' : 'critical';
}

/** A dimension without data gives its weight to the others in proportion to theirs. */
export function effectiveWeights(weights: Weights, present: Partial<Record<DimensionKey, boolean>>): Weights {
  const total = DIMENSIONS.reduce((s, k) => s + (present[k] ? weights[k] : 0), 0);
  return Object.fromEntries(DIMENSIONS.map((k) => [k, present[k] && total > 0 ? weights[k] / total : 0])) as Weights;
}

export function tenantWeights(stored: unknown): Weights {
  if (stored && typeof stored === 'object') {
    const w = stored as Partial<Weights>;
    if (DIMENSIONS.every((k) => typeof w[k] === 'number')) return w as Weights;
  }
  return DEFAULT_WEIGHTS;
}
