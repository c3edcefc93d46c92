import type { DimensionKey } from './dimensions.ts';
import { riskLevelFor } from './dimensions.ts';
import { daysBetween, type Features } from './features.ts';
import { trialDaysLeft } from './dimension-scores.ts';
import { interventionsFor, type Intervention } from './interventions.ts';
import { clamp, plural, round } from './numbers.ts';

/** What the churn model sees besides the raw features: the health computed from them. */
export interface HealthInputs {
  dimensions: Record<DimensionKey, number | null>;
  /** Score change over 30 days, or null without a score 30 days ago. */
  change30d: number | null;
}

interface FeatureDef {
  code: string;
  /** What the feature measures, for the model's documentation. */
  summary: string;
  /** The input's value; null when unknown. */
  value: (f: Features, h: HealthInputs) => number | null;
  /**
   * For an input that can be unknown: the value it takes then, and from which its contribution is measured —
   * what a customer with nothing to report shows (no shortfall, no change, neutral words, a first reply within
   * a working day, half its paid seats in use). Inputs that are always known have none.
   */
  neutral?: number;
  /** A sentence naming the customer's own numbers, shown when the feature is a risk factor. */
  describe: (f: Features, h: HealthInputs) => string;
}

const clamp01 = (n: number) => clamp(n, 0, 1);
const lack = (score: number | null) => (score === null ? null : 1 - score / 100);

/** A feature that is one dimension's shortfall from 100; `source` names the data the dimension needs. */
const fromDimension = (code: string, key: DimensionKey, source: string, sentence: string): FeatureDef => ({
  code,
  summary: `1 − ${key} score / 100 (unknown without ${source} data)`,
  neutral: 0,
  value: (_f, h) => lack(h.dimensions[key]),
  describe: (_f, h) => `${sentence} (${key} score ${Math.round(h.dimensions[key] ?? 0)} of 100).`,
});

export function daysSinceActivity(f: Features, h: HealthInputs): number | null {
  // Activity is measured only for customers that send it (a usage or engagement score exists).
  if (h.dimensions.usage === null && h.dimensions.engagement === null) return null;
  return daysBetween(f.activityLastAt, f.asOf) ?? 90;
}

/** The model's inputs, in order. docs/scoring.md documents each. */
export const CHURN_FEATURES: FeatureDef[] = [
  fromDimension('low_usage', 'usage', 'usage', 'Product usage is low'),
  fromDimension('low_engagement', 'engagement', 'chat', 'Little participation in chat'),
  fromDimension('poor_support', 'support', 'support', 'Support experience is poor'),
  fromDimension('billing_risk', 'billing', 'billing', 'Billing is in trouble'),
  fromDimension('weak_growth', 'growth', 'growth', 'The account is not growing'),
  {
    code: 'health_decline',
    summary: 'points lost over 30 days / 30, 0 to 1 (unknown without a score 30 days ago)',
    neutral: 0,
    value: (_f, h) => (h.change30d === null ? null : clamp01(-h.change30d / 30)),
    describe: (_f, h) => `Health fell ${Math.round(-(h.change30d ?? 0))} points in 30 days.`,
  },
  {
    code: 'inactivity',
    summary: 'days since the customer last did anything / 30, 0 to 1 (unknown when activity is not tracked)',
    neutral: 0,
    value: (f, h) => {
      const days = daysSinceActivity(f, h);
      return days === null ? null : clamp01(days / 30);
    },
    describe: (f, h) => {
      const d = Math.floor(daysSinceActivity(f, h) ?? 0);
      return d >= 90 ? 'No activity for 90 days or more.' : `No activity for ${plural(d, 'day')}.`;
    },
  },
  {
    code: 'failed_payments',
    summary: 'failed payments in 30 days / 3, 0 to 1',
    value: (f) => clamp01(f.failedPayments30d / 3),
    describe: (f) => `${plural(f.failedPayments30d, 'failed payment')} in the last 30 days.`,
  },
  {
    code: 'overdue_invoices',
    summary: 'overdue invoices / 2, 0 to 1',
    value: (f) => clamp01(f.overdueInvoices / 2),
    describe: (f) => `${plural(f.overdueInvoices, 'overdue invoice')}.`,
  },
  {
    code: 'trial_ending',
    summary: '1 − trial days left / 14 while trialing with 14 days or fewer left, else 0',
    value: (f) => {
      const left = trialDaysLeft(f);
      return left === null || left > 14 ? 0 : clamp01(1 - left / 14);
    },
    describe: (f) => `The trial ends in ${plural(Math.max(0, Math.ceil(trialDaysLeft(f) ?? 0)), 'day')}.`,
  },
  {
    code: 'support_backlog',
    summary: 'open support conversations / 5, 0 to 1',
    value: (f) => clamp01(f.openConversations / 5),
    describe: (f) => `${plural(f.openConversations, 'support conversation')} waiting.`,
  },
  {
    code: 'negative_sentiment',
    summary: '−2 × average sentiment of the customer’s messages over 30 days, 0 to 1',
    value: (f) => (f.messages30d > 0 && f.sentiment30d !== null ? clamp01(-2 * f.sentiment30d) : 0),
    describe: (f) => `Messages over the last 30 days read negative (sentiment ${(f.sentiment30d ?? 0).toFixed(2)}).`,
  },
];

