import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { attribute, evaluate, restoreInputs, type ScoringInputs, storedInputs } from './attribution.ts';
import { type ChurnModel, DEFAULT_MODEL } from './churn-model.ts';
import { DEFAULT_WEIGHTS, DIMENSIONS } from './dimensions.ts';
import type { Features } from './features.ts';

// The attribution's promise, checked over arbitrary pairs of computations: the drivers' shares add up
// exactly (in the outputs' integer units) to each output's change, whatever moved and in which combination.

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 10, 20);
const count = (max: number) => fc.integer({ min: 0, max });
const maybeDate = fc.option(
  fc.integer({ min: 0, max: 95 }).map((d) => new Date(NOW - d * DAY)),
  { nil: null },
);
const tone = fc.option(
  fc.double({ min: -1, max: 1, noNaN: true }).map((x) => x + 0),
  { nil: null },
);

const features: fc.Arbitrary<Features> = fc.record({
  asOf: fc.integer({ min: 0, max: 3 }).map((d) => new Date(NOW + d * DAY)),
  usageUnits7d: count(50),
  usageUnits30d: count(200),
  usageUnitsPrev30d: count(200),
  usageActiveDays30d: count(30),
  usageUsers30d: count(20),
  usageLastAt: maybeDate,
  usageCount90d: count(3),
  chat30d: count(80),
  chatPrev30d: count(80),
  chatActors30d: count(10),
  chatLastAt: maybeDate,
  chatJoined30d: count(4),
  chatLeft30d: count(4),
  chatCount90d: count(3),
  supportOpened30d: count(6),
  supportOpenedPrev30d: count(6),
  supportRatingAvg90d: fc.option(fc.integer({ min: 1, max: 5 }), { nil: null }),
  supportRatings90d: count(3),
  supportSentiment30d: tone,
  supportMessages30d: count(5),
  supportSentiment90d: tone,
  supportMessages90d: count(9),
  supportCount90d: count(3),
  openConversations: count(6),
  oldestOpenConversationAt: maybeDate,
  conversations90d: count(8),
  firstResponseHoursAvg: fc.option(
    fc.double({ min: 0, max: 80, noNaN: true }).map((x) => x + 0),
    { nil: null },
  ),
  failedPayments30d: count(4),
  failedPayments90d: count(6),
  lastFailedAt: maybeDate,
  lastPaidAt: maybeDate,
  refunds90d: count(3),
  trialExtensions30d: count(2),
  billingCount90d: count(3),
  invoices: count(3),
  overdueInvoices: count(3),
  oldestOverdueDueAt: maybeDate,
  subscriptions: count(2),
  subscriptionStatus: fc.constantFrom('past_due', 'incomplete', 'trialing', 'active', 'canceled', null),
  trialEnd: maybeDate,
  seats: fc.option(fc.integer({ min: 1, max: 50 }), { nil: null }),
  seatsDelta90d: fc.integer({ min: -10, max: 10 }),
  mrrMinor: fc.option(fc.integer({ min: 1000, max: 900_000 }), { nil: null }),
  mrrDelta90d: fc.integer({ min: -50_000, max: 50_000 }),
  leads30d: count(4),
  growthCount90d: count(3),
  activityLastAt: maybeDate,
  sentiment14d: tone,
  messages14d: count(6),
  sentiment30d: tone,
  messages30d: count(9),
});

const weights = fc
  .tuple(...DIMENSIONS.map(() => fc.integer({ min: 1, max: 10 })))
  .map((w) => Object.fromEntries(DIMENSIONS.map((k, i) => [k, w[i]! / w.reduce((s, x) => s + x, 0)])) as typeof DEFAULT_WEIGHTS);

const TRAINED: ChurnModel = {
  ...DEFAULT_MODEL,
  version: 'trained-test',
  intercept: -2.5,
  coefficients: { ...DEFAULT_MODEL.coefficients, usage_volume: -0.3, days_overdue: 0.4 },
};
const modelOf = (id: string | null) => (id === 'trained' ? TRAINED : DEFAULT_MODEL);

const inputs: fc.Arbitrary<ScoringInputs> = fc.record({
  features,
  carry: fc.record(Object.fromEntries(DIMENSIONS.map((k) => [k, fc.boolean()]))),
  weights: fc.oneof(fc.constant(DEFAULT_WEIGHTS), weights),
  score30d: fc.option(fc.integer({ min: 0, max: 100 }), { nil: null }),
  modelId: fc.constantFrom(null, 'trained'),
});

/** The second computation: the first with some of its inputs taken from another. */
const pair = fc.tuple(inputs, inputs, fc.double({ min: 0, max: 1, noNaN: true }), fc.integer()).map(([a, b, share, seed]) => {
  let s = seed;
  const pick = () => ((s = (s * 1103515245 + 12345) & 0x7fffffff) % 1000) / 1000 < share;
  const f = Object.fromEntries(
    Object.keys(a.features).map((k) => [k, pick() ? b.features[k as keyof Features] : a.features[k as keyof Features]]),
  );
  const after: ScoringInputs = {
    features: f as unknown as Features,
    carry: pick() ? b.carry : a.carry,
    weights: pick() ? b.weights : a.weights,
    score30d: pick() ? b.score30d : a.score30d,
    modelId: pick() ? b.modelId : a.modelId,
  };
  return [a, after] as const;
});

const sum = (xs: number[]) => xs.reduce((s, x) => s + x, 0);

describe('attributing a change', () => {
  it('gives shares that add up exactly to the change of the score, each dimension and the churn probability', () => {
    fc.assert(
      fc.property(pair, ([before, after]) => {
        const change = attribute(before, after, modelOf);
        const [x, y] = [evaluate(before, modelOf(before.modelId)), evaluate(after, modelOf(after.modelId))];
        if (x.score !== null && y.score !== null) expect(sum(change.drivers.map((d) => d.score))).toBe(y.score - x.score);
        if (x.churn !== null && y.churn !== null)
          expect(sum(change.drivers.map((d) => Math.round(d.churn * 10_000)))).toBe(y.churn - x.churn);
        for (const k of DIMENSIONS) {
          const [from, to] = [x.dimensions[k], y.dimensions[k]];
          if (from === null || to === null) continue;
          expect(sum(change.drivers.map((d) => Math.round((d.dimensions[k] ?? 0) * 10)))).toBe(to - from);
        }
      }),
      { numRuns: 400 },
    );
  });

  it('names no driver when nothing moved', () => {
    fc.assert(
      fc.property(inputs, (i) => {
        expect(attribute(i, i, modelOf).drivers).toEqual([]);
      }),
    );
  });

  it('reads back the inputs it stored, dates included', () => {
    fc.assert(
      fc.property(inputs, (i) => {
        const back = restoreInputs(JSON.parse(storedInputs(i)));
        expect(back).toEqual(i);
        expect(evaluate(back!, modelOf(back!.modelId))).toEqual(evaluate(i, modelOf(i.modelId)));
      }),
      { numRuns: 100 },
    );
  });
});
