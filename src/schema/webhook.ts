import { z } from 'zod';
import { EVENT_NAMES, EVENTS, payloadJsonSchema } from '../outbox/events/registry.ts';
import type { OutboxEvent as OutboxEventRow, WebhookDelivery as WebhookDeliveryRow } from '../generated/prisma/client.ts';
import { builder } from './builder.ts';
import { CircuitState, WebhookStatsWindow } from './enums.ts';
import type { CircuitView } from '../outbox/sender/circuit-breaker.ts';
import type { EndpointStats, StatsPoint } from '../services/webhook-stats.ts';
import { actorOf, requireCapability } from './guards.ts';
import { connectionOf, DEFAULT_PAGE_SIZE, keysetPage, MAX_PAGE_SIZE, type Page, PageInfo, type Sort } from './pagination.ts';
import { freeText, oneLine, parseInput } from './validate.ts';

interface EventTypeView {
  name: string;
  description: string;
  schema: Record<string, unknown>;
  example: unknown;
}
// Built once: the registry does not change while the process runs.
let catalog: EventTypeView[] | undefined;
const eventTypes = () =>
  (catalog ??= EVENT_NAMES.map((name) => ({
    name,
    description: EVENTS[name].description,
    schema: payloadJsonSchema(name),
    example: EVENTS[name].example,
  })));

const EventTypeRef = builder.objectRef<EventTypeView>('WebhookEventType').implement({
  fields: (t) => ({
    name: t.exposeString('name'),
    description: t.exposeString('description'),
    schema: t.expose('schema', {
      type: 'JSON',
      description: 'The JSON Schema (2020-12) of the payload, which is the body of every delivery of this type.',
    }),
    example: t.expose('example', { type: 'JSON', description: 'An example payload; a Test delivery sends it with your tenant id.' }),
  }),
});

const SCHEME_DESCRIPTION =
  '`v0` (default): X-Webhook-Id, X-Webhook-Timestamp and a `v0=` hex HMAC in X-Webhook-Signature. `standard`: the Standard Webhooks headers webhook-id, webhook-timestamp and webhook-signature, carrying a `v1,` HMAC under the secret and a `v1a,` Ed25519 signature verifiable with `publicKey` (docs/receiving-webhooks.md).';

const RATE_DESCRIPTION =
  'The most deliveries a second sent to the endpoint, across every worker, from 0.01 (one every 100 s) to 1000; null for no limit (docs/receiving-webhooks.md, "Rate limit").';

const FILTERS_DESCRIPTION =
  'Payload filters by event type: `{ "alert.created": { "severity": { "in": ["high", "critical"] } } }`. An event of a type with a filter is sent only when every condition holds; operators `eq`, `ne`, `in`, `not_in`, `gt`, `gte`, `lt`, `lte` (docs/receiving-webhooks.md, "Filters").';

const Circuit = builder.objectRef<CircuitView>('WebhookCircuit').implement({
  description: 'An endpoint’s circuit breaker (docs/receiving-webhooks.md, "Circuit breaker").',
  fields: (t) => ({
    state: t.field({
      type: CircuitState,
      description:
        '`closed`: deliveries go out. `open`: too many recent attempts failed; deliveries wait (nothing is dropped) until a probe after `nextProbeAt` succeeds. `half_open`: that probe is in flight.',
      resolve: (c) => c.state,
    }),
    openedAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When the breaker opened; null while closed.',
      resolve: (c) => c.openedAt,
    }),
    nextProbeAt: t.field({
      type: 'DateTime',
      nullable: true,
      description:
        'While open: the earliest time of the next probe, one delivery due then; null otherwise. Each failed probe doubles the wait, up to a cap.',
      resolve: (c) => c.nextProbeAt,
    }),
    failureRate: t.float({
      nullable: true,
      description: 'The share of the endpoint’s recent attempts that failed, 0 to 1; null when there were none.',
      resolve: (c) => c.failureRate,
    }),
    recentAttempts: t.int({
      description: 'The recent attempts `failureRate` is taken over (the breaker’s window, a couple of minutes by default).',
      resolve: (c) => c.recentAttempts,
    }),
  }),
});

