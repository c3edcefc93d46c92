import { describe, expect, it } from 'vitest';
import { assessHealth } from '../../src/scoring/assess.ts';
import { DEFAULT_MODEL, predict } from '../../src/scoring/churn-model.ts';
import { change, momentum, recency, saturate } from '../../src/scoring/dimension-scores.ts';
import { DEFAULT_WEIGHTS, DIMENSIONS } from '../../src/scoring/dimensions.ts';
import type { Features } from '../../src/scoring/features.ts';
import { interventionsFor } from '../../src/scoring/interventions.ts';
import { auc, brier, fitLogistic } from '../../src/scoring/logistic.ts';

// The formulas are pure functions; these tests pin their documented properties (docs/scoring.md).

function seeded(seed: number) {
  return () => {
    seed = (seed * 1664525 + 1013904223) % 4294967296;
    return seed / 4294967296;
  };
}

const now = new Date('2026-11-22T12:00:00Z');
const ago = (days: number) => new Date(now.getTime() - days * 86_400_000);

function randomFeatures(r: () => number): Features {
  const n = (max: number) => Math.floor(r() * max);
  const maybe = <T>(v: T) => (r() < 0.3 ? null : v);
  return {
    asOf: now,
    usageUnits7d: n(1500),
    usageUnits30d: n(5000),
    usageUnitsPrev30d: n(5000),
    usageActiveDays30d: n(31),
    usageUsers30d: n(500),
    usageLastAt: maybe(ago(r() * 90)),
    usageCount90d: n(3),
    chat30d: n(1000),
    chatPrev30d: n(1000),
    chatActors30d: n(100),
    chatLastAt: maybe(ago(r() * 90)),
    chatJoined30d: n(20),
    chatLeft30d: n(20),
    chatCount90d: n(3),
    supportOpened30d: n(50),
    supportOpenedPrev30d: n(50),
    supportRatingAvg90d: maybe(1 + r() * 4),
    supportRatings90d: n(10),
    supportSentiment30d: maybe(r() * 2 - 1),
    supportMessages30d: n(20),
    supportSentiment90d: maybe(r() * 2 - 1),
    supportMessages90d: n(40),
    supportCount90d: n(3),
    openConversations: n(40),
    oldestOpenConversationAt: maybe(ago(r() * 90)),
    conversations90d: n(60),
    firstResponseHoursAvg: maybe(r() * 500),
    failedPayments30d: n(10),
    failedPayments90d: n(20),
    lastFailedAt: maybe(ago(r() * 30)),
    lastPaidAt: maybe(ago(r() * 90)),
    refunds90d: n(5),
    trialExtensions30d: n(3),
    billingCount90d: n(3),
    invoices: n(5),
    overdueInvoices: n(5),
    oldestOverdueDueAt: maybe(ago(r() * 60)),
    subscriptions: n(3),
    subscriptionStatus: (['past_due', 'incomplete', 'trialing', 'active', 'canceled', null] as const)[n(6)]!,
    trialEnd: maybe(ago(-r() * 30)),
    seats: maybe(n(200)),
    seatsDelta90d: n(400) - 200,
    mrrMinor: maybe(n(1_000_000)),
    mrrDelta90d: n(2_000_000) - 1_000_000,
    leads30d: n(30),
    growthCount90d: n(3),
    activityLastAt: maybe(ago(r() * 90)),
    sentiment14d: maybe(r() * 2 - 1),
    messages14d: n(20),
    sentiment30d: maybe(r() * 2 - 1),
    messages30d: n(20),
  };
}

