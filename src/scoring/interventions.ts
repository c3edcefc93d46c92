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

/** A graded input leads to the intervention of the shortfall whose trouble it measures in more detail. */
const DETAILS: Record<string, keyof typeof INTERVENTIONS> = {
  usage_volume: 'low_usage',
  usage_trend: 'low_usage',
  usage_recent_trend: 'low_usage',
  active_days: 'low_usage',
  seat_utilisation: 'low_usage',
  days_inactive: 'inactivity',
  seat_change: 'weak_growth',
  mrr_change: 'weak_growth',
  payment_failures_30d: 'failed_payments',
  payment_failures_90d: 'failed_payments',
  days_overdue: 'overdue_invoices',
  past_due: 'billing_risk',
  support_volume: 'poor_support',
  support_trend: 'poor_support',
  support_tone: 'negative_sentiment',
  first_response_time: 'poor_support',
  support_rating: 'poor_support',
  open_conversations: 'support_backlog',
  health_change: 'health_decline',
};

/** The intervention for a risk factor, or undefined for a code without one. */
export const interventionOf = (code: string) => INTERVENTIONS[code] ?? INTERVENTIONS[DETAILS[code] ?? ''];

const MAX_INTERVENTIONS = 3;

/**
 * Up to three interventions, when the risk is medium or more: one for each risk factor from the largest down,
 * an intervention that an earlier factor already led to given once. Priority follows the factor's share of
 * the risk, and the biggest factor of a high or critical risk is always high.
 */
export function interventionsFor(
  factors: { code: string; impact: number }[],
  riskLevel: 'low' | 'medium' | 'high' | 'critical',
): Intervention[] {
  if (riskLevel === 'low') return [];
  const out: Intervention[] = [];
  for (const [i, f] of factors.entries()) {
    const entry = interventionOf(f.code);
    if (out.length === MAX_INTERVENTIONS) break;
    if (!entry || out.some((o) => o.code === entry.code)) continue;
    const priority: Intervention['priority'] =
      f.impact >= 0.3 || (i === 0 && riskLevel !== 'medium') ? 'high' : f.impact >= 0.15 ? 'medium' : 'low';
    out.push({ ...entry, priority });
  }
  return out;
}
