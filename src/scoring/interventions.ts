// What a customer-success team should do about each risk factor (docs/scoring.md).

export interface Intervention {
  code: string;
  title: string;
  description: string;
  priority: 'high' | 'medium' | 'low';
}

export const INTERVENTIONS: Record<string, Omit<Intervention, 'priority'>> = {
  low_usage: {
    code: 'adoption_review',
    title: 'Run an adoption review',
    description: 'Walk through the features the customer pays for but does not use, and agree on a plan to put them to work.',
  },
  low_engagement: {
    code: 'community_invite',
    title: 'Bring the team into the conversation',
    description: 'Invite the customer’s users to the shared channel or community and point them to an upcoming session.',
  },
  poor_support: {
    code: 'support_review',
    title: 'Review the support history',
    description: 'Read the recent conversations and ratings, and follow up personally on anything left unsatisfied.',
  },
  billing_risk: {
    code: 'billing_outreach',
    title: 'Reach out about billing',
    description: 'Confirm the payment method and billing contact, and offer help with anything blocking payment.',
  },
  weak_growth: {
    code: 'value_review',
    title: 'Hold a value review',
    description: 'Show the outcomes the customer got so far and map where more seats or a higher plan would help.',
  },
  health_decline: {
    code: 'health_check_in',
    title: 'Check in on what changed',
    description: 'Health fell this month: ask the sponsor what changed (team, priorities, budget) before it shows in renewal.',
  },
  inactivity: {
    code: 're_engage',
    title: 'Re-engage the account',
    description: 'Contact the main users with a tailored use case or training offer; find out why they stopped.',
  },
  failed_payments: {
    code: 'update_payment_method',
    title: 'Help update the payment method',
    description: 'Send the billing contact a secure link to update the card before the subscription lapses.',
  },
  overdue_invoices: {
    code: 'collect_overdue',
    title: 'Follow up on the overdue invoice',
    description: 'Contact accounts payable about the overdue invoice and agree on a payment date.',
  },
  trial_ending: {
    code: 'trial_conversion_call',
    title: 'Book a conversion call',
    description: 'The trial ends soon: review what they achieved and propose the plan that fits.',
  },
  support_backlog: {
    code: 'escalate_support',
    title: 'Escalate the open support conversations',
    description: 'Several conversations are waiting: ask the support lead to prioritise them and tell the customer when.',
  },
  negative_sentiment: {
    code: 'executive_check_in',
    title: 'Schedule an executive check-in',
    description: 'The customer’s messages read negative: have a senior contact listen to their concerns.',
  },
};

const MAX_INTERVENTIONS = 3;

/**
 * One intervention for each of the top risk factors, when the risk is medium or more. Priority follows
 * the factor's share of the risk, and the biggest factor of a high or critical risk is always high.
 */
export function interventionsFor(
  factors: { code: string; impact: number }[],
  riskLevel: 'low' | 'medium' | 'high' | 'critical',
): Intervention[] {
  if (riskLevel === 'low') return [];
  return factors.slice(0, MAX_INTERVENTIONS).flatMap((f, i) => {
    const entry = INTERVENTIONS[f.code];
    if (!entry) return [];
    const priority: Intervention['priority'] =
      f.impact >= 0.3 || (i === 0 && riskLevel !== 'medium') ? 'high' : f.impact >= 0.15 ? 'medium' : 'low';
    return [{ ...entry, priority }];
  });
}
