import { isCalendarDay } from '../datetime.ts';
import { notFound, validationFailed } from '../errors.ts';
import { signalLabel } from '../scoring/dimension-scores.ts';
import { DIMENSIONS, type DimensionKey, tenantWeights } from '../scoring/dimensions.ts';
import { SILENT_INTEGRATIONS, type SilentProvider, staleSourcesOf } from '../scoring/freshness.ts';
import type { ProviderName } from '../contract/enums.ts';
import { weightsView, type WeightsView as WeightsShape } from '../services/health-settings.ts';
import { builder } from './builder.ts';
import { Dimension, HealthStatus, Provider } from './enums.ts';
import { actorOf, requireCapability } from './guards.ts';
import { PageInfo, pageSize } from './pagination.ts';

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
  /** Providers feeding this dimension that have gone silent (scoring/freshness.ts). */
  staleSources: ProviderName[];
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
  confidence: number | null;
}

interface SnapshotRow {
  score: number | null;
  status: 'healthy' | 'neutral' | 'at_risk' | null;
  computedAt: Date;
  trend7d: number | null;
  trend30d: number | null;
  weakestDimension: string | null;
  dimensions: unknown;
}

type StoredDimension = Omit<DimensionView, 'signals' | 'staleSources'> & { signals?: { key: string; label?: string; value: unknown }[] };

/** The current snapshot as the API shows it; before the first computation, five empty dimensions with their weights. */
export function healthView(
  customerId: string,
  snapshot: SnapshotRow | null | undefined,
  storedWeights: unknown,
  silent: readonly SilentProvider[] = [],
): HealthView {
  const weights = tenantWeights(storedWeights);
  const stored = (snapshot && Array.isArray(snapshot.dimensions) ? snapshot.dimensions : []) as StoredDimension[];
  const byKey = new Map(stored.map((d) => [d.key, d]));
  const dimensions: DimensionView[] = DIMENSIONS.map((key) => {
    const d = byKey.get(key);
    const staleSources = staleSourcesOf(key, silent);
    if (!d)
      return {
        key,
        score: null,
        weight: snapshot?.score == null ? weights[key] : 0,
        contribution: null,
        trend: null,
        signals: [],
        staleSources,
      };
    return {
      ...d,
      signals: (d.signals ?? []).map((s) => ({ key: s.key, label: s.label ?? signalLabel(s.key), value: s.value })),
      staleSources,
    };
  });
  return {
    customerId,
    score: snapshot?.score ?? null,
    status: snapshot?.status ?? null,
    computedAt: snapshot?.computedAt ?? null,
    trend7d: snapshot?.trend7d ?? null,
    trend30d: snapshot?.trend30d ?? null,
    weakestDimension: (snapshot?.weakestDimension as DimensionKey | null) ?? null,
    dimensions,
    confidence: snapshot?.score == null ? null : confidenceOf(dimensions),
  };
}

/**
 * How much of the score rests on fresh sources: the weight of the dimensions with data whose sources are not
 * silent, of all the dimensions with data (their weights add up to 1). The score is not re-weighted when a
 * source stops; this says how far to trust it meanwhile.
 */
function confidenceOf(dimensions: DimensionView[]): number {
  const withData = dimensions.filter((d) => d.score !== null);
  const total = withData.reduce((n, d) => n + d.weight, 0);
  if (total === 0) return 1;
  const fresh = withData.filter((d) => d.staleSources.length === 0).reduce((n, d) => n + d.weight, 0);
  return Math.round((fresh / total) * 100) / 100;
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
    stale: t.boolean({
      description: 'A provider feeding this dimension has gone silent: its score may describe how things were.',
      resolve: (d) => d.staleSources.length > 0,
    }),
    staleSources: t.field({ type: [Provider], description: 'The silent providers feeding it.', resolve: (d) => d.staleSources }),
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
    confidence: t.exposeFloat('confidence', {
      nullable: true,
      description:
        'How much of the score rests on fresh sources, 0-1: the weight of the dimensions with data whose providers are not silent. Null without a score.',
    }),
  }),
});

/**
 * What a customer's health reads beyond its row: its snapshot, its tenant's weights and silent integrations.
 * The plain-SQL read of one customer (services/customer-reads.ts) gives the same shape, and is used when a
 * planned query asks for exactly this (schema/customer.ts).
 */
export const HEALTH_INCLUDE = {
  healthSnapshot: true,
  tenant: { select: { scoringWeights: true, integrationFreshness: SILENT_INTEGRATIONS } },
};

const silentOf = (rows: readonly { provider: string; silentSince: Date | string | null }[]): SilentProvider[] =>
  rows.flatMap((r) => (r.silentSince === null ? [] : [{ provider: r.provider, silentSince: r.silentSince }]));

builder.prismaObjectField('Customer', 'health', (t) =>
  t.field({
    type: CustomerHealth,
    select: { id: true, ...HEALTH_INCLUDE },
    resolve: (c) => healthView(c.id, c.healthSnapshot, c.tenant.scoringWeights, silentOf(c.tenant.integrationFreshness)),
  }),
);

// One customer's health on its own, as the REST health route reads it: one plain statement, without
// planning a Customer selection (customer(id) { health } plans one to learn what to load).
builder.queryField('customerHealth', (t) =>
  t.field({
    type: CustomerHealth,
    description: 'One customer’s health; the same as `customer(id) { health }`.',
    args: { id: t.arg({ type: 'UUID' }) },
    resolve: async (_root, args, ctx) => {
      const p = requireCapability(ctx, 'read');
      const c = await ctx.services.customerReads.one(p.tenantId, args.id, { health: true });
      if (!c) throw notFound(`Customer ${args.id}`);
      return healthView(
        c.id,
        c.healthSnapshot as SnapshotRow | null,
        c.tenant?.scoringWeights,
        silentOf(c.tenant?.integrationFreshness ?? []),
      );
    },
  }),
);