export const WebhookEndpoint = builder.prismaObject('WebhookEndpoint', {
  description: 'An HTTPS endpoint of the tenant that receives signed events. Its secret is shown only at creation and rotation.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    url: t.exposeString('url'),
    description: t.exposeString('description', { nullable: true }),
    events: t.exposeStringList('events'),
    enabled: t.exposeBoolean('enabled'),
    disabledReason: t.exposeString('disabledReason', { nullable: true }),
    ordered: t.exposeBoolean('ordered', {
      description:
        'Ordered delivery: an event is sent only once the one before it of the same sequence subject was delivered or given up; other subjects go out meanwhile.',
    }),
    signatureScheme: t.exposeString('signatureScheme', { description: SCHEME_DESCRIPTION }),
    publicKey: t.exposeString('publicKey', {
      nullable: true,
      description:
        'The Ed25519 public key (`whpk_` + base64) that verifies the `v1a,` signatures of the `standard` scheme; null for an endpoint that has none yet (it gets one when switched to `standard`).',
    }),
    previousPublicKey: t.string({
      nullable: true,
      description: 'The public key rotated out, whose `v1a,` signatures deliveries still carry until `previousSecretValidUntil`.',
      resolve: (e) => (e.previousExpiresAt && e.previousExpiresAt > new Date() ? e.previousPublicKey : null),
    }),
    filters: t.expose('filters', { type: 'JSON', nullable: true, description: FILTERS_DESCRIPTION }),
    rateLimitPerSecond: t.exposeFloat('rateLimitPerSecond', { nullable: true, description: RATE_DESCRIPTION }),
    circuit: t.field({
      type: Circuit,
      description: 'The endpoint’s circuit breaker: whether its deliveries go out or wait for a probe to succeed.',
      select: { circuit: true },
      resolve: (e, _args, ctx) => ctx.services.webhookStats.circuit(e.circuit),
    }),
    previousSecretValidUntil: t.field({
      type: 'DateTime',
      nullable: true,
      resolve: (e) => (e.previousExpiresAt && e.previousExpiresAt > new Date() ? e.previousExpiresAt : null),
    }),
    lastSuccessAt: t.expose('lastSuccessAt', { type: 'DateTime', nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
});

const WithSecret = builder.objectRef<{ endpoint: object; secret: string }>('WebhookEndpointWithSecret').implement({
  description: 'The endpoint and its signing secret, shown this once: store it now.',
  fields: (t) => ({
    endpoint: t.field({ type: WebhookEndpoint, resolve: (r) => r.endpoint as never }),
    secret: t.exposeString('secret'),
  }),
});

builder.prismaObject('WebhookAttempt', {
  fields: (t) => ({
    attempt: t.exposeInt('attempt'),
    startedAt: t.expose('startedAt', { type: 'DateTime' }),
    durationMs: t.exposeInt('durationMs'),
    statusCode: t.exposeInt('statusCode', { nullable: true }),
    error: t.exposeString('error', { nullable: true }),
    responseBody: t.exposeString('responseBody', { nullable: true, description: 'The first 2 KB of the answer.' }),
  }),
});

const WebhookDelivery = builder.prismaObject('WebhookDelivery', {
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID', description: 'Sent as X-Webhook-Id, the same on every attempt.' }),
    endpointId: t.expose('endpointId', { type: 'UUID' }),
    eventType: t.exposeString('eventType'),
    isTest: t.exposeBoolean('isTest'),
    status: t.exposeString('status', { description: '`pending` (will be attempted at nextAttemptAt), `succeeded` or `failed`.' }),
    attempts: t.exposeInt('attempts'),
    nextAttemptAt: t.expose('nextAttemptAt', { type: 'DateTime', nullable: true }),
    lastStatusCode: t.exposeInt('lastStatusCode', { nullable: true }),
    lastError: t.exposeString('lastError', { nullable: true }),
    sequence: t.exposeInt('sequence', {
      nullable: true,
      description:
        'The event’s number among the tenant’s events of its sequence subject, sent as X-Webhook-Sequence; null for a Test delivery.',
    }),
    sequenceSubject: t.exposeString('sequenceSubject', {
      nullable: true,
      description:
        'What the event is numbered under (`customer:<id>`, `invoice:<id>`, …), sent as X-Webhook-Sequence-Subject; null for a Test delivery.',
    }),
    envelope: t.expose('envelope', { type: 'JSON', description: 'The CloudEvents envelope; the body sent is data.payload.' }),
    attemptLog: t.relation('attemptLog', { query: { orderBy: { attempt: 'asc' } } }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});
const DeliveryConnection = connectionOf('WebhookDelivery', WebhookDelivery);

const WebhookEvent = builder.prismaObject('OutboxEvent', {
  name: 'WebhookEvent',
  description: 'An outbound event as every delivery of it sends it, with its place among its subject’s events.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID', description: 'The event’s id, the `id` of the CloudEvents envelope in the delivery log.' }),
    type: t.exposeString('type'),
    sequence: t.int({
      description: 'Its number among the tenant’s events of its sequence subject: 1, 2, 3, … with no gap.',
      // The read selects numbered events only (`sequence > afterSequence`).
      resolve: (e) => e.sequence!,
    }),
    sequenceSubject: t.string({ description: 'What it is numbered under, e.g. `customer:<id>`.', resolve: (e) => e.sequenceSubject! }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    payload: t.expose('payload', { type: 'JSON', description: 'The body every delivery of the event sends.' }),
  }),
});

