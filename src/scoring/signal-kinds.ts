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