const log1p = (n: number) => Math.log1p(Math.max(0, n));
/** ln((a + 1) / (b + 1)): 0 when flat, −0.69 at about half, +0.69 at about double, finite for zeros. */
const logRatio = (a: number, b: number) => Math.log((Math.max(0, a) + 1) / (Math.max(0, b) + 1));
const percent = (x: number) => `${Math.round(Math.abs(x) * 100)} %`;
const change = (ratio: number) => (ratio >= 1 ? `up ${percent(ratio - 1)}` : `down ${percent(1 - ratio)}`);
const seatsBefore = (f: Features) => (f.seats === null ? null : f.seats - f.seatsDelta90d);

/**
 * Graded inputs that keep magnitude and trend: counts on a log scale, ratios between windows, rates and
 * times. The default model weighs eight of them (DEFAULT_MODEL); a trained model may weigh all.
 * Unknown (null) where the customer sends no data of the kind.
 */
export const GRADED_FEATURES: FeatureDef[] = [
  {
    code: 'usage_volume',
    summary: 'ln(1 + product usage events over 30 days)',
    value: (f) => log1p(f.usageUnits30d),
    describe: (f) => `${plural(f.usageUnits30d, 'product usage event')} in the last 30 days.`,
  },
  {
    code: 'usage_trend',
    summary: 'ln((usage events over 30 days + 1) / (the 30 days before + 1)): negative when usage fell',
    value: (f) => logRatio(f.usageUnits30d, f.usageUnitsPrev30d),
    describe: (f) =>
      `Usage is ${change((f.usageUnits30d + 1) / (f.usageUnitsPrev30d + 1))} on the month before (${f.usageUnits30d} events, ${f.usageUnitsPrev30d} before).`,
  },
  {
    code: 'usage_recent_trend',
    summary: 'ln((usage events over 7 days × 30/7 + 1) / (usage events over 30 days + 1)): the last week against the month',
    value: (f) => logRatio((f.usageUnits7d * 30) / 7, f.usageUnits30d),
    describe: (f) =>
      `The last 7 days ran at ${Math.round((((f.usageUnits7d * 30) / 7 + 1) / (f.usageUnits30d + 1)) * 100)} % of the month’s pace (${plural(f.usageUnits7d, 'event')}).`,
  },
  {
    code: 'active_days',
    summary: 'ln(1 + days with usage in the last 30)',
    value: (f) => log1p(f.usageActiveDays30d),
    describe: (f) => `Used the product on ${plural(f.usageActiveDays30d, 'day')} of the last 30.`,
  },
  {
    code: 'seat_utilisation',
    summary: 'people active over 30 days / paid seats, at most 2 (unknown without seats)',
    neutral: 0.5,
    value: (f) => (f.seats ? Math.min(2, f.usageUsers30d / f.seats) : null),
    describe: (f) => `${f.usageUsers30d} of ${plural(f.seats ?? 0, 'paid seat')} active in the last 30 days.`,
  },
  {
    code: 'days_inactive',
    summary:
      'ln(1 + days since the customer last did anything), 90 when nothing in the window (unknown without usage, chat or support data)',
    neutral: 0,
    value: (f) => {
      const tracked = f.usageCount90d + f.chatCount90d + f.supportCount90d > 0;
      return tracked ? log1p(daysBetween(f.activityLastAt, f.asOf) ?? 90) : null;
    },
    describe: (f) => `No activity for ${plural(Math.floor(daysBetween(f.activityLastAt, f.asOf) ?? 90), 'day')}.`,
  },
  {
    code: 'seat_change',
    summary: 'ln(paid seats now / 90 days ago), between −3 and 3 (unknown without seats)',
    neutral: 0,
    value: (f) => {
      const before = seatsBefore(f);
      return f.seats === null || before === null ? null : clamp(Math.log(Math.max(1, f.seats) / Math.max(1, before)), -3, 3);
    },
    describe: (f) => `Paid seats went from ${seatsBefore(f)} to ${f.seats} in 90 days.`,
  },
  {
    code: 'mrr_change',
    summary: 'recurring revenue change over 90 days / revenue 90 days ago, −1 to 1 (unknown without revenue)',
    neutral: 0,
    value: (f) => {
      if (f.mrrMinor === null) return null;
      const before = f.mrrMinor - f.mrrDelta90d;
      return before > 0 ? clamp(f.mrrDelta90d / before, -1, 1) : 0;
    },
    describe: (f) => `Recurring revenue is ${change(f.mrrMinor! / Math.max(1, f.mrrMinor! - f.mrrDelta90d))} over 90 days.`,
  },
  {
    code: 'payment_failures_30d',
    summary: 'ln(1 + failed payments over 30 days)',
    value: (f) => log1p(f.failedPayments30d),
    describe: (f) => `${plural(f.failedPayments30d, 'failed payment')} in the last 30 days.`,
  },
  {
    code: 'payment_failures_90d',
    summary: 'ln(1 + failed payments over 90 days)',
    value: (f) => log1p(f.failedPayments90d),
    describe: (f) => `${plural(f.failedPayments90d, 'failed payment')} in the last 90 days.`,
  },
  {
    code: 'days_overdue',
    summary: 'ln(1 + days since the oldest unpaid overdue invoice was due), 0 without one',
    value: (f) => log1p(daysBetween(f.oldestOverdueDueAt, f.asOf) ?? 0),
    describe: (f) => `An invoice has been overdue for ${plural(Math.floor(daysBetween(f.oldestOverdueDueAt, f.asOf) ?? 0), 'day')}.`,
  },
  {
    code: 'past_due',
    summary: '1 when a subscription is past due, unpaid or incomplete, else 0',
    value: (f) => (f.subscriptionStatus === 'past_due' || f.subscriptionStatus === 'incomplete' ? 1 : 0),
    describe: () => 'A subscription is past due.',
  },
  {
    code: 'support_volume',
    summary: 'ln(1 + support conversations opened over 30 days)',
    value: (f) => log1p(f.supportOpened30d),
    describe: (f) => `${plural(f.supportOpened30d, 'support conversation')} opened in the last 30 days.`,
  },
  {
    code: 'support_trend',
    summary: 'ln((conversations opened over 30 days + 1) / (the 30 days before + 1))',
    value: (f) => logRatio(f.supportOpened30d, f.supportOpenedPrev30d),
    describe: (f) => `Support conversations: ${f.supportOpened30d} in the last 30 days, ${f.supportOpenedPrev30d} the 30 days before.`,
  },
  {
    code: 'support_tone',
    summary: '− average sentiment of what the customer wrote to support over 90 days, −1 to 1 (unknown without messages)',
    neutral: 0,
    value: (f) => (f.supportMessages90d > 0 && f.supportSentiment90d !== null ? -f.supportSentiment90d : null),
    describe: (f) =>
      `What the customer wrote to support reads ${(f.supportSentiment90d ?? 0) < 0 ? 'negative' : 'neutral'} (sentiment ${(f.supportSentiment90d ?? 0).toFixed(2)}).`,
  },
  {
    code: 'first_response_time',
    summary:
      'ln(1 + mean hours from a conversation’s start to support’s first reply, over 90 days; without a recorded reply, to its first close, or until now while open) (unknown without conversations)',
    // A first reply within a working day (8 hours) is the reference.
    neutral: Math.log(9),
    value: (f) => (f.conversations90d > 0 && f.firstResponseHoursAvg !== null ? log1p(f.firstResponseHoursAvg) : null),
    describe: (f) => `Support took ${Math.round(f.firstResponseHoursAvg ?? 0)} hours to first reply on average.`,
  },
  {
    code: 'support_rating',
    summary: '5 − average support rating over 90 days, 0 to 4 (unknown without ratings)',
    neutral: 0,
    value: (f) => (f.supportRatings90d > 0 && f.supportRatingAvg90d !== null ? 5 - f.supportRatingAvg90d : null),
    describe: (f) => `Support is rated ${(f.supportRatingAvg90d ?? 0).toFixed(1)} of 5.`,
  },
  {
    code: 'open_conversations',
    summary: 'ln(1 + open support conversations)',
    value: (f) => log1p(f.openConversations),
    describe: (f) => `${plural(f.openConversations, 'support conversation')} waiting.`,
  },
  {
    code: 'health_change',
    summary: 'health score change over 30 days / 10 (unknown without a score 30 days ago)',
    neutral: 0,
    value: (_f, h) => (h.change30d === null ? null : h.change30d / 10),
    describe: (_f, h) => `Health ${(h.change30d ?? 0) < 0 ? 'fell' : 'rose'} ${Math.abs(Math.round(h.change30d ?? 0))} points in 30 days.`,
  },
];

