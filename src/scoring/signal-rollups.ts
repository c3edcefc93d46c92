import type { Sql } from '../db/sql.ts';
import { RETENTION_SETTINGS } from '../contract/retention.ts';

// Signals older than a tenant's retention are rolled up into signal_rollups (docs/data-lifecycle.md): one row
// per customer, UTC day and bucket, where a bucket is every value the feature queries look at (source, kind,
// value, previous value, actor, conversation) and the row keeps how many signals it stands for, their
// sentiment sum and count, and their first and last times. An actor is kept only as an md5, so distinct
// users still count and nobody is named; attributes and text are gone.
//
// Expanded back into that many rows (below), a day's buckets give every feature exactly what the raw rows
// gave, as long as a window starts and ends on day boundaries. So scoring computes any as-of whose 90-day
// window reaches before the tenant's cutoff at the end of the previous UTC day, from raw rows and rollups
// alike, whether or not the worker has rolled them up yet. Live scoring never does: the minimum retention
// keeps its windows in raw rows.

const DAY_MS = 86_400_000;

/** The start of the UTC day of `t`. */
export const startOfDay = (t: Date): Date => new Date(Math.floor(t.getTime() / DAY_MS) * DAY_MS);

/**
 * Signals before this moment are rolled up: whole UTC days, `days` before today. Scoring decides which of its
 * windows reach rolled-up days with the same rule, so its results do not depend on whether the worker has run.
 */
export const signalCutoff = (now: Date, days: number): Date => new Date(startOfDay(now).getTime() - days * DAY_MS);

/** The longest window a feature query reads back from its as-of time (src/scoring/features.ts). */
const WINDOW_DAYS = 90;

/**
 * Signals as the feature queries read them where a window reaches rolled-up days: raw rows and expanded
 * rollups in one shape. Raw actors are hashed like rolled-up ones, so a user seen on both sides counts once.
 */
export const SIGNALS_WITH_ROLLUPS = `(
  SELECT s.customer_id, s.kind, s.occurred_at, s.value, s.sentiment, s.created_at,
    jsonb_strip_nulls(jsonb_build_object(
      'user_id', md5(coalesce(s.attributes->>'user_id', s.attributes->>'actor')),
      'previous', CASE WHEN jsonb_typeof(s.attributes->'previous') = 'number' THEN s.attributes->'previous' END,
      'conversation_id', s.attributes->>'conversation_id')) AS attributes
  FROM signals s
  UNION ALL
  SELECT r.customer_id, r.kind, CASE WHEN g.i = 1 THEN r.first_at ELSE r.last_at END, r.value,
    CASE WHEN g.i <= r.sentiment_count THEN r.sentiment_sum / r.sentiment_count END, r.last_created_at,
    jsonb_strip_nulls(jsonb_build_object('user_id', r.actor, 'previous', to_jsonb(r.previous), 'conversation_id', r.conversation_id))
  FROM signal_rollups r CROSS JOIN LATERAL generate_series(1, r.signals) AS g(i)
)`;

/** A customer's features as of a time (src/scoring/features.ts, `AsOf`). */
interface Target {
  customerId: string;
  asOf: Date;
}

/** The end of the UTC day before `t`: windows ending there start on a day boundary too. */
const endOfPreviousDay = (t: Date) => new Date(startOfDay(t).getTime() - 1);

/**
 * Splits feature targets into those whose windows lie in raw signals and those reaching the tenant's
 * rolled-up days; the latter are computed as of the end of the previous UTC day. Targets recent enough for
 * any tenant's retention (live scoring's always are) need no look-up.
 */
export async function splitByRollups(sql: Sql, targets: Target[], now = new Date()): Promise<{ raw: Target[]; daily: Target[] }> {
  const safeFrom = startOfDay(now).getTime() - (RETENTION_SETTINGS.signals.min - WINDOW_DAYS) * DAY_MS;
  const older = targets.filter((t) => t.asOf.getTime() < safeFrom);
  if (older.length === 0) return { raw: targets, daily: [] };
  const rows = await sql.query<{ i: number }>(
    `SELECT t.i::int AS i
     FROM unnest($1::uuid[], $2::timestamptz[]) WITH ORDINALITY AS t(customer_id, as_of, i)
     JOIN customers c ON c.id = t.customer_id JOIN tenants tn ON tn.id = c.tenant_id
     WHERE t.as_of - make_interval(days => $3) < date_trunc('day', $4::timestamptz, 'UTC') - make_interval(days => coalesce(tn.signal_retention_days, $5))`,
    [older.map((t) => t.customerId), older.map((t) => t.asOf), WINDOW_DAYS, now, RETENTION_SETTINGS.signals.days],
  );
  const reaching = new Set(rows.map((r) => older[r.i - 1]!));
  return {
    raw: targets.filter((t) => !reaching.has(t)),
    daily: targets.filter((t) => reaching.has(t)).map((t) => ({ customerId: t.customerId, asOf: endOfPreviousDay(t.asOf) })),
  };
}
