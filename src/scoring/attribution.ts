import type { INPUT_GROUPS } from '../contract/enums.ts';
import { assessHealth } from './assess.ts';
import type { Carry } from './dimension-scores.ts';
import { type ChurnModel, predict } from './churn-model.ts';
import { DIMENSIONS, type DimensionKey, type Weights } from './dimensions.ts';
import type { Features } from './features.ts';
import { ACTIVITY_KINDS, BILLING_KINDS, CHAT_KINDS, GROWTH_KINDS, SUPPORT_KINDS, USAGE_KINDS } from './signal-kinds.ts';

// Why a score moved (docs/scoring.md, "Why it moved"). A computation is a pure function of its inputs:
// the customer's features, which dimensions carry on through silence, the tenant's weights, the score 30
// days ago and the churn model. Between two computations the inputs are switched from the old values to
// the new one at a time, in a fixed order, and each output is evaluated after every switch; an input's
// contribution is what its switch changed. The differences telescope, so they add up to the whole change
// by construction. Outputs are compared in their own stored units (whole points, tenths of a dimension
// point, ten-thousandths of a probability), integers, so the sum is exact and not a float's near miss.

export type InputGroup = (typeof INPUT_GROUPS)[number];

/** The signal kinds whose arrival can move a group's inputs. */
export const GROUP_KINDS: Record<InputGroup, readonly string[]> = {
  usage: USAGE_KINDS,
  engagement: CHAT_KINDS,
  support: SUPPORT_KINDS,
  billing: BILLING_KINDS,
  growth: GROWTH_KINDS,
  activity: ACTIVITY_KINDS,
  history: [],
  settings: [],
  time: [],
};

type FeatureKey = Exclude<keyof Features, 'asOf'>;

/** Every feature with its group, in the order of the path (the order of docs/scoring.md's table). */
const FEATURE_GROUPS: Record<FeatureKey, InputGroup> = {
  usageUnits7d: 'usage',
  usageUnits30d: 'usage',
  usageUnitsPrev30d: 'usage',
  usageActiveDays30d: 'usage',
  usageUsers30d: 'usage',
  usageLastAt: 'usage',
  usageCount90d: 'usage',
  chat30d: 'engagement',
  chatPrev30d: 'engagement',
  chatActors30d: 'engagement',
  chatLastAt: 'engagement',
  chatJoined30d: 'engagement',
  chatLeft30d: 'engagement',
  chatCount90d: 'engagement',
  supportOpened30d: 'support',
  supportOpenedPrev30d: 'support',
  supportRatingAvg90d: 'support',
  supportRatings90d: 'support',
  supportSentiment30d: 'support',
  supportMessages30d: 'support',
  supportSentiment90d: 'support',
  supportMessages90d: 'support',
  supportCount90d: 'support',
  openConversations: 'support',
  oldestOpenConversationAt: 'support',
  conversations90d: 'support',
  firstResponseHoursAvg: 'support',
  failedPayments30d: 'billing',
  failedPayments90d: 'billing',
  lastFailedAt: 'billing',
  lastPaidAt: 'billing',
  refunds90d: 'billing',
  trialExtensions30d: 'billing',
  billingCount90d: 'billing',
  invoices: 'billing',
  overdueInvoices: 'billing',
  oldestOverdueDueAt: 'billing',
  subscriptions: 'billing',
  subscriptionStatus: 'billing',
  trialEnd: 'billing',
  seats: 'growth',
  seatsDelta90d: 'growth',
  mrrMinor: 'growth',
  mrrDelta90d: 'growth',
  leads30d: 'growth',
  growthCount90d: 'growth',
  activityLastAt: 'activity',
  sentiment14d: 'activity',
  messages14d: 'activity',
  sentiment30d: 'activity',
  messages30d: 'activity',
};

/**
 * The counts that decide whether a dimension has data at all come first on the path: a dimension then
 * appears (its weight taken from the others) before the inputs that set its score, and those inputs get
 * the credit for the score they set rather than the count that let it show.
 */
