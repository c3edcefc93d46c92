// Which recorded signal kinds feed which part of scoring (docs/scoring.md). The normalizers in
// src/ingest write these kinds; the feature queries read them.

/** Product events from the API and the code host's activity. */
export const USAGE_KINDS = [
  'usage.event',
  'code.push',
  'code.issue_opened',
  'code.issue_closed',
  'code.comment',
  'code.pr_opened',
  'code.pr_merged',
  'code.review',
  'code.star',
  'code.release',
] as const;

/** Team chat and community chat participation (messages and reactions). */
export const CHAT_INTERACTION_KINDS = ['chat.message', 'chat.reaction'] as const;
export const CHAT_KINDS = [...CHAT_INTERACTION_KINDS, 'chat.member_joined', 'chat.member_left'] as const;

/** Customer messaging conversations; every kind but the rating carries a conversation id. */
export const SUPPORT_CONVERSATION_KINDS = [
  'support.conversation_opened',
  'support.customer_replied',
  'support.agent_replied',
  'support.conversation_closed',
  'support.conversation_snoozed',
  'support.conversation_reopened',
] as const;
export const SUPPORT_KINDS = [...SUPPORT_CONVERSATION_KINDS, 'support.rating'] as const;
/** What the customer wrote to support (its tone is measured). */
export const SUPPORT_CUSTOMER_MESSAGE_KINDS = ['support.conversation_opened', 'support.customer_replied'] as const;

export const BILLING_KINDS = [
  'billing.payment_failed',
  'billing.invoice_paid',
  'billing.invoice_overdue',
  'billing.refund',
  'billing.trial_extended',
  'billing.subscription_status',
] as const;

export const GROWTH_KINDS = ['growth.seats', 'growth.mrr_change', 'ads.lead'] as const;

/** Things the customer did (not things done to it): what "activity" means for inactivity. */
export const ACTIVITY_KINDS = [...USAGE_KINDS, ...CHAT_INTERACTION_KINDS, ...SUPPORT_CUSTOMER_MESSAGE_KINDS] as const;

/** Messages whose sentiment is measured: chat and what the customer wrote to support. */
export const MESSAGE_KINDS = ['chat.message', ...SUPPORT_CUSTOMER_MESSAGE_KINDS] as const;

/** Every kind a signal may be recorded as: a kind outside these lists would be stored and never scored. */
export const SIGNAL_KINDS = [...USAGE_KINDS, ...CHAT_KINDS, ...SUPPORT_KINDS, ...BILLING_KINDS, ...GROWTH_KINDS] as const;
export type SignalKind = (typeof SIGNAL_KINDS)[number];

/** What each kind of signal is, for people reading a customer's timeline. */
export const KIND_LABELS: Record<SignalKind, string> = {
  'usage.event': 'Product event',
  'code.push': 'Code pushed',
  'code.issue_opened': 'Issue opened',
  'code.issue_closed': 'Issue closed',
  'code.comment': 'Code comment',
  'code.pr_opened': 'Pull request opened',
  'code.pr_merged': 'Pull request merged',
  'code.review': 'Code review',
  'code.star': 'Repository starred',
  'code.release': 'Release published',
  'chat.message': 'Chat message',
  'chat.reaction': 'Chat reaction',
  'chat.member_joined': 'Member joined chat',
  'chat.member_left': 'Member left chat',
  'support.conversation_opened': 'Support conversation opened',
  'support.customer_replied': 'Customer replied to support',
  'support.agent_replied': 'Support replied',
  'support.conversation_closed': 'Support conversation closed',
  'support.conversation_snoozed': 'Support conversation snoozed',
  'support.conversation_reopened': 'Support conversation reopened',
  'support.rating': 'Support rated',
  'billing.payment_failed': 'Payment failed',
  'billing.invoice_paid': 'Invoice paid',
  'billing.invoice_overdue': 'Invoice overdue',
  'billing.refund': 'Refund',
  'billing.trial_extended': 'Trial extended',
  'billing.subscription_status': 'Subscription status changed',
  'growth.seats': 'Seats changed',
  'growth.mrr_change': 'Recurring revenue changed',
  'ads.lead': 'Ad lead',
};
