import { round } from './numbers.ts';
import { DIMENSIONS, type DimensionKey, effectiveWeights, healthStatusFor, type Weights } from './dimensions.ts';

export interface Signal {
  key: string;
  /** Stored snapshots leave it out; readers take it from SIGNAL_LABELS. */
  label?: string;
  value: unknown;
}

export interface DimensionInput {
  score: number | null;
  trend?: number | null;
  signals?: Signal[];
}

/** Combines five dimension scores into the overall score, its band and the per-dimension breakdown. */
export function overallHealth(inputs: Record<DimensionKey, DimensionInput>, weights: Weights) {
  const present = Object.fromEntries(DIMENSIONS.map((k) => [k, inputs[k].score !== null])) as Record<DimensionKey, boolean>;
  const w = effectiveWeights(weights, present);
  const dimensions = DIMENSIONS.map((key) => {
    const score = inputs[key].score === null ? null : Math.max(0, Math.min(100, inputs[key].score));
    return {
      key,
      score,
      weight: round(w[key], 4),
      contribution: score === null ? null : round(score * w[key], 2),
      trend: inputs[key].trend ?? null,
      signals: inputs[key].signals ?? [],
    };
  });
  const scored = dimensions.filter((d) => d.score !== null);
  if (scored.length === 0) return { score: null, status: null, weakestDimension: null, dimensions };
  const score = Math.round(scored.reduce((s, d) => s + (d.contribution ?? 0), 0));
  const weakest = scored.reduce((a, b) => ((b.score ?? 0) < (a.score ?? 0) ? b : a));
  return { score, status: healthStatusFor(score), weakestDimension: weakest.key, dimensions };
}