type EventPage = Page<OutboxEventRow> & { firstAvailableSequence: number | null; lastSequence: number | null };
const EventPageRef = builder.objectRef<EventPage>('WebhookEventConnection').implement({
  description: 'A subject’s events in number order, a page at a time, and where its numbering stands.',
  fields: (t) => ({
    nodes: t.field({ type: [WebhookEvent], resolve: (p) => p.nodes }),
    pageInfo: t.field({ type: PageInfo, resolve: (p) => p.pageInfo }),
    totalCount: t.int({ description: 'The events after `afterSequence`; costs a count query.', resolve: (p) => p.totalCount() }),
    firstAvailableSequence: t.int({
      nullable: true,
      description:
        'The lowest number among the subject’s events still kept (older ones are removed by retention); null when none is. When it is above `afterSequence` + 1, the events between were removed and cannot be read again.',
      resolve: (p) => p.firstAvailableSequence,
    }),
    lastSequence: t.int({
      nullable: true,
      description: 'The last number given under the subject; null when none was.',
      resolve: (p) => p.lastSequence,
    }),
  }),
});

const Latency = builder.objectRef<EndpointStats['latencyMs']>('WebhookLatency').implement({
  description:
    'Percentiles of the attempts’ durations in milliseconds, from sending to the answer or the timeout; estimated from a histogram whose buckets are 12 % apart. Null without attempts.',
  fields: (t) => ({
    p50: t.float({ nullable: true, resolve: (l) => l.p50 }),
    p95: t.float({ nullable: true, resolve: (l) => l.p95 }),
    p99: t.float({ nullable: true, resolve: (l) => l.p99 }),
  }),
});

const StatsPointRef = builder.objectRef<StatsPoint>('WebhookStatsPoint').implement({
  fields: (t) => ({
    from: t.field({ type: 'DateTime', resolve: (p) => p.from }),
    attempts: t.int({ resolve: (p) => p.attempts }),
    succeeded: t.int({ resolve: (p) => p.succeeded }),
    failed: t.int({ resolve: (p) => p.failed }),
    p95Ms: t.float({ nullable: true, resolve: (p) => p.p95Ms }),
  }),
});

