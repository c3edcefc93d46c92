import type { Sql } from '../db/sql.ts';
import {
  ACTIVITY_KINDS,
  BILLING_KINDS,
  CHAT_INTERACTION_KINDS,
  CHAT_KINDS,
  GROWTH_KINDS,
  MESSAGE_KINDS,
  SUPPORT_CONVERSATION_KINDS,
  SUPPORT_CUSTOMER_MESSAGE_KINDS,
  SUPPORT_KINDS,
  USAGE_KINDS,
} from './signal-kinds.ts';
import { SIGNALS_WITH_ROLLUPS, splitByRollups } from './signal-rollups.ts';

/** Everything scoring knows about one customer as of a moment: counts over time windows and current state. */
export interface Features {
  asOf: Date;
  usageUnits7d: number;
  usageUnits30d: number;
  usageUnitsPrev30d: number;
  usageActiveDays30d: number;
  usageUsers30d: number;
  usageLastAt: Date | null;
  usageCount90d: number;

  chat30d: number;
  chatPrev30d: number;
  chatActors30d: number;
  chatLastAt: Date | null;
  chatJoined30d: number;
  chatLeft30d: number;
  chatCount90d: number;

  supportOpened30d: number;
  supportOpenedPrev30d: number;
  supportRatingAvg90d: number | null;
  supportRatings90d: number;
  supportSentiment30d: number | null;
  supportMessages30d: number;
  supportSentiment90d: number | null;
  supportMessages90d: number;
  supportCount90d: number;
  openConversations: number;
  oldestOpenConversationAt: Date | null;
  /** Conversations opened in 90 days, and the mean hours to the first reply from support (without a recorded reply: to the first close, or until now while open). */
  conversations90d: number;
  firstResponseHoursAvg: number | null;

  failedPayments30d: number;
  failedPayments90d: number;
  lastFailedAt: Date | null;
  lastPaidAt: Date | null;
  refunds90d: number;
  trialExtensions30d: number;
  billingCount90d: number;
  invoices: number;
  overdueInvoices: number;
  oldestOverdueDueAt: Date | null;
  subscriptions: number;
  /** past_due (also unpaid), incomplete, trialing, active, canceled, or null without a subscription. */
  subscriptionStatus: 'past_due' | 'incomplete' | 'trialing' | 'active' | 'canceled' | null;
  trialEnd: Date | null;
  seats: number | null;
  seatsDelta90d: number;
  mrrMinor: number | null;
  mrrDelta90d: number;
  leads30d: number;
  growthCount90d: number;

  activityLastAt: Date | null;
  sentiment14d: number | null;
  messages14d: number;
  sentiment30d: number | null;
  messages30d: number;
}

export interface AsOf {
  customerId: string;
  asOf: Date;
}