const PRESENCE: FeatureKey[] = [
  'usageCount90d',
  'chatCount90d',
  'supportCount90d',
  'billingCount90d',
  'invoices',
  'subscriptions',
  'growthCount90d',
];
const PATH_ORDER: FeatureKey[] = [...PRESENCE, ...(Object.keys(FEATURE_GROUPS) as FeatureKey[]).filter((k) => !PRESENCE.includes(k))];

const DATE_FEATURES = new Set<string>([
  'asOf',
  'usageLastAt',
  'chatLastAt',
  'oldestOpenConversationAt',
  'lastFailedAt',
  'lastPaidAt',
  'oldestOverdueDueAt',
  'trialEnd',
  'activityLastAt',
]);

/** Everything one computation read; stored with the snapshot so the next one can be explained. */
export interface ScoringInputs {
  features: Features;
  carry: Carry;
  weights: Weights;
  /** The overall score 30 days before, which the churn model's decline reads. */
  score30d: number | null;
  /** The tenant's active churn model, null for the default. */
  modelId: string | null;
}

/** The inputs as stored (JSON: dates as ISO strings). */
export const storedInputs = (i: ScoringInputs): string => JSON.stringify(i);

/** Inputs read back from storage; null when they are missing or of another shape. */
export function restoreInputs(stored: unknown): ScoringInputs | null {
  if (!stored || typeof stored !== 'object') return null;
  const s = stored as Record<string, unknown>;
  if (!s.features || typeof s.features !== 'object' || !s.weights || typeof s.weights !== 'object') return null;
  const raw = s.features as Record<string, unknown>;
  if (Object.keys(FEATURE_GROUPS).some((k) => !(k in raw))) return null;
  const features = Object.fromEntries(
    Object.entries(raw).map(([k, v]) => [k, DATE_FEATURES.has(k) && typeof v === 'string' ? new Date(v) : v]),
  ) as unknown as Features;
  return {
    features,
    carry: (s.carry ?? {}) as Carry,
    weights: s.weights as Weights,
    score30d: typeof s.score30d === 'number' ? s.score30d : null,
    modelId: typeof s.modelId === 'string' ? s.modelId : null,
  };
}

/** The outputs of one computation, each in its integer unit. */
export interface Outputs {
  score: number | null;
  /** Tenths of a point. */
  dimensions: Record<DimensionKey, number | null>;
  /** Ten-thousandths. */
  churn: number | null;
}

export function evaluate(inputs: ScoringInputs, model: ChurnModel): Outputs {
  const health = assessHealth(inputs.features, inputs.carry, inputs.weights, {
    score7d: null,
    dimensions7d: {},
    score30d: inputs.score30d,
  });
  const dimensions = Object.fromEntries(
    health.dimensions.map((d) => [d.key, d.score === null ? null : Math.round(d.score * 10)]),
  ) as Record<DimensionKey, number | null>;
  const churn = health.score === null ? null : Math.round(predict(model, inputs.features, health.churnInputs).probability * 10_000);
  return { score: health.score, dimensions, churn };
}

/** One input's share of a change: points, dimension points and probability, each only where it moved. */
export interface Driver {
  input: string;
  group: InputGroup;
  from: unknown;
  to: unknown;
  score: number;
  dimensions: Partial<Record<DimensionKey, number>>;
  churn: number;
}

export interface Change {
  score: { from: number | null; to: number | null };
  dimensions: Record<DimensionKey, { from: number | null; to: number | null }>;
  churn: { from: number | null; to: number | null };
  /** Largest effect first (score, then churn, then dimensions). */
  drivers: Driver[];
}

const same = (a: unknown, b: unknown) => {
  if (a instanceof Date || b instanceof Date) return a instanceof Date && b instanceof Date && a.getTime() === b.getTime();
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
};

const shown = (v: unknown) => (v instanceof Date ? v.toISOString() : (v ?? null));

interface Step {
  input: string;
  group: InputGroup;
  from: unknown;
  to: unknown;
  apply: (i: ScoringInputs) => ScoringInputs;
}