const EndpointStatsRef = builder.objectRef<EndpointStats>('WebhookEndpointStats').implement({
  description: 'How an endpoint’s deliveries have gone lately (docs/receiving-webhooks.md, "Delivery figures"); Tests are not counted.',
  fields: (t) => ({
    endpointId: t.field({ type: 'UUID', resolve: (s) => s.endpointId }),
    window: t.field({ type: WebhookStatsWindow, resolve: (s) => s.window }),
    from: t.field({ type: 'DateTime', description: 'The start of the window: the start of its first point.', resolve: (s) => s.from }),
    to: t.field({ type: 'DateTime', resolve: (s) => s.to }),
    attempts: t.int({ description: 'Attempts made in the window.', resolve: (s) => s.attempts }),
    succeeded: t.int({ resolve: (s) => s.succeeded }),
    failed: t.int({
      description: 'Attempts that failed: an answer other than 2xx, a timeout, a refused or reset connection.',
      resolve: (s) => s.failed,
    }),
    successRate: t.float({ nullable: true, description: 'succeeded / attempts; null without attempts.', resolve: (s) => s.successRate }),
    latencyMs: t.field({ type: Latency, resolve: (s) => s.latencyMs }),
    pending: t.int({
      description: 'Deliveries waiting now: due, scheduled for a retry, or held by the circuit breaker.',
      resolve: (s) => s.pending,
    }),
    held: t.int({ description: 'Of those, the ones the circuit breaker holds.', resolve: (s) => s.held }),
    oldestPendingAgeSeconds: t.float({
      nullable: true,
      description: 'How long the oldest delivery still pending has existed; null when none is pending.',
      resolve: (s) => s.oldestPendingAgeSeconds,
    }),
    points: t.field({
      type: [StatsPointRef],
      description: 'The window point by point, oldest first, every point present.',
      resolve: (s) => s.points,
    }),
  }),
});

const IN_SEQUENCE: Sort = { field: 'sequence', direction: 'asc', kind: 'integer' };

const TestResult = builder
  .objectRef<{ deliveryId: string; event: string; status: string; statusCode?: number | null; error?: string | null; durationMs?: number }>(
    'WebhookTestResult',
  )
  .implement({
    fields: (t) => ({
      deliveryId: t.field({ type: 'UUID', resolve: (r) => r.deliveryId }),
      event: t.exposeString('event'),
      success: t.boolean({ resolve: (r) => r.status === 'succeeded' }),
      statusCode: t.int({ nullable: true, resolve: (r) => r.statusCode ?? null }),
      error: t.string({ nullable: true, resolve: (r) => r.error ?? null }),
      durationMs: t.int({ nullable: true, resolve: (r) => r.durationMs ?? null }),
    }),
  });