describe('health formulas', () => {
  it('keep every dimension and the total within 0..100, and probabilities within 0..1, for any input', () => {
    const r = seeded(1);
    for (let i = 0; i < 2000; i++) {
      const f = randomFeatures(r);
      const h = assessHealth(f, { usage: r() < 0.5, engagement: r() < 0.5, support: r() < 0.5 }, DEFAULT_WEIGHTS, {
        score7d: r() < 0.5 ? null : Math.floor(r() * 101),
        score30d: r() < 0.5 ? null : Math.floor(r() * 101),
        dimensions7d: {},
      });
      for (const d of h.dimensions) {
        if (d.score !== null) {
          expect(d.score).toBeGreaterThanOrEqual(0);
          expect(d.score).toBeLessThanOrEqual(100);
        }
      }
      if (h.score !== null) {
        expect(h.score).toBeGreaterThanOrEqual(0);
        expect(h.score).toBeLessThanOrEqual(100);
        const p = predict(DEFAULT_MODEL, f, h.churnInputs);
        expect(p.probability).toBeGreaterThanOrEqual(0);
        expect(p.probability).toBeLessThanOrEqual(1);
        // At most five shares, each rounded to two decimals.
        expect(p.riskFactors.reduce((s, x) => s + x.impact, 0)).toBeLessThanOrEqual(1 + 5 * 0.005 + 1e-9);
      }
      const weights = h.dimensions.reduce((s, d) => s + d.weight, 0);
      expect(h.score === null ? 0 : weights).toBeCloseTo(h.score === null ? 0 : 1, 3);
    }
  });

  it('recency halves every half-life and is 0 without any occurrence', () => {
    expect(recency(0, 7)).toBe(100);
    expect(recency(7, 7)).toBeCloseTo(50);
    expect(recency(14, 7)).toBeCloseTo(25);
    expect(recency(null, 7)).toBe(0);
  });

  it('momentum is 100 when holding steady, proportional when falling, 0 with nothing in either period', () => {
    expect(momentum(50, 50)).toBe(100);
    expect(momentum(80, 40)).toBe(100);
    expect(momentum(25, 100)).toBe(25);
    expect(momentum(5, 0)).toBe(100);
    expect(momentum(0, 0)).toBe(0);
  });

  it('saturation is linear up to its full mark', () => {
    expect(saturate(6, 12)).toBe(50);
    expect(saturate(30, 12)).toBe(100);
    expect(saturate(-3, 12)).toBe(0);
  });

  it('a relative change scores 70 flat, 100 from +20 %, 0 from -30 %', () => {
    expect(change(0)).toBe(70);
    expect(change(0.1)).toBe(85);
    expect(change(0.5)).toBe(100);
    expect(change(-0.15)).toBe(35);
    expect(change(-0.9)).toBe(0);
  });

  it('a customer with no data has no score and no dimension', () => {
    const empty = randomFeatures(() => 0);
    const h = assessHealth({ ...empty, seats: null, mrrMinor: null, subscriptionStatus: null }, {}, DEFAULT_WEIGHTS);
    expect(h.score).toBeNull();
    expect(DIMENSIONS.map((k) => h.dimensions.find((d) => d.key === k)!.score)).toEqual([null, null, null, null, null]);
  });
});

describe('model metrics', () => {
  it('AUC is 1 for a perfect ranking, 0 for a reversed one and 0.5 for ties', () => {
    expect(auc([0.9, 0.8, 0.2, 0.1], [1, 1, 0, 0])).toBe(1);
    expect(auc([0.1, 0.2, 0.8, 0.9], [1, 1, 0, 0])).toBe(0);
    expect(auc([0.5, 0.5, 0.5, 0.5], [1, 0, 1, 0])).toBe(0.5);
    expect(auc([0.9, 0.4, 0.6, 0.1], [1, 1, 0, 0])).toBe(0.75);
  });

  it('Brier score is the mean squared error of the probabilities', () => {
    expect(brier([1, 0], [1, 0])).toBe(0);
    expect(brier([0.5, 0.5], [1, 0])).toBe(0.25);
  });

  it('the logistic fit recovers known coefficients from data generated with them', () => {
    const r = seeded(3);
    const x: number[][] = [];
    const y: number[] = [];
    for (let i = 0; i < 4000; i++) {
      const a = r();
      const b = r();
      const z = -1 + 3 * a - 2 * b;
      x.push([a, b]);
      y.push(r() < 1 / (1 + Math.exp(-z)) ? 1 : 0);
    }
    const fit = fitLogistic(x, y, { lambda: 0.01 });
    expect(fit.intercept).toBeCloseTo(-1, 0);
    expect(fit.weights[0]).toBeCloseTo(3, 0);
    expect(fit.weights[1]).toBeCloseTo(-2, 0);
  });
});

describe('interventions', () => {
  it('are recommended from medium risk up, one per top factor, the biggest of a high risk first and high', () => {
    const factors = [
      { code: 'inactivity', impact: 0.2 },
      { code: 'failed_payments', impact: 0.18 },
      { code: 'support_backlog', impact: 0.1 },
      { code: 'low_usage', impact: 0.05 },
    ];
    expect(interventionsFor(factors, 'low')).toEqual([]);
    const high = interventionsFor(factors, 'high');
    expect(high.map((i) => [i.code, i.priority])).toEqual([
      ['re_engage', 'high'],
      ['update_payment_method', 'medium'],
      ['escalate_support', 'low'],
    ]);
    expect(interventionsFor(factors, 'medium')[0]!.priority).toBe('medium');
  });
});