/** Every input of the model: the twelve risk shortfalls the default model weighs, then the graded ones. */
export const MODEL_FEATURES: FeatureDef[] = [...CHURN_FEATURES, ...GRADED_FEATURES];

export const FEATURE_CODES = MODEL_FEATURES.map((d) => d.code);

/**
 * Which way churn risk goes as a graded input grows: 1 up, −1 down, 0 either (more support conversations can
 * be a customer in trouble or one that is engaged). A trained weight is held to this sign, so a customer is
 * never called safer for doing worse; the twelve shortfalls all measure risk (1).
 */
const RISK_DIRECTION: Record<string, 1 | -1 | 0> = {
  usage_volume: -1,
  usage_trend: -1,
  usage_recent_trend: -1,
  active_days: -1,
  seat_utilisation: -1,
  days_inactive: 1,
  seat_change: -1,
  mrr_change: -1,
  payment_failures_30d: 1,
  payment_failures_90d: 1,
  days_overdue: 1,
  past_due: 1,
  support_volume: 0,
  support_trend: 0,
  support_tone: 1,
  first_response_time: 1,
  support_rating: 1,
  open_conversations: 1,
  health_change: -1,
};
export const FEATURE_SIGNS: number[] = [...CHURN_FEATURES.map(() => 1), ...GRADED_FEATURES.map((d) => RISK_DIRECTION[d.code]!)];