builder.queryFields((t) => ({
  webhookEventTypes: t.field({
    type: [EventTypeRef],
    description: 'The live list of subscribable events.',
    resolve: (_r, _a, ctx) => {
      requireCapability(ctx, 'read');
      return eventTypes();
    },
  }),
  webhookEndpoints: t.prismaField({
    type: ['WebhookEndpoint'],
    resolve: (query, _r, _a, ctx) => {
      const p = requireCapability(ctx, 'read');
      return ctx.prisma.webhookEndpoint.findMany({
        ...query,
        where: { tenantId: p.tenantId },
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      });
    },
  }),
  webhookEndpoint: t.prismaField({
    type: 'WebhookEndpoint',
    args: { id: t.arg({ type: 'UUID' }) },
    // The selection's relations (its circuit breaker) come with it, in the same read.
    resolve: async (query, _r, args, ctx) => ctx.services.webhookEndpoints.owned(requireCapability(ctx, 'read').tenantId, args.id, query),
  }),
  webhookDeliveries: t.field({
    type: DeliveryConnection,
    description: 'An endpoint’s deliveries, newest first, with every attempt.',
    args: {
      endpointId: t.arg({ type: 'UUID' }),
      first: t.arg.int({ required: false, description: `Page size, 1 to ${MAX_PAGE_SIZE} (default ${DEFAULT_PAGE_SIZE}).` }),
      after: t.arg.string({ required: false }),
    },
    resolve: async (_r, args, ctx, info) => {
      const p = requireCapability(ctx, 'read');
      await ctx.services.webhookEndpoints.owned(p.tenantId, args.endpointId);
      const where = { tenantId: p.tenantId, endpointId: args.endpointId };
      return keysetPage<WebhookDeliveryRow>(ctx.prisma.webhookDelivery, where, args, { context: ctx, info });
    },
  }),
  webhookEndpointStats: t.field({
    type: EndpointStatsRef,
    description:
      'An endpoint’s delivery figures over the last hour (`hour`, in points of five minutes) or day (`day`, the default, in points of an hour): success rate, latency percentiles, and the deliveries pending now.',
    args: {
      endpointId: t.arg({ type: 'UUID' }),
      window: t.arg({ type: WebhookStatsWindow, required: false, defaultValue: 'day' }),
    },
    resolve: async (_r, args, ctx) => {
      const p = requireCapability(ctx, 'read');
      await ctx.services.webhookEndpoints.owned(p.tenantId, args.endpointId);
      return ctx.services.webhookStats.figures(args.endpointId, args.window ?? 'day');
    },
  }),
  webhookEvents: t.field({
    type: EventPageRef,
    description:
      'A sequence subject’s outbound events after a number, in number order: what a receiver missed, read back (docs/receiving-webhooks.md, "Catching up").',
    args: {
      subject: t.arg.string({ description: 'The sequence subject, as X-Webhook-Sequence-Subject names it, e.g. `customer:<id>`.' }),
      afterSequence: t.arg.int({ required: false, description: 'Only events numbered after this one (default 0: from the first).' }),
      first: t.arg.int({ required: false, description: `Page size, 1 to ${MAX_PAGE_SIZE} (default ${DEFAULT_PAGE_SIZE}).` }),
      after: t.arg.string({ required: false }),
    },
    resolve: async (_r, args, ctx, info) => {
      const p = requireCapability(ctx, 'read');
      const { subject, afterSequence } = ctx.services.webhookEvents.parse(args);
      const where = ctx.services.webhookEvents.where(p.tenantId, subject, afterSequence);
      const [page, bounds] = await Promise.all([
        keysetPage<OutboxEventRow>(ctx.prisma.outboxEvent, where, args, { context: ctx, info }, IN_SEQUENCE),
        ctx.services.webhookEvents.bounds(p.tenantId, subject),
      ]);
      return { ...page, firstAvailableSequence: bounds.firstAvailable, lastSequence: bounds.last };
    },
  }),
}));

const EndpointInput = builder.inputType('WebhookEndpointInput', {
  fields: (t) => ({
    url: t.string({ required: false }),
    events: t.stringList({ required: false }),
    description: t.string({ required: false }),
    enabled: t.boolean({ required: false }),
    ordered: t.boolean({
      required: false,
      description: 'Send an event only once the one before it of the same sequence subject was delivered or given up (default false).',
    }),
    signatureScheme: t.string({ required: false, description: SCHEME_DESCRIPTION }),
    filters: t.field({ type: 'JSON', required: false, description: `${FILTERS_DESCRIPTION} null removes them all.` }),
    rateLimitPerSecond: t.float({ required: false, description: `${RATE_DESCRIPTION} null removes it.` }),
  }),
});

const createInput = z.object({
  url: oneLine().max(2048),
  events: z.array(z.string()).max(50),
  description: freeText().max(500).nullish(),
  ordered: z.boolean().optional(),
  signatureScheme: z.string().max(20).optional(),
  filters: z.unknown().optional(),
  rateLimitPerSecond: z.number().nullish(),
});
const updateInput = z
  .object({
    url: oneLine().max(2048).optional(),
    events: z.array(z.string()).max(50).optional(),
    description: freeText().max(500).nullish(),
    enabled: z.boolean().optional(),
    ordered: z.boolean().optional(),
    signatureScheme: z.string().max(20).optional(),
    filters: z.unknown().optional(),
    rateLimitPerSecond: z.number().nullish(),
  })
  .refine((v) => Object.values(v).some((x) => x !== undefined), { message: 'set at least one field' });
