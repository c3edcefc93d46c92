import type { DimensionInput, Signal } from './overall-score.ts';
import type { DimensionKey } from './dimensions.ts';
import { daysBetween, type Features } from './features.ts';
import { clamp, round } from './numbers.ts';

// The formulas of docs/scoring.md. Each dimension is a weighted mean of parts scored 0-100; a part
// without data is left out and its weight shared by the others; a dimension without data is null.

interface Part {
  score: number | null;
  weight: number;
}

const pct = (n: number) => clamp(n, 0, 100);

/** 100 right after the last occurrence, halving every `halfLife` days; 0 when there was none. */
export const recency = (days: number | null, halfLife: number) => (days === null ? 0 : 100 * 0.5 ** (Math.max(0, days) / halfLife));
/** The last 30 days against the 30 before: holding steady or growing is 100, half as much is 50. */
export const momentum = (current: number, previous: number) =>
  previous > 0 ? 100 * Math.min(1, current / previous) : current > 0 ? 100 : 0;
/** Linear up to `full`, 100 from there. */
export const saturate = (x: number, full: number) => 100 * Math.min(1, Math.max(0, x) / full);
/** A relative change: flat is 70 (stable), +20 % or more is 100, -30 % or worse is 0. */
export const change = (fraction: number) =>
  fraction >= 0 ? 70 + 30 * Math.min(1, fraction / 0.2) : Math.max(0, 70 + 70 * Math.max(-1, fraction / 0.3));

function weighted(parts: Part[]): number | null {
  const present = parts.filter((p) => p.score !== null);
  const total = present.reduce((s, p) => s + p.weight, 0);
  if (total === 0) return null;
  return round(pct(present.reduce((s, p) => s + p.score! * p.weight, 0) / total), 1);
}

const signal = (key: keyof typeof SIGNAL_LABELS, value: number | string | null, digits = 1): Signal => ({
  key,
  value: typeof value === 'number' ? round(value, digits) : value,
});

/** What each signal means, for people; snapshots store only keys and values. */
export const SIGNAL_LABELS = {
  days_since_last_use: 'Days since the last product or code activity',
  active_days_30d: 'Days with activity (30 days)',
  events_30d: 'Product events and code activity (30 days)',
  events_prev_30d: 'Product events and code activity (the 30 days before)',
  active_users_30d: 'Active users (30 days)',
  seat_utilization: 'Active users per paid seat',
  days_since_last_message: 'Days since the last chat message or reaction',
  messages_30d: 'Chat messages and reactions (30 days)',
  messages_prev_30d: 'Chat messages and reactions (the 30 days before)',
  participants_30d: 'People taking part in chat (30 days)',
  members_joined_30d: 'Chat members joined (30 days)',
  members_left_30d: 'Chat members left (30 days)',
  open_conversations: 'Open support conversations',
  conversations_30d: 'Support conversations opened (30 days)',
  conversations_prev_30d: 'Support conversations opened (the 30 days before)',
  average_rating_90d: 'Average support rating, 1-5 (90 days)',
  sentiment_30d: 'Tone of messages to support, -1 to 1 (30 days)',
  failed_payments_30d: 'Failed payments (30 days)',
  overdue_invoices: 'Overdue invoices',
  refunds_90d: 'Refunds (90 days)',
  subscription_status: 'Subscription status',
  trial_days_left: 'Trial days left',
  trial_extensions_30d: 'Trial extensions (30 days)',
  seats: 'Paid seats',
  seat_change_90d_pct: 'Seat change, % (90 days)',
  mrr_change_90d_pct: 'Recurring revenue change, % (90 days)',
  leads_30d: 'Ad leads from the customer’s domain (30 days)',
} as const;

export const signalLabel = (key: string): string => (SIGNAL_LABELS as Record<string, string>)[key] ?? key;

/** Dimensions that had data before keep being scored when their signals stop: silence is data. */
export type Carry = Partial<Record<DimensionKey, boolean>>;

function usage(f: Features, carry: boolean): DimensionInput {
  if (f.usageCount90d === 0 && !carry) return { score: null, signals: [] };
  const days = daysBetween(f.usageLastAt, f.asOf);
  const utilization = f.seats && f.seats > 0 ? f.usageUsers30d / f.seats : null;
  return {
    score: weighted([
      { score: recency(days, 7), weight: 0.3 },
      { score: saturate(f.usageActiveDays30d, 12), weight: 0.3 },
      // A falling trend is the earliest sign of churn: it weighs most.
      { score: momentum(f.usageUnits30d, f.usageUnitsPrev30d), weight: 0.4 },
      { score: utilization === null || f.usageUsers30d === 0 ? null : saturate(utilization, 0.8), weight: 0.2 },
    ]),
    signals: [
      signal('days_since_last_use', days === null ? null : Math.floor(days), 0),
      signal('active_days_30d', f.usageActiveDays30d, 0),
      signal('events_30d', f.usageUnits30d, 0),
      signal('events_prev_30d', f.usageUnitsPrev30d, 0),
      signal('active_users_30d', f.usageUsers30d, 0),
      ...(utilization === null ? [] : [signal('seat_utilization', utilization, 2)]),
    ],
  };
}

