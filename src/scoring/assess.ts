import type { HealthInputs } from './churn-model.ts';
import { overallHealth } from './overall-score.ts';
import { type Carry, scoreDimensions } from './dimension-scores.ts';
import { DIMENSIONS, type DimensionKey, type Weights } from './dimensions.ts';
import type { Features } from './features.ts';
import { round } from './numbers.ts';

/** Scores from the customer's history, for trends. */
export interface Past {
  score7d: number | null;
  dimensions7d: Partial<Record<DimensionKey, number | null>>;
  score30d: number | null;
}

export const NO_PAST: Past = { score7d: null, dimensions7d: {}, score30d: null };

export type Assessment = ReturnType<typeof assessHealth>;

/**
 * Health of one customer from its features: the five dimensions (each with its 7-day trend), the
 * weighted total, the score changes over 7 and 30 days, and the health part of the churn model's input.
 */
export function assessHealth(f: Features, carry: Carry, weights: Weights, past: Past = NO_PAST) {
  const inputs = scoreDimensions(f, carry);
  for (const key of DIMENSIONS) {
    const now = inputs[key].score;
    const before = past.dimensions7d[key];
    inputs[key].trend = now !== null && before !== null && before !== undefined ? round(now - before, 1) : null;
  }
  const health = overallHealth(inputs, weights);
  const change = (before: number | null) => (health.score !== null && before !== null ? health.score - before : null);
  const dimensions = Object.fromEntries(health.dimensions.map((d) => [d.key, d.score])) as Record<DimensionKey, number | null>;
  const churnInputs: HealthInputs = { dimensions, change30d: change(past.score30d) };
  return { ...health, change7d: change(past.score7d), change30d: churnInputs.change30d, churnInputs };
}

/** A dimension scored before keeps being scored (see Carry). */
export const carryFrom = (dimensions: Partial<Record<DimensionKey, number | null>>): Carry =>
  Object.fromEntries(DIMENSIONS.map((k) => [k, dimensions[k] !== null && dimensions[k] !== undefined]));
