import { describe, expect, it } from 'vitest';
import { GRADED_FEATURES } from './churn-model.ts';
import { interventionOf, interventionsFor } from './interventions.ts';

describe('interventions for risk factors', () => {
  it('lead from a graded input to the intervention of the shortfall it details', () => {
    expect(interventionOf('usage_trend')?.code).toBe('adoption_review');
    expect(interventionOf('seat_change')?.code).toBe('value_review');
    expect(interventionOf('payment_failures_90d')?.code).toBe('update_payment_method');
    expect(interventionOf('first_response_time')?.code).toBe('support_review');
    expect(interventionOf('support_tone')?.code).toBe('executive_check_in');
  });

  it('exist for every graded input', () => {
    for (const d of GRADED_FEATURES) expect(interventionOf(d.code), d.code).toBeDefined();
  });

  it('give an intervention once when two factors lead to it, at the first one’s priority, and take the next factor’s instead', () => {
    const factors = [
      { code: 'usage_trend', impact: 0.32 },
      { code: 'low_usage', impact: 0.2 },
      { code: 'failed_payments', impact: 0.16 },
      { code: 'payment_failures_90d', impact: 0.12 },
      { code: 'open_conversations', impact: 0.1 },
      { code: 'inactivity', impact: 0.1 },
    ];
    expect(interventionsFor(factors, 'high').map((i) => [i.code, i.priority])).toEqual([
      ['adoption_review', 'high'],
      ['update_payment_method', 'medium'],
      ['escalate_support', 'low'],
    ]);
  });
});