/** The inputs that differ, in the path's fixed order: settings, the features (presence first), the history, then time. */
function stepsBetween(a: ScoringInputs, b: ScoringInputs): Step[] {
  const steps: Step[] = [];
  if (!same(a.weights, b.weights))
    steps.push({ input: 'weights', group: 'settings', from: a.weights, to: b.weights, apply: (i) => ({ ...i, weights: b.weights }) });
  if (a.modelId !== b.modelId)
    steps.push({ input: 'churn_model', group: 'settings', from: a.modelId, to: b.modelId, apply: (i) => ({ ...i, modelId: b.modelId }) });
  for (const key of PATH_ORDER) {
    const [from, to] = [a.features[key], b.features[key]];
    if (same(from, to)) continue;
    steps.push({
      input: key,
      group: FEATURE_GROUPS[key],
      from: shown(from),
      to: shown(to),
      apply: (i) => ({ ...i, features: { ...i.features, [key]: to } }),
    });
  }
  for (const key of DIMENSIONS) {
    const [from, to] = [Boolean(a.carry[key]), Boolean(b.carry[key])];
    if (from !== to)
      steps.push({ input: `carry_${key}`, group: 'history', from, to, apply: (i) => ({ ...i, carry: { ...i.carry, [key]: to } }) });
  }
  if (a.score30d !== b.score30d)
    steps.push({ input: 'score_30d', group: 'history', from: a.score30d, to: b.score30d, apply: (i) => ({ ...i, score30d: b.score30d }) });
  if (!same(a.features.asOf, b.features.asOf))
    steps.push({
      input: 'as_of',
      group: 'time',
      from: shown(a.features.asOf),
      to: shown(b.features.asOf),
      apply: (i) => ({ ...i, features: { ...i.features, asOf: b.features.asOf } }),
    });
  return steps;
}

/**
 * Follows an output along the path: each step's contribution is its value less the last value that was a
 * number. A step where the output has no value (a dimension without data) contributes nothing, and the
 * step that gives it a value again takes the difference; so the sum is always `last − first` when both
 * ends are numbers. When either end is null the change is not a number and no step gets a share.
 */
function track(values: (number | null)[]): number[] {
  const first = values[0];
  const last = values[values.length - 1];
  const out = values.slice(1).map(() => 0);
  if (first === null || first === undefined || last === null || last === undefined) return out;
  let previous = first;
  values.slice(1).forEach((v, i) => {
    if (v === null) return;
    out[i] = v - previous;
    previous = v;
  });
  return out;
}

/** Explains the change from `before` to `after`; `modelOf` answers the churn model of an id (null: the default). */
export function attribute(before: ScoringInputs, after: ScoringInputs, modelOf: (id: string | null) => ChurnModel): Change {
  const steps = stepsBetween(before, after);
  const points: Outputs[] = [evaluate(before, modelOf(before.modelId))];
  let current = before;
  for (const step of steps) {
    current = step.apply(current);
    points.push(evaluate(current, modelOf(current.modelId)));
  }
  const first = points[0]!;
  const last = points[points.length - 1]!;
  const score = track(points.map((p) => p.score));
  const churn = track(points.map((p) => p.churn));
  const dims = Object.fromEntries(DIMENSIONS.map((k) => [k, track(points.map((p) => p.dimensions[k]))])) as Record<DimensionKey, number[]>;

  const drivers: Driver[] = [];
  steps.forEach((step, i) => {
    const dimensions: Partial<Record<DimensionKey, number>> = {};
    for (const k of DIMENSIONS) if (dims[k][i] !== 0) dimensions[k] = dims[k][i]! / 10;
    if (score[i] === 0 && churn[i] === 0 && Object.keys(dimensions).length === 0) return;
    drivers.push({
      input: step.input,
      group: step.group,
      from: step.from,
      to: step.to,
      score: score[i]!,
      dimensions,
      churn: churn[i]! / 10_000,
    });
  });
  const weight = (d: Driver) => [Math.abs(d.score), Math.abs(d.churn), Math.max(0, ...Object.values(d.dimensions).map(Math.abs))];
  drivers.sort((x, y) => {
    const [a, b] = [weight(x), weight(y)];
    return b[0]! - a[0]! || b[1]! - a[1]! || b[2]! - a[2]!;
  });
  const tenths = (v: number | null) => (v === null ? null : v / 10);
  return {
    score: { from: first.score, to: last.score },
    dimensions: Object.fromEntries(
      DIMENSIONS.map((k) => [k, { from: tenths(first.dimensions[k]), to: tenths(last.dimensions[k]) }]),
    ) as Change['dimensions'],
    churn: { from: first.churn === null ? null : first.churn / 10_000, to: last.churn === null ? null : last.churn / 10_000 },
    drivers,
  };
}