// Every per-row classification is computed once in the lateral subquery; the aggregates then only
// test booleans. The window is 90 days back from each customer's own as-of time. `source` is the signals
// table, or raw signals with rolled-up ones for windows that reach them (src/scoring/signal-rollups.ts).
const SIGNALS = (source: string) => `
WITH c AS (SELECT * FROM unnest($1::uuid[], $2::timestamptz[]) AS c(id, as_of))
SELECT c.id AS customer_id,
  coalesce(sum(s.units) FILTER (WHERE s.usage AND s.d7), 0)::float8 AS usage_units_7d,
  coalesce(sum(s.units) FILTER (WHERE s.usage AND s.d30), 0)::float8 AS usage_units_30d,
  coalesce(sum(s.units) FILTER (WHERE s.usage AND s.prev30), 0)::float8 AS usage_units_prev_30d,
  count(DISTINCT s.day) FILTER (WHERE s.usage AND s.d30)::int AS usage_active_days_30d,
  count(DISTINCT s.who) FILTER (WHERE s.usage AND s.d30)::int AS usage_users_30d,
  max(s.occurred_at) FILTER (WHERE s.usage) AS usage_last_at,
  count(*) FILTER (WHERE s.usage)::int AS usage_count_90d,
  count(*) FILTER (WHERE s.chat AND s.d30)::int AS chat_30d,
  count(*) FILTER (WHERE s.chat AND s.prev30)::int AS chat_prev_30d,
  count(DISTINCT s.who) FILTER (WHERE s.chat AND s.d30)::int AS chat_actors_30d,
  max(s.occurred_at) FILTER (WHERE s.chat) AS chat_last_at,
  count(*) FILTER (WHERE s.kind = 'chat.member_joined' AND s.d30)::int AS chat_joined_30d,
  count(*) FILTER (WHERE s.kind = 'chat.member_left' AND s.d30)::int AS chat_left_30d,
  count(*) FILTER (WHERE s.chat_any)::int AS chat_count_90d,
  count(*) FILTER (WHERE s.kind = 'support.conversation_opened' AND s.d30)::int AS support_opened_30d,
  count(*) FILTER (WHERE s.kind = 'support.conversation_opened' AND s.prev30)::int AS support_opened_prev_30d,
  avg(s.value) FILTER (WHERE s.kind = 'support.rating')::float8 AS support_rating_avg_90d,
  count(*) FILTER (WHERE s.kind = 'support.rating')::int AS support_ratings_90d,
  avg(s.sentiment) FILTER (WHERE s.support_message AND s.d30)::float8 AS support_sentiment_30d,
  count(s.sentiment) FILTER (WHERE s.support_message AND s.d30)::int AS support_messages_30d,
  avg(s.sentiment) FILTER (WHERE s.support_message)::float8 AS support_sentiment_90d,
  count(s.sentiment) FILTER (WHERE s.support_message)::int AS support_messages_90d,
  count(*) FILTER (WHERE s.support)::int AS support_count_90d,
  count(*) FILTER (WHERE s.kind = 'billing.payment_failed' AND s.d30)::int AS failed_payments_30d,
  count(*) FILTER (WHERE s.kind = 'billing.payment_failed')::int AS failed_payments_90d,
  max(s.occurred_at) FILTER (WHERE s.kind = 'billing.payment_failed') AS last_failed_at,
  max(s.occurred_at) FILTER (WHERE s.kind = 'billing.invoice_paid') AS last_paid_at,
  count(*) FILTER (WHERE s.kind = 'billing.refund')::int AS refunds_90d,
  count(*) FILTER (WHERE s.kind = 'billing.trial_extended' AND s.d30)::int AS trial_extensions_30d,
  count(*) FILTER (WHERE s.billing)::int AS billing_count_90d,
  coalesce(sum(s.value - s.previous) FILTER (WHERE s.kind = 'growth.seats'), 0)::float8 AS seats_delta_90d,
  coalesce(sum(s.value) FILTER (WHERE s.kind = 'growth.mrr_change'), 0)::float8 AS mrr_delta_90d,
  count(*) FILTER (WHERE s.kind = 'ads.lead' AND s.d30)::int AS leads_30d,
  count(*) FILTER (WHERE s.growth)::int AS growth_count_90d,
  max(s.occurred_at) FILTER (WHERE s.activity) AS activity_last_at,
  avg(s.sentiment) FILTER (WHERE s.message AND s.d14)::float8 AS sentiment_14d,
  count(s.sentiment) FILTER (WHERE s.message AND s.d14)::int AS messages_14d,
  avg(s.sentiment) FILTER (WHERE s.message AND s.d30)::float8 AS sentiment_30d,
  count(s.sentiment) FILTER (WHERE s.message AND s.d30)::int AS messages_30d
FROM c
LEFT JOIN LATERAL (
  SELECT x.kind, x.occurred_at, x.value, x.sentiment,
    CASE WHEN x.kind = 'code.push' THEN least(greatest(x.value, 1), 10) ELSE 1 END AS units,
    CASE WHEN jsonb_typeof(x.attributes->'previous') = 'number' THEN (x.attributes->>'previous')::float8 END AS previous,
    coalesce(x.attributes->>'user_id', x.attributes->>'actor') AS who,
    (x.occurred_at AT TIME ZONE 'UTC')::date AS day,
    x.kind = ANY($3::text[]) AS usage,
    x.kind = ANY($4::text[]) AS chat,
    x.kind = ANY($5::text[]) AS chat_any,
    x.kind = ANY($6::text[]) AS support,
    x.kind = ANY($7::text[]) AS support_message,
    x.kind = ANY($8::text[]) AS billing,
    x.kind = ANY($9::text[]) AS growth,
    x.kind = ANY($10::text[]) AS activity,
    x.kind = ANY($11::text[]) AS message,
    x.occurred_at > c.as_of - interval '7 days' AS d7,
    x.occurred_at > c.as_of - interval '14 days' AS d14,
    x.occurred_at > c.as_of - interval '30 days' AS d30,
    x.occurred_at <= c.as_of - interval '30 days' AND x.occurred_at > c.as_of - interval '60 days' AS prev30
  FROM ${source} x
  WHERE x.customer_id = c.id AND x.occurred_at > c.as_of - interval '90 days' AND x.occurred_at <= c.as_of
) s ON true
GROUP BY c.id`;