export interface ChurnModel {
  version: string;
  intercept: number;
  coefficients: Record<string, number>;
  /** Contributions are measured above these values; zeros for the default model. */
  baseline: Record<string, number>;
  trainedAt: Date | null;
}

/** The value an unknown input takes, and the default model's baseline: the input's neutral value, else 0. */
export const NEUTRAL: number[] = MODEL_FEATURES.map((d) => d.neutral ?? 0);

/**
 * The default model's slopes (docs/scoring.md gives the reasoning behind each). The twelve shortfalls, and the
 * graded inputs that carry well-known warnings in their magnitude: usage falling month on month, seats cut,
 * payments failing over the quarter, a subscription past due, angry words to support, slow first replies, poor
 * ratings, paid seats left idle. The other graded inputs are 0: left to a tenant's own labels.
 */
const DEFAULT_COEFFICIENTS: Record<string, number> = {
  low_usage: 1.6,
  low_engagement: 0.6,
  poor_support: 0.6,
  billing_risk: 1.0,
  weak_growth: 0.5,
  health_decline: 1.2,
  inactivity: 1.8,
  failed_payments: 1.0,
  overdue_invoices: 0.8,
  trial_ending: 0.7,
  support_backlog: 0.6,
  negative_sentiment: 0.8,
  usage_trend: -0.8,
  seat_change: -1.0,
  payment_failures_90d: 0.6,
  past_due: 0.4,
  support_tone: 1.0,
  first_response_time: 0.25,
  support_rating: 0.2,
  seat_utilisation: -0.8,
};