const defined = <T extends object>(o: T) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;

builder.mutationFields((t) => ({
  createWebhookEndpoint: t.field({
    type: WithSecret,
    args: { input: t.arg({ type: EndpointInput }) },
    resolve: (_r, args, ctx) => {
      const p = requireCapability(ctx, 'manage');
      const input = parseInput(createInput, {
        url: args.input.url ?? undefined,
        events: args.input.events ?? undefined,
        description: args.input.description,
        ordered: args.input.ordered ?? undefined,
        signatureScheme: args.input.signatureScheme ?? undefined,
        filters: args.input.filters ?? undefined,
        rateLimitPerSecond: args.input.rateLimitPerSecond ?? undefined,
      });
      return ctx.services.webhookEndpoints.create(actorOf(ctx, p), input);
    },
  }),
  // A plain field: the updated row comes from the service, and what the selection needs besides (its circuit
  // breaker) is read after it, as for an endpoint with its secret.
  updateWebhookEndpoint: t.field({
    type: WebhookEndpoint,
    args: { id: t.arg({ type: 'UUID' }), input: t.arg({ type: EndpointInput }) },
    resolve: (_r, args, ctx) => {
      const p = requireCapability(ctx, 'manage');
      const input = parseInput(
        updateInput,
        defined({
          ...args.input,
          url: args.input.url ?? undefined,
          events: args.input.events ?? undefined,
          enabled: args.input.enabled ?? undefined,
          ordered: args.input.ordered ?? undefined,
          signatureScheme: args.input.signatureScheme ?? undefined,
        }),
      );
      return ctx.services.webhookEndpoints.update(actorOf(ctx, p), args.id, input);
    },
  }),
  deleteWebhookEndpoint: t.boolean({
    args: { id: t.arg({ type: 'UUID' }) },
    resolve: async (_r, args, ctx) => {
      await ctx.services.webhookEndpoints.remove(actorOf(ctx, requireCapability(ctx, 'manage')), args.id);
      return true;
    },
  }),
  rotateWebhookEndpointSecret: t.field({
    type: WithSecret,
    description: 'Issues a new signing secret; for 24 hours deliveries carry both signatures, the new one first.',
    args: { id: t.arg({ type: 'UUID' }) },
    resolve: (_r, args, ctx) => ctx.services.webhookEndpoints.rotateSecret(actorOf(ctx, requireCapability(ctx, 'manage')), args.id),
  }),
  testWebhookEndpoint: t.field({
    type: TestResult,
    description: 'Sends a sample payload of a subscribed event (default: the first), signed like any delivery, and records the attempt.',
    args: { id: t.arg({ type: 'UUID' }), event: t.arg.string({ required: false }) },
    resolve: (_r, args, ctx) =>
      ctx.services.webhookDeliveries.sendTest(actorOf(ctx, requireCapability(ctx, 'manage')), args.id, args.event),
  }),
  resendWebhookDelivery: t.boolean({
    description: 'Makes one more attempt at a delivery now.',
    args: { id: t.arg({ type: 'UUID' }) },
    resolve: async (_r, args, ctx) => {
      await ctx.services.webhookDeliveries.resend(actorOf(ctx, requireCapability(ctx, 'manage')), args.id);
      return true;
    },
  }),
  replayWebhookDeliveries: t.int({
    description: 'Resends an endpoint’s failed deliveries created since a time; answers how many.',
    args: { endpointId: t.arg({ type: 'UUID' }), since: t.arg({ type: 'DateTime' }) },
    resolve: (_r, args, ctx) =>
      ctx.services.webhookDeliveries.replayFailed(actorOf(ctx, requireCapability(ctx, 'manage')), args.endpointId, args.since),
  }),
}));