// A conversation is open when its latest event (as of the time) is anything but a close. Its first
// response time runs from its first event to support's first reply; without a recorded reply, to its first
// close (the wait cannot have outlasted the conversation), or to the as-of time while it is still waiting.
const BACKLOG = (source: string) => `
SELECT customer_id,
  count(*) FILTER (WHERE last_kind <> 'support.conversation_closed')::int AS open_conversations,
  min(first_at) FILTER (WHERE last_kind <> 'support.conversation_closed') AS oldest_open_at,
  count(*) FILTER (WHERE opened)::int AS conversations_90d,
  avg(extract(epoch FROM coalesce(replied_at, closed_at, as_of) - first_at) / 3600) FILTER (WHERE opened)::float8 AS first_response_hours
FROM (
  SELECT x.customer_id, c.as_of, (array_agg(x.kind ORDER BY x.occurred_at DESC, x.created_at DESC))[1] AS last_kind, min(x.occurred_at) AS first_at,
    min(x.occurred_at) FILTER (WHERE x.kind = 'support.agent_replied') AS replied_at,
    min(x.occurred_at) FILTER (WHERE x.kind = 'support.conversation_closed') AS closed_at,
    bool_or(x.kind = 'support.conversation_opened') AS opened
  FROM unnest($1::uuid[], $2::timestamptz[]) AS c(id, as_of)
  JOIN ${source} x ON x.customer_id = c.id AND x.kind = ANY($3::text[])
   AND x.occurred_at > c.as_of - interval '90 days' AND x.occurred_at <= c.as_of
  WHERE x.attributes->>'conversation_id' IS NOT NULL
  GROUP BY x.customer_id, c.as_of, x.attributes->>'conversation_id'
) conversations
GROUP BY customer_id`;

// Overdue as of the time: became overdue by then and not paid by then; voided invoices never count.
const INVOICES = `
SELECT c.id AS customer_id, count(i.id)::int AS invoices,
  count(i.id) FILTER (WHERE i.overdue_at <= c.as_of AND (i.paid_at IS NULL OR i.paid_at > c.as_of) AND i.status <> 'void')::int AS overdue_invoices,
  min(coalesce(i.due_at, i.overdue_at)) FILTER (WHERE i.overdue_at <= c.as_of AND (i.paid_at IS NULL OR i.paid_at > c.as_of) AND i.status <> 'void') AS oldest_overdue_due_at
FROM unnest($1::uuid[], $2::timestamptz[]) AS c(id, as_of)
JOIN invoices i ON i.customer_id = c.id AND i.created_at <= c.as_of
GROUP BY c.id`;

const SUBSCRIPTIONS = `
SELECT c.id AS customer_id, count(s.id)::int AS subscriptions,
  bool_or(s.status IN ('active', 'trialing', 'past_due', 'unpaid', 'incomplete')) AS any_live,
  bool_or(s.status IN ('past_due', 'unpaid')) AS any_past_due,
  bool_or(s.status = 'incomplete') AS any_incomplete,
  min(s.trial_end) FILTER (WHERE s.status = 'trialing') AS trial_end,
  sum(s.seats) FILTER (WHERE s.status NOT IN ('canceled', 'incomplete_expired'))::int AS seats,
  sum(s.mrr_minor) FILTER (WHERE s.status NOT IN ('canceled', 'incomplete_expired'))::float8 AS mrr_minor
FROM unnest($1::uuid[], $2::timestamptz[]) AS c(id, as_of)
JOIN subscriptions s ON s.customer_id = c.id AND s.created_at <= c.as_of
GROUP BY c.id`;

type Row = Record<string, unknown> & { customer_id: string };
const num = (v: unknown) => (v === null || v === undefined ? 0 : Number(v));
const numOrNull = (v: unknown) => (v === null || v === undefined ? null : Number(v));
const date = (v: unknown) => (v === null || v === undefined ? null : v instanceof Date ? v : new Date(String(v)));

function subscriptionStatus(r: Row | undefined): Features['subscriptionStatus'] {
  if (!r || num(r.subscriptions) === 0) return null;
  if (r.any_past_due) return 'past_due';
  if (r.any_incomplete) return 'incomplete';
  if (r.trial_end) return 'trialing';
  return r.any_live ? 'active' : 'canceled';
}

const QUERIES = {
  raw: { signals: SIGNALS('signals'), backlog: BACKLOG('signals') },
  daily: { signals: SIGNALS(SIGNALS_WITH_ROLLUPS), backlog: BACKLOG(SIGNALS_WITH_ROLLUPS) },
};

/**
 * Features of many customers in four set-based queries, each customer as of its own time (now for
 * scoring, the label's time for training). Works on any Sql: the pool or a Prisma transaction. A window
 * that reaches the tenant's rolled-up signals is computed as of the end of the previous UTC day.
 */
export async function extractFeatures(sql: Sql, targets: AsOf[]): Promise<Map<string, Features>> {
  const out = new Map<string, Features>();
  if (targets.length === 0) return out;
  const { raw, daily } = await splitByRollups(sql, targets);
  await extractInto(out, sql, raw, QUERIES.raw);
  await extractInto(out, sql, daily, QUERIES.daily);
  return out;
}

