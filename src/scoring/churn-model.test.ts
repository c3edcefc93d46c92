import { describe, expect, it } from 'vitest';
import {
  DEFAULT_MODEL,
  DEFAULT_NEUTRAL_LOGIT,
  FEATURE_CODES,
  FEATURE_SIGNS,
  MODEL_FEATURES,
  NEUTRAL,
  probabilityOf,
  sigmoid,
} from './churn-model.ts';

const at = (changes: Record<string, number | null>) => FEATURE_CODES.map((c, j) => (c in changes ? changes[c]! : NEUTRAL[j]!));
const logit = (x: (number | null)[]) => Math.log(probabilityOf(DEFAULT_MODEL, x) / (1 - probabilityOf(DEFAULT_MODEL, x)));

describe('the default churn model', () => {
  it('puts a customer at every neutral value near 4 %', () => {
    expect(probabilityOf(DEFAULT_MODEL, at({}))).toBeCloseTo(sigmoid(DEFAULT_NEUTRAL_LOGIT), 12);
    expect(probabilityOf(DEFAULT_MODEL, at({}))).toBeCloseTo(0.039, 3);
  });

  it('reads an unknown input as its neutral value, so it neither raises nor lowers the probability', () => {
    const unknown = FEATURE_CODES.map((_, j) => (MODEL_FEATURES[j]!.neutral === undefined ? NEUTRAL[j]! : null));
    expect(probabilityOf(DEFAULT_MODEL, unknown)).toBeCloseTo(probabilityOf(DEFAULT_MODEL, at({})), 12);
  });

  it('weighs every input only the way its risk direction allows', () => {
    FEATURE_CODES.forEach((c, j) => expect(FEATURE_SIGNS[j]! * DEFAULT_MODEL.coefficients[c]!).toBeGreaterThanOrEqual(0));
  });

  it('doubles the odds when usage halves month on month or paid seats are cut to half', () => {
    const halved = Math.log(0.5);
    expect(logit(at({ usage_trend: halved })) - logit(at({}))).toBeCloseTo(0.8 * Math.log(2), 9);
    expect(logit(at({ seat_change: halved })) - logit(at({}))).toBeCloseTo(Math.log(2), 9);
  });

  it('raises the risk for first replies slower than a working day and lowers it for faster ones', () => {
    const hours = (h: number) => at({ first_response_time: Math.log1p(h) });
    expect(logit(hours(48))).toBeGreaterThan(logit(at({})));
    expect(logit(hours(1))).toBeLessThan(logit(at({})));
    expect(logit(hours(8))).toBeCloseTo(logit(at({})), 12);
  });
});