// History: one point per day, newest first, paged by day.
interface HistoryPoint {
  day: Date;
  score: number | null;
  status: 'healthy' | 'neutral' | 'at_risk' | null;
  usage: number | null;
  engagement: number | null;
  support: number | null;
  billing: number | null;
  growth: number | null;
  churnProbability: number | null;
  computedAt: Date;
}

const HealthPoint = builder.objectRef<HistoryPoint>('HealthHistoryPoint').implement({
  description: 'A customer’s health on one day (the day’s latest computation).',
  fields: (t) => ({
    day: t.field({ type: 'Date', resolve: (p) => p.day }),
    score: t.exposeInt('score', { nullable: true }),
    status: t.field({ type: HealthStatus, nullable: true, resolve: (p) => p.status }),
    usage: t.exposeFloat('usage', { nullable: true }),
    engagement: t.exposeFloat('engagement', { nullable: true }),
    support: t.exposeFloat('support', { nullable: true }),
    billing: t.exposeFloat('billing', { nullable: true }),
    growth: t.exposeFloat('growth', { nullable: true }),
    churnProbability: t.exposeFloat('churnProbability', { nullable: true }),
    computedAt: t.field({ type: 'DateTime', resolve: (p) => p.computedAt }),
  }),
});

const HistoryPage = builder
  .objectRef<{ nodes: HistoryPoint[]; hasNextPage: boolean; endCursor: string | null }>('HealthHistoryConnection')
  .implement({
    fields: (t) => ({
      nodes: t.field({ type: [HealthPoint], resolve: (p) => p.nodes }),
      pageInfo: t.field({ type: PageInfo, resolve: (p) => ({ hasNextPage: p.hasNextPage, endCursor: p.endCursor }) }),
    }),
  });

const dayCursor = (day: Date) => Buffer.from(day.toISOString().slice(0, 10)).toString('base64url');
function beforeDay(after: string | null | undefined): Date | undefined {
  if (!after) return undefined;
  const day = Buffer.from(after, 'base64url').toString('utf8');
  // A day the database can hold (years 1-9999, a date that exists), like every date a client sends.
  if (!isCalendarDay(day)) throw validationFailed([{ path: 'after', message: 'is not a cursor this API issued' }]);
  return new Date(`${day}T00:00:00.000Z`);
}

builder.prismaObjectField('Customer', 'healthHistory', (t) =>
  t.field({
    type: HistoryPage,
    description: 'Daily health points, newest first.',
    args: {
      first: t.arg.int({ required: false, description: 'Days per page, 1 to 100 (default 25).' }),
      after: t.arg.string({ required: false, description: 'The endCursor of the previous page.' }),
    },
    // Planned into the customer's own query, so a list of customers with their history is one round trip.
    select: (args) => {
      const before = beforeDay(args.after);
      return { healthHistory: { where: before ? { day: { lt: before } } : {}, orderBy: { day: 'desc' }, take: pageSize(args.first) + 1 } };
    },
    resolve: (c, args) => {
      const take = pageSize(args.first);
      const rows = c.healthHistory as HistoryPoint[];
      const nodes = rows.slice(0, take);
      const hasNextPage = rows.length > take;
      return { nodes, hasNextPage, endCursor: hasNextPage ? dayCursor(nodes[nodes.length - 1]!.day) : null };
    },
  }),
);

// Weights: a tenant may weigh the dimensions its own way (docs/decisions.md §7).
const WeightsView = builder.objectRef<WeightsShape>('HealthWeights').implement({
  description: 'How much each dimension counts in the overall score; they sum to 1.',
  fields: (t) => ({
    usage: t.exposeFloat('usage'),
    engagement: t.exposeFloat('engagement'),
    support: t.exposeFloat('support'),
    billing: t.exposeFloat('billing'),
    growth: t.exposeFloat('growth'),
    isDefault: t.exposeBoolean('isDefault', { description: 'True while the tenant uses the documented defaults.' }),
  }),
});

builder.prismaObjectField('Tenant', 'healthWeights', (t) =>
  t.field({ type: WeightsView, select: { scoringWeights: true }, resolve: (tenant) => weightsView(tenant.scoringWeights) }),
);

const WeightsInput = builder.inputType('HealthWeightsInput', {
  fields: (t) => ({ usage: t.float(), engagement: t.float(), support: t.float(), billing: t.float(), growth: t.float() }),
});

builder.queryField('healthWeights', (t) =>
  t.field({
    type: WeightsView,
    resolve: async (_r, _a, ctx) => {
      return ctx.services.healthSettings.weights(requireCapability(ctx, 'read').tenantId);
    },
  }),
);

builder.mutationFields((t) => ({
  setHealthWeights: t.field({
    type: WeightsView,
    description: 'Sets the tenant’s dimension weights (each 0-1, summing to 1) and recomputes every customer.',
    args: { input: t.arg({ type: WeightsInput }) },
    resolve: async (_r, { input }, ctx) => {
      return ctx.services.healthSettings.setWeights(actorOf(ctx, requireCapability(ctx, 'manage')), input);
    },
  }),
  resetHealthWeights: t.field({
    type: WeightsView,
    description: 'Returns to the default weights and recomputes every customer.',
    resolve: async (_r, _a, ctx) => {
      return ctx.services.healthSettings.resetWeights(actorOf(ctx, requireCapability(ctx, 'manage')));
    },
  }),
}));