/** Log-odds of a customer at every input's neutral value: about 3.9 %. */
export const DEFAULT_NEUTRAL_LOGIT = -3.2;

/** The documented default (docs/scoring.md): a customer with nothing wrong sits near 4 %. */
export const DEFAULT_MODEL: ChurnModel = {
  version: 'default-v2',
  // The log-odds formula weighs raw values, so the intercept takes off what the neutral values add.
  intercept: DEFAULT_NEUTRAL_LOGIT - FEATURE_CODES.reduce((z, c, j) => z + (DEFAULT_COEFFICIENTS[c] ?? 0) * NEUTRAL[j]!, 0),
  coefficients: Object.fromEntries(FEATURE_CODES.map((c) => [c, DEFAULT_COEFFICIENTS[c] ?? 0])),
  baseline: Object.fromEntries(FEATURE_CODES.map((c, j) => [c, NEUTRAL[j]!])),
  trainedAt: null,
};

export const sigmoid = (z: number) => 1 / (1 + Math.exp(-z));

/** The model's inputs; null where unknown. */
export function featureVector(f: Features, h: HealthInputs): (number | null)[] {
  return MODEL_FEATURES.map((d) => d.value(f, h));
}

/** Unknown inputs take the model's baseline, so they neither raise nor lower the probability. */
export const imputed = (model: ChurnModel, x: (number | null)[]): number[] => x.map((v, i) => v ?? model.baseline[FEATURE_CODES[i]!] ?? 0);

export function probabilityOf(model: ChurnModel, x: (number | null)[]): number {
  const v = imputed(model, x);
  return sigmoid(FEATURE_CODES.reduce((z, code, i) => z + (model.coefficients[code] ?? 0) * v[i]!, model.intercept));
}

export interface RiskFactor {
  code: string;
  description: string;
  impact: number;
}

export interface Prediction {
  probability: number;
  riskLevel: 'low' | 'medium' | 'high' | 'critical';
  riskFactors: RiskFactor[];
  recommendedInterventions: Intervention[];
  features: Record<string, number | null>;
  modelVersion: string;
}

/** Contributions under this many log-odds are noise, not a reason. */
const MIN_CONTRIBUTION = 0.1;
const MAX_FACTORS = 5;

/**
 * The probability, and why: each feature's contribution is coefficient × (value − baseline) in
 * log-odds; the risk factors are those pushing up the most, their impact the share of all upward push.
 */
export function predict(model: ChurnModel, f: Features, h: HealthInputs): Prediction {
  const raw = featureVector(f, h);
  const x = imputed(model, raw);
  const probability = round(probabilityOf(model, x), 4);
  const riskLevel = riskLevelFor(probability);
  const contributions = MODEL_FEATURES.map((d, i) => ({
    def: d,
    c: (model.coefficients[d.code] ?? 0) * (x[i]! - (model.baseline[d.code] ?? 0)),
  }));
  const upward = contributions.filter((k) => k.c > 0).reduce((s, k) => s + k.c, 0);
  const riskFactors = contributions
    .filter((k) => k.c >= MIN_CONTRIBUTION)
    .sort((a, b) => b.c - a.c)
    .slice(0, MAX_FACTORS)
    .map((k) => ({ code: k.def.code, description: k.def.describe(f, h), impact: round(k.c / upward, 2) }));
  return {
    probability,
    riskLevel,
    riskFactors,
    recommendedInterventions: interventionsFor(riskFactors, riskLevel),
    features: Object.fromEntries(FEATURE_CODES.map((c, i) => [c, raw[i] === null ? null : round(raw[i]!, 4)])),
    modelVersion: model.version,
  };
}
