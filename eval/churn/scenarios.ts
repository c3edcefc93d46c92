import type { Scenario } from './cohort.ts';

const mixed = { disengagement: 1.3, seats: 1.1, billing: 1.1, support: 1.1 };

/** The scenarios of `npm run eval:churn`; each differs in what drives churn or in what the tenant can see. */
export const SCENARIOS: Scenario[] = [
  {
    name: 'disengagement',
    description: 'usage fades over the last month, the most disengaged stop altogether',
    customers: 400,
    labelled: 0.6,
    churnRate: 0.2,
    weights: { disengagement: 2.4, seats: 0.3, billing: 0, support: 0 },
    chatCoverage: 1,
    seed: 11,
  },
  {
    name: 'seat-contraction',
    description: 'seats are cut and fewer of the remaining seats are in use',
    customers: 400,
    labelled: 0.6,
    churnRate: 0.2,
    weights: { disengagement: 0.3, seats: 2.4, billing: 0, support: 0 },
    seed: 12,
  },
  {
    name: 'billing-trouble',
    description: 'failed payments over several months, overdue invoices, past-due subscriptions',
    customers: 400,
    labelled: 0.6,
    churnRate: 0.15,
    weights: { disengagement: 0.3, seats: 0, billing: 1.8, support: 0 },
    seed: 13,
  },
  {
    name: 'support-friction',
    description: 'more conversations, angrier words, slower first responses, worse ratings',
    customers: 400,
    labelled: 0.6,
    churnRate: 0.2,
    weights: { disengagement: 0.3, seats: 0, billing: 0, support: 2.4 },
    seed: 14,
  },
  {
    name: 'mixture',
    description: 'all four drivers at once, like the cohort of the issue; churn pressure rises over time',
    customers: 400,
    labelled: 0.6,
    churnRate: 0.25,
    weights: mixed,
    drift: 0.8,
    chatCoverage: 1,
    seed: 15,
  },
  {
    name: 'missing-sources',
    description: 'the mixture, with Stripe for only half the customers and Intercom for half',
    customers: 400,
    labelled: 0.6,
    churnRate: 0.25,
    weights: mixed,
    billingCoverage: 0.5,
    supportCoverage: 0.5,
    chatCoverage: 0.5,
    seed: 16,
  },
  {
    name: 'rare-churn',
    description: 'the mixture at a 5 % churn rate (more customers, so training has 20 churners)',
    customers: 1000,
    labelled: 0.7,
    churnRate: 0.05,
    weights: mixed,
    seed: 17,
  },
  {
    name: 'common-churn',
    description: 'the mixture at a 40 % churn rate',
    customers: 400,
    labelled: 0.6,
    churnRate: 0.4,
    weights: mixed,
    chatCoverage: 1,
    seed: 18,
  },
  {
    name: 'few-labels',
    description: 'the mixture with a quarter of the customers labelled (about 100 labels)',
    customers: 400,
    labelled: 0.25,
    churnRate: 0.35,
    weights: mixed,
    chatCoverage: 1,
    seed: 19,
  },
];

/** The CI run: three scenarios, smaller, random split only. */
export const SMALL = ['mixture', 'billing-trouble', 'support-friction'];
