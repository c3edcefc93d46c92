import { validationFailed } from '../errors.ts';
import type { DriverView, HealthChangeView, Movement, SourceView } from '../services/health-changes.ts';
import { builder } from './builder.ts';
import { Dimension } from './enums.ts';
import { requireCapability } from './guards.ts';
import { PageInfo, pageSize } from './pagination.ts';

// Why a customer's health moved (docs/scoring.md, "Why it moved"): each stored change with its drivers and
// their sources, newest first.

const MovementRef = builder.objectRef<Movement>('HealthMovement').implement({
  description: 'A value before and after a change.',
  fields: (t) => ({
    from: t.exposeFloat('from', { nullable: true }),
    to: t.exposeFloat('to', { nullable: true }),
    change: t.exposeFloat('change', { nullable: true, description: 'to − from; null when either is null.' }),
  }),
});

const DimensionMovement = builder.objectRef<Movement & { key: string }>('HealthDimensionMovement').implement({
  fields: (t) => ({
    key: t.field({ type: Dimension, resolve: (d) => d.key as never }),
    from: t.exposeFloat('from', { nullable: true }),
    to: t.exposeFloat('to', { nullable: true }),
    change: t.exposeFloat('change', { nullable: true }),
  }),
});

const Source = builder.objectRef<SourceView>('HealthChangeSource').implement({
  description:
    'What a change cites: an inbound provider event (its provider, type, the provider’s event id and when it was received), a usage event, another recorded signal, or a change made over the API.',
  fields: (t) => ({
    type: t.exposeString('type', { description: '`provider_event`, `usage_event`, `signal` or `api_change`.' }),
    kind: t.exposeString('kind'),
    occurredAt: t.field({ type: 'DateTime', resolve: (s) => s.occurredAt }),
    recordedAt: t.field({ type: 'DateTime', nullable: true, resolve: (s) => s.recordedAt }),
    signalId: t.field({ type: 'UUID', nullable: true, resolve: (s) => s.signalId }),
    usageEvent: t.exposeString('usageEvent', { nullable: true }),
    inboundEventId: t.field({ type: 'UUID', nullable: true, resolve: (s) => s.inboundEventId }),
    provider: t.exposeString('provider', { nullable: true }),
    eventType: t.exposeString('eventType', { nullable: true }),
    providerEventId: t.exposeString('providerEventId', { nullable: true }),
    receivedAt: t.field({ type: 'DateTime', nullable: true, resolve: (s) => s.receivedAt }),
    auditEventId: t.field({ type: 'UUID', nullable: true, resolve: (s) => s.auditEventId }),
    actor: t.exposeString('actor', { nullable: true }),
    bodyRetained: t.exposeBoolean('bodyRetained', {
      nullable: true,
      description:
        'For an inbound event: whether its body is still stored; retention and erasure remove bodies, the id, type and times stay.',
    }),
    body: t.string({
      nullable: true,
      description: 'The inbound event’s stored body as it was received; null once retention or an erasure removed it.',
      resolve: async (s, _a, ctx) =>
        s.inboundEventId ? ctx.services.healthChanges.body(requireCapability(ctx, 'read').tenantId, s.inboundEventId) : null,
    }),
  }),
});

const DriverDimension = builder.objectRef<{ key: string; points: number }>('HealthDriverDimension').implement({
  fields: (t) => ({ key: t.field({ type: Dimension, resolve: (d) => d.key as never }), points: t.exposeFloat('points') }),
});

const Driver = builder.objectRef<DriverView>('HealthChangeDriver').implement({
  description: 'One input that moved a change, with its share of each output; the shares add up exactly to the change.',
  fields: (t) => ({
    input: t.exposeString('input'),
    label: t.exposeString('label'),
    group: t.exposeString('group', {
      description: 'What feeds the input: a dimension’s signals, `activity`, `history`, `settings` or `time`.',
    }),
    from: t.field({ type: 'JSON', nullable: true, resolve: (d) => d.from as never }),
    to: t.field({ type: 'JSON', nullable: true, resolve: (d) => d.to as never }),
    score: t.exposeFloat('score', { description: 'Points of the overall score this input moved.' }),
    churnProbability: t.exposeFloat('churnProbability'),
    dimensions: t.field({ type: [DriverDimension], resolve: (d) => d.dimensions }),
    sources: t.field({ type: [Source], resolve: (d) => d.sources }),
  }),
});

const Change = builder.objectRef<HealthChangeView>('HealthChange').implement({
  description: 'One computation that moved a customer’s score, a dimension or its churn probability, and why.',
  fields: (t) => ({
    id: t.field({ type: 'UUID', resolve: (c) => c.id }),
    computedAt: t.field({ type: 'DateTime', resolve: (c) => c.computedAt }),
    score: t.field({ type: MovementRef, resolve: (c) => c.score }),
    churnProbability: t.field({ type: MovementRef, resolve: (c) => c.churnProbability }),
    dimensions: t.field({ type: [DimensionMovement], resolve: (c) => c.dimensions }),
    drivers: t.field({ type: [Driver], resolve: (c) => c.drivers }),
  }),
});

const ChangePage = builder
  .objectRef<{ nodes: HealthChangeView[]; hasNextPage: boolean; endCursor: string | null }>('HealthChangeConnection')
  .implement({
    fields: (t) => ({
      nodes: t.field({ type: [Change], resolve: (p) => p.nodes }),
      pageInfo: t.field({ type: PageInfo, resolve: (p) => ({ hasNextPage: p.hasNextPage, endCursor: p.endCursor }) }),
    }),
  });

const cursorOf = (at: Date) => Buffer.from(at.toISOString()).toString('base64url');
function beforeCursor(after: string | null | undefined): Date | null {
  if (!after) return null;
  const text = Buffer.from(after, 'base64url').toString('utf8');
  const at = new Date(text);
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(text) || Number.isNaN(at.getTime()))
    throw validationFailed([{ path: 'after', message: 'is not a cursor this API issued' }]);
  return at;
}

builder.prismaObjectField('Customer', 'healthChanges', (t) =>
  t.field({
    type: ChangePage,
    description: 'Each change of the health score, a dimension or the churn probability with the inputs that moved it, newest first.',
    args: {
      since: t.arg({ type: 'DateTime', required: false, description: 'Changes computed at or after this time.' }),
      until: t.arg({ type: 'DateTime', required: false, description: 'Changes computed before this time.' }),
      first: t.arg.int({ required: false, description: 'Changes per page, 1 to 100 (default 25).' }),
      after: t.arg.string({ required: false, description: 'The endCursor of the previous page.' }),
    },
    select: { id: true },
    resolve: async (c, args, ctx) => {
      const p = requireCapability(ctx, 'read');
      const take = pageSize(args.first);
      const cursor = beforeCursor(args.after);
      const until = args.until ?? null;
      const before = cursor && until ? (cursor < until ? cursor : until) : (cursor ?? until);
      const since = args.since ?? null;
      const rows = await ctx.services.healthChanges.list(p.tenantId, c.id, { since, before, first: take + 1 });
      const nodes = rows.slice(0, take);
      const hasNextPage = rows.length > take;
      return { nodes, hasNextPage, endCursor: hasNextPage ? cursorOf(nodes[nodes.length - 1]!.computedAt) : null };
    },
  }),
);
