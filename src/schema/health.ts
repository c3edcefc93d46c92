import { DIMENSIONS, type DimensionKey, tenantWeights } from '../scoring/dimensions.ts';
import { builder } from './builder.ts';
import { Dimension, HealthStatus } from './enums.ts';

export interface SignalView {
  key: string;
  label: string;
  value: unknown;
}
export interface DimensionView {
  key: DimensionKey;
  score: number | null;
  weight: number;
  contribution: number | null;
  trend: number | null;
  signals: SignalView[];
}
export interface HealthView {
  customerId: string;
  score: number | null;
  status: 'healthy' | 'neutral' | 'at_risk' | null;
  computedAt: Date | null;
  trend7d: number | null;
  trend30d: number | null;
  weakestDimension: DimensionKey | null;
  dimensions: DimensionView[];
}

interface SnapshotRow {
  score: number;
  status: 'healthy' | 'neutral' | 'at_risk';
  computedAt: Date;
  trend7d: number | null;
  trend30d: number | null;
  weakestDimension: string | null;
  dimensions: unknown;
}

/** The latest snapshot as the API shows it; before the first computation, five empty dimensions with their weights. */
export function healthView(customerId: string, snapshot: SnapshotRow | undefined, storedWeights: unknown): HealthView {
  if (!snapshot) {
    const weights = tenantWeights(storedWeights);
    return {
      customerId,
      score: null,
      status: null,
      computedAt: null,
      trend7d: null,
      trend30d: null,
      weakestDimension: null,
      dimensions: DIMENSIONS.map((key) => ({ key, score: null, weight: weights[key], contribution: null, trend: null, signals: [] })),
    };
  }
  const stored = (Array.isArray(snapshot.dimensions) ? snapshot.dimensions : []) as DimensionView[];
  const byKey = new Map(stored.map((d) => [d.key, d]));
  return {
    customerId,
    score: snapshot.score,
    status: snapshot.status,
    computedAt: snapshot.computedAt,
    trend7d: snapshot.trend7d,
    trend30d: snapshot.trend30d,
    weakestDimension: (snapshot.weakestDimension as DimensionKey | null) ?? null,
    dimensions: DIMENSIONS.map((key) => byKey.get(key) ?? { key, score: null, weight: 0, contribution: null, trend: null, signals: [] }),
  };
}

const Signal = builder.objectRef<SignalView>('HealthSignal').implement({
  description: 'One measured input behind a dimension score.',
  fields: (t) => ({
    key: t.exposeString('key'),
    label: t.exposeString('label'),
    value: t.field({ type: 'JSON', nullable: true, resolve: (s) => s.value }),
  }),
});

const DimensionScore = builder.objectRef<DimensionView>('HealthDimension').implement({
  fields: (t) => ({
    key: t.field({ type: Dimension, resolve: (d) => d.key }),
    score: t.exposeFloat('score', { nullable: true, description: '0-100, or null when the dimension has no data.' }),
    weight: t.exposeFloat('weight', { description: 'Effective weight after re-weighting dimensions without data.' }),
    contribution: t.exposeFloat('contribution', {
      nullable: true,
      description: 'score × weight: points this dimension adds to the total.',
    }),
    trend: t.exposeFloat('trend', { nullable: true, description: 'Change of this dimension over 7 days.' }),
    signals: t.field({ type: [Signal], resolve: (d) => d.signals ?? [] }),
  }),
});

const Trend = builder.objectRef<{ d7: number | null; d30: number | null }>('HealthTrend').implement({
  fields: (t) => ({
    d7: t.exposeFloat('d7', { nullable: true, description: 'Score change over the last 7 days.' }),
    d30: t.exposeFloat('d30', { nullable: true, description: 'Score change over the last 30 days.' }),
  }),
});

export const CustomerHealth = builder.objectRef<HealthView>('CustomerHealth').implement({
  description: 'The full breakdown of a customer’s health score across five dimensions.',
  fields: (t) => ({
    customerId: t.field({ type: 'UUID', resolve: (h) => h.customerId }),
    score: t.exposeInt('score', { nullable: true }),
    status: t.field({ type: HealthStatus, nullable: true, resolve: (h) => h.status }),
    computedAt: t.field({ type: 'DateTime', nullable: true, resolve: (h) => h.computedAt }),
    trend: t.field({ type: Trend, resolve: (h) => ({ d7: h.trend7d, d30: h.trend30d }) }),
    weakestDimension: t.field({ type: Dimension, nullable: true, resolve: (h) => h.weakestDimension }),
    dimensions: t.field({ type: [DimensionScore], resolve: (h) => h.dimensions }),
  }),
});

builder.prismaObjectField('Customer', 'health', (t) =>
  t.field({
    type: CustomerHealth,
    select: {
      id: true,
      healthSnapshots: { orderBy: { computedAt: 'desc' }, take: 1 },
      tenant: { select: { scoringWeights: true } },
    },
    resolve: (c) => healthView(c.id, c.healthSnapshots[0], c.tenant.scoringWeights),
  }),
);
