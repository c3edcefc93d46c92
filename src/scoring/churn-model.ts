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
  /** 0 (no risk) … 1 (most risk); null when unknown (the model then uses its baseline: no contribution). */
  value: (f: Features, h: HealthInputs) => number | null;
  /** A sentence naming the customer's own numbers, shown when the feature is a risk factor. */
  describe: (f: Features, h: HealthInputs) => string;
}

const clamp01 = (n: number) => clamp(n, 0, 1);
const lack = (score: number | null) => (score === null ? null : 1 - score / 100);

/** A feature that is one dimension's shortfall from 100; `source` names the data the dimension needs. */
const fromDimension = (code: string, key: DimensionKey, source: string, sentence: string): FeatureDef => ({
  code,
  summary: `1 − ${key} score / 100 (unknown without ${source} data)`,
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
    value: (_f, h) => (h.change30d === null ? null : clamp01(-h.change30d / 30)),
    describe: (_f, h) => `Health fell ${Math.round(-(h.change30d ?? 0))} points in 30 days.`,
  },
  {
    code: 'inactivity',
    summary: 'days since the customer last did anything / 30, 0 to 1 (unknown when activity is not tracked)',
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

export const FEATURE_CODES = CHURN_FEATURES.map((d) => d.code);

export interface ChurnModel {
  version: string;
  intercept: number;
  coefficients: Record<string, number>;
  /** Contributions are measured above these values; zeros for the default model. */
  baseline: Record<string, number>;
  trainedAt: Date | null;
}

/** The documented default (docs/scoring.md): a healthy customer sits near 5 %. */
export const DEFAULT_MODEL: ChurnModel = {
  version: 'default-v1',
  intercept: -3.2,
  coefficients: {
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
  },
  baseline: Object.fromEntries(FEATURE_CODES.map((c) => [c, 0])),
  trainedAt: null,
};

export const sigmoid = (z: number) => 1 / (1 + Math.exp(-z));

/** The model's inputs; null where unknown. */
export function featureVector(f: Features, h: HealthInputs): (number | null)[] {
  return CHURN_FEATURES.map((d) => d.value(f, h));
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
  const contributions = CHURN_FEATURES.map((d, i) => ({
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