function engagement(f: Features, carry: boolean): DimensionInput {
  if (f.chatCount90d === 0 && !carry) return { score: null, signals: [] };
  const days = daysBetween(f.chatLastAt, f.asOf);
  const moves = f.chatJoined30d + f.chatLeft30d;
  return {
    score: weighted([
      { score: recency(days, 14), weight: 0.3 },
      { score: momentum(f.chat30d, f.chatPrev30d), weight: 0.25 },
      { score: saturate(f.chatActors30d, 5), weight: 0.25 },
      { score: moves === 0 ? 100 : (100 * f.chatJoined30d) / moves, weight: 0.2 },
    ]),
    signals: [
      signal('days_since_last_message', days === null ? null : Math.floor(days), 0),
      signal('messages_30d', f.chat30d, 0),
      signal('messages_prev_30d', f.chatPrev30d, 0),
      signal('participants_30d', f.chatActors30d, 0),
      signal('members_joined_30d', f.chatJoined30d, 0),
      signal('members_left_30d', f.chatLeft30d, 0),
    ],
  };
}

function support(f: Features, carry: boolean): DimensionInput {
  if (f.supportCount90d === 0 && !carry) return { score: null, signals: [] };
  const rating = f.supportRatings90d > 0 ? f.supportRatingAvg90d : null;
  const tone = f.supportMessages30d > 0 ? f.supportSentiment30d : null;
  return {
    score: weighted([
      { score: 100 * 0.5 ** (f.openConversations / 3), weight: 0.35 },
      {
        score: f.supportOpened30d <= f.supportOpenedPrev30d ? 100 : (100 * (f.supportOpenedPrev30d + 1)) / (f.supportOpened30d + 1),
        weight: 0.2,
      },
      { score: rating === null ? null : pct(((rating - 1) / 4) * 100), weight: 0.25 },
      { score: tone === null ? null : pct(50 + 50 * tone), weight: 0.2 },
    ]),
    signals: [
      signal('open_conversations', f.openConversations, 0),
      signal('conversations_30d', f.supportOpened30d, 0),
      signal('conversations_prev_30d', f.supportOpenedPrev30d, 0),
      signal('average_rating_90d', rating, 2),
      signal('sentiment_30d', tone, 2),
    ],
  };
}

/** Trial days left when trialing, else null. */
export const trialDaysLeft = (f: Features) =>
  f.subscriptionStatus === 'trialing' && f.trialEnd && f.trialEnd > f.asOf ? daysBetween(f.asOf, f.trialEnd) : null;

function billing(f: Features): DimensionInput {
  if (f.billingCount90d === 0 && f.invoices === 0 && f.subscriptions === 0) return { score: null, signals: [] };
  const trialLeft = trialDaysLeft(f);
  const statusPenalty = f.subscriptionStatus === 'past_due' ? 30 : f.subscriptionStatus === 'incomplete' ? 15 : 0;
  const score =
    f.subscriptionStatus === 'canceled'
      ? 0
      : 100 -
        Math.min(60, 20 * f.failedPayments30d) -
        Math.min(50, 25 * f.overdueInvoices) -
        Math.min(20, 10 * f.refunds90d) -
        statusPenalty -
        (f.trialExtensions30d > 0 ? 10 : 0) -
        (trialLeft !== null && trialLeft <= 7 ? 10 : 0);
  return {
    score: round(pct(score), 1),
    signals: [
      signal('failed_payments_30d', f.failedPayments30d, 0),
      signal('overdue_invoices', f.overdueInvoices, 0),
      signal('refunds_90d', f.refunds90d, 0),
      signal('subscription_status', f.subscriptionStatus),
      signal('trial_days_left', trialLeft),
      signal('trial_extensions_30d', f.trialExtensions30d, 0),
    ],
  };
}

/** Relative change over the window from the value now and the sum of changes in it. */
const relative = (now: number | null, delta: number) => {
  if (now === null) return null;
  const before = now - delta;
  return before > 0 ? delta / before : delta > 0 ? 1 : 0;
};

function growth(f: Features): DimensionInput {
  const seatChange = relative(f.seats, f.seatsDelta90d);
  const mrrChange = relative(f.mrrMinor, f.mrrDelta90d);
  if (seatChange === null && mrrChange === null && f.leads30d === 0 && f.growthCount90d === 0) return { score: null, signals: [] };
  return {
    score:
      weighted([
        { score: seatChange === null ? null : change(seatChange), weight: 0.4 },
        { score: mrrChange === null ? null : change(mrrChange), weight: 0.4 },
        { score: f.leads30d > 0 ? Math.min(100, 70 + 10 * f.leads30d) : null, weight: 0.2 },
      ]) ?? 70,
    signals: [
      signal('seats', f.seats, 0),
      signal('seat_change_90d_pct', seatChange === null ? null : seatChange * 100),
      signal('mrr_change_90d_pct', mrrChange === null ? null : mrrChange * 100),
      signal('leads_30d', f.leads30d, 0),
    ],
  };
}

/** The five dimension scores of one customer, each with the signals that explain it. */
export function scoreDimensions(f: Features, carry: Carry = {}): Record<DimensionKey, DimensionInput> {
  return {
    usage: usage(f, Boolean(carry.usage)),
    engagement: engagement(f, Boolean(carry.engagement)),
    support: support(f, Boolean(carry.support)),
    billing: billing(f),
    growth: growth(f),
  };
}