/** True when any output moved. */
export const moved = (c: Change) =>
  c.score.from !== c.score.to || c.churn.from !== c.churn.to || DIMENSIONS.some((k) => c.dimensions[k].from !== c.dimensions[k].to);

/** What each input is, for people. */
const INPUT_LABELS: Record<string, string> = {
  weights: 'Health weights',
  churn_model: 'Churn model',
  usageUnits7d: 'Product events and code activity (7 days)',
  usageUnits30d: 'Product events and code activity (30 days)',
  usageUnitsPrev30d: 'Product events and code activity (the 30 days before)',
  usageActiveDays30d: 'Days with activity (30 days)',
  usageUsers30d: 'Active users (30 days)',
  usageLastAt: 'Last product or code activity',
  usageCount90d: 'Usage signals (90 days)',
  chat30d: 'Chat messages and reactions (30 days)',
  chatPrev30d: 'Chat messages and reactions (the 30 days before)',
  chatActors30d: 'People taking part in chat (30 days)',
  chatLastAt: 'Last chat message or reaction',
  chatJoined30d: 'Chat members joined (30 days)',
  chatLeft30d: 'Chat members left (30 days)',
  chatCount90d: 'Chat signals (90 days)',
  supportOpened30d: 'Support conversations opened (30 days)',
  supportOpenedPrev30d: 'Support conversations opened (the 30 days before)',
  supportRatingAvg90d: 'Average support rating (90 days)',
  supportRatings90d: 'Support ratings (90 days)',
  supportSentiment30d: 'Tone of messages to support (30 days)',
  supportMessages30d: 'Messages to support (30 days)',
  supportSentiment90d: 'Tone of messages to support (90 days)',
  supportMessages90d: 'Messages to support (90 days)',
  supportCount90d: 'Support signals (90 days)',
  openConversations: 'Open support conversations',
  oldestOpenConversationAt: 'Oldest open support conversation',
  conversations90d: 'Support conversations opened (90 days)',
  firstResponseHoursAvg: 'Hours to support’s first reply',
  failedPayments30d: 'Failed payments (30 days)',
  failedPayments90d: 'Failed payments (90 days)',
  lastFailedAt: 'Last failed payment',
  lastPaidAt: 'Last paid invoice',
  refunds90d: 'Refunds (90 days)',
  trialExtensions30d: 'Trial extensions (30 days)',
  billingCount90d: 'Billing signals (90 days)',
  invoices: 'Invoices',
  overdueInvoices: 'Overdue invoices',
  oldestOverdueDueAt: 'Oldest overdue invoice’s due date',
  subscriptions: 'Subscriptions',
  subscriptionStatus: 'Subscription status',
  trialEnd: 'Trial end',
  seats: 'Paid seats',
  seatsDelta90d: 'Seat change (90 days)',
  mrrMinor: 'Recurring revenue',
  mrrDelta90d: 'Recurring revenue change (90 days)',
  leads30d: 'Ad leads (30 days)',
  growthCount90d: 'Growth signals (90 days)',
  activityLastAt: 'Last activity of any kind',
  sentiment14d: 'Tone of the customer’s messages (14 days)',
  messages14d: 'The customer’s messages (14 days)',
  sentiment30d: 'Tone of the customer’s messages (30 days)',
  messages30d: 'The customer’s messages (30 days)',
  carry_usage: 'Usage scored through silence',
  carry_engagement: 'Engagement scored through silence',
  carry_support: 'Support scored through silence',
  carry_billing: 'Billing scored through silence',
  carry_growth: 'Growth scored through silence',
  score_30d: 'Health score 30 days before',
  as_of: 'Time passing (recency and windows)',
};

export const inputLabel = (input: string): string => INPUT_LABELS[input] ?? input;