async function extractInto(out: Map<string, Features>, sql: Sql, targets: AsOf[], queries: { signals: string; backlog: string }) {
  if (targets.length === 0) return;
  const ids = targets.map((t) => t.customerId);
  const times = targets.map((t) => t.asOf);
  const [signals, backlog, invoices, subscriptions] = await Promise.all([
    sql.query<Row>(queries.signals, [
      ids,
      times,
      USAGE_KINDS,
      CHAT_INTERACTION_KINDS,
      CHAT_KINDS,
      SUPPORT_KINDS,
      SUPPORT_CUSTOMER_MESSAGE_KINDS,
      BILLING_KINDS,
      GROWTH_KINDS,
      ACTIVITY_KINDS,
      MESSAGE_KINDS,
    ]),
    sql.query<Row>(queries.backlog, [ids, times, SUPPORT_CONVERSATION_KINDS]),
    sql.query<Row>(INVOICES, [ids, times]),
    sql.query<Row>(SUBSCRIPTIONS, [ids, times]),
  ]);
  const byId = (rows: Row[]) => new Map(rows.map((r) => [r.customer_id, r]));
  const [b, inv, sub] = [byId(backlog), byId(invoices), byId(subscriptions)];
  const asOf = new Map(targets.map((t) => [t.customerId, t.asOf]));
  for (const s of signals) {
    const id = s.customer_id;
    const bl = b.get(id);
    const iv = inv.get(id);
    const sb = sub.get(id);
    out.set(id, {
      asOf: asOf.get(id)!,
      usageUnits7d: num(s.usage_units_7d),
      usageUnits30d: num(s.usage_units_30d),
      usageUnitsPrev30d: num(s.usage_units_prev_30d),
      usageActiveDays30d: num(s.usage_active_days_30d),
      usageUsers30d: num(s.usage_users_30d),
      usageLastAt: date(s.usage_last_at),
      usageCount90d: num(s.usage_count_90d),
      chat30d: num(s.chat_30d),
      chatPrev30d: num(s.chat_prev_30d),
      chatActors30d: num(s.chat_actors_30d),
      chatLastAt: date(s.chat_last_at),
      chatJoined30d: num(s.chat_joined_30d),
      chatLeft30d: num(s.chat_left_30d),
      chatCount90d: num(s.chat_count_90d),
      supportOpened30d: num(s.support_opened_30d),
      supportOpenedPrev30d: num(s.support_opened_prev_30d),
      supportRatingAvg90d: numOrNull(s.support_rating_avg_90d),
      supportRatings90d: num(s.support_ratings_90d),
      supportSentiment30d: numOrNull(s.support_sentiment_30d),
      supportMessages30d: num(s.support_messages_30d),
      supportSentiment90d: numOrNull(s.support_sentiment_90d),
      supportMessages90d: num(s.support_messages_90d),
      supportCount90d: num(s.support_count_90d),
      openConversations: num(bl?.open_conversations),
      oldestOpenConversationAt: date(bl?.oldest_open_at),
      conversations90d: num(bl?.conversations_90d),
      firstResponseHoursAvg: numOrNull(bl?.first_response_hours),
      failedPayments30d: num(s.failed_payments_30d),
      failedPayments90d: num(s.failed_payments_90d),
      lastFailedAt: date(s.last_failed_at),
      lastPaidAt: date(s.last_paid_at),
      refunds90d: num(s.refunds_90d),
      trialExtensions30d: num(s.trial_extensions_30d),
      billingCount90d: num(s.billing_count_90d),
      invoices: num(iv?.invoices),
      overdueInvoices: num(iv?.overdue_invoices),
      oldestOverdueDueAt: date(iv?.oldest_overdue_due_at),
      subscriptions: num(sb?.subscriptions),
      subscriptionStatus: subscriptionStatus(sb),
      trialEnd: date(sb?.trial_end),
      seats: numOrNull(sb?.seats),
      seatsDelta90d: num(s.seats_delta_90d),
      mrrMinor: numOrNull(sb?.mrr_minor),
      mrrDelta90d: num(s.mrr_delta_90d),
      leads30d: num(s.leads_30d),
      growthCount90d: num(s.growth_count_90d),
      activityLastAt: date(s.activity_last_at),
      sentiment14d: numOrNull(s.sentiment_14d),
      messages14d: num(s.messages_14d),
      sentiment30d: numOrNull(s.sentiment_30d),
      messages30d: num(s.messages_30d),
    });
  }
}

/** Whole days from `from` to `to` (fractional), or null when `from` is unknown. */
export const daysBetween = (from: Date | null, to: Date): number | null => (from ? (to.getTime() - from.getTime()) / 86_400_000 : null);
