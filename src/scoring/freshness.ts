import type pg from 'pg';
import type { DimensionKey, ProviderName } from '../contract/enums.ts';
import { sequenceSubject } from '../contract/sequence-subject.ts';
import { inTransaction, type Sql } from '../db/sql.ts';
import { enqueueEvents } from '../outbox/events/enqueue.ts';
import { eventOf } from '../outbox/events/payloads.ts';

// How fresh each integration's events are (docs/scoring.md, "Fresh sources"). The owner of
// `integration_freshness`. A worker pass learns each integration's usual cadence from its own history: per UTC
// day of the last two weeks, the events received and the longest wait before one of them. An integration that
// has been heard from on enough days and stays silent far longer than its longest usual wait is flagged
// silent, once (`integration.silent`), until its events return (`integration.resumed`). Its dimensions are
// then shown stale on its customers' health, and the score's confidence falls; the score itself is not
// re-weighted behind the user's back.

/** Days of history the cadence is learned from. */
export const CADENCE_DAYS = 14;
/** Before this much history the cadence is not known and nothing is flagged. */
const MIN_DAYS_HEARD = 3;
const MIN_EVENTS = 10;
/** Silent once quiet this many times its longest usual wait, and never before an hour. */
const SILENCE_FACTOR = 3;
const MIN_SILENCE_SECONDS = 3600;
/** Integrations checked per transaction. */
const CHUNK = 200;
/**
 * Events are taken in up to this long before the check: an event's time is its transaction's start, and one
 * that commits after a check has moved past it would otherwise never be counted.
 */
const SETTLE_MS = 10_000;
/** A row checked this recently (by another worker) is left alone. */
const RECHECK_AFTER_MS = 30_000;

interface Day {
  events: number;
  /** Seconds. */
  longestGap: number;
}
type Days = Record<string, Day>;

/** What is known of an integration's cadence: null until it has been heard from long enough. */
export function usualGapSeconds(days: Days): number | null {
  const heard = Object.values(days).filter((d) => d.events > 0);
  if (heard.length < MIN_DAYS_HEARD || heard.reduce((n, d) => n + d.events, 0) < MIN_EVENTS) return null;
  return Math.max(...heard.map((d) => d.longestGap));
}

/** How long an integration of this cadence may stay quiet before it is called silent. */
export const silenceAfterSeconds = (usualGap: number) => Math.max(SILENCE_FACTOR * usualGap, MIN_SILENCE_SECONDS);

const dayOf = (t: Date) => t.toISOString().slice(0, 10);

export interface IntegrationFreshness {
  lastEventAt: Date | null;
  /** Null until enough history is known. */
  usualGapSeconds: number | null;
  silentAfterSeconds: number | null;
  /** Set while the integration is silent. */
  silentSince: Date | null;
}

export interface CheckResult {
  checked: number;
  silenced: number;
  resumed: number;
}

/**
 * One pass over every connected integration (one with a signing secret): takes in the events received since
 * the last pass, then flags or clears its silence. Safe on several workers at once: each takes its rows
 * `SKIP LOCKED` (docs/concurrency.md) and leaves those another worker has just checked.
 */
export async function checkFreshness(pool: pg.Pool, now = new Date()): Promise<CheckResult> {
  const result: CheckResult = { checked: 0, silenced: 0, resumed: 0 };
  await pool.query(
    // In key order: two workers adding the same new rows at once then wait for each other in one order only.
    `INSERT INTO integration_freshness (tenant_id, provider)
     SELECT tenant_id, provider FROM inbound_secrets ORDER BY tenant_id, provider ON CONFLICT DO NOTHING`,
  );
  // In key order from where the chunk before ended, so that a pass reads each row once.
  let after = { tenantId: '00000000-0000-0000-0000-000000000000', provider: '' };
  for (;;) {
    const done = await inTransaction(pool, (sql) => checkChunk(sql, now, after));
    result.checked += done.checked;
    result.silenced += done.silenced;
    result.resumed += done.resumed;
    if (!done.last) return result;
    after = done.last;
  }
}

interface Row {
  tenant_id: string;
  provider: ProviderName;
  last_event_at: Date | null;
  days: Days;
  silent_since: Date | null;
}
interface NewDay {
  tenant_id: string;
  provider: string;
  day: string;
  events: number;
  longest_gap: number | null;
  newest: Date;
}

async function checkChunk(
  sql: Sql,
  now: Date,
  after: { tenantId: string; provider: string },
): Promise<CheckResult & { last: { tenantId: string; provider: string } | null }> {
  const keys = await sql.query<{ tenant_id: string; provider: string; due: boolean }>(
    `SELECT f.tenant_id, f.provider, (f.checked_at IS NULL OR f.checked_at < $3) AS due
     FROM integration_freshness f
     WHERE (f.tenant_id, f.provider) > ($1::uuid, $2::text)
     ORDER BY f.tenant_id, f.provider LIMIT ${CHUNK}`,
    [after.tenantId, after.provider, new Date(now.getTime() - RECHECK_AFTER_MS)],
  );
  const last = keys.length === CHUNK ? { tenantId: keys.at(-1)!.tenant_id, provider: keys.at(-1)!.provider } : null;
  const due = keys.filter((k) => k.due);
  const rows = due.length
    ? await sql.query<Row>(
        `SELECT f.tenant_id, f.provider, f.last_event_at, f.days, f.silent_since
         FROM integration_freshness f JOIN inbound_secrets s ON s.tenant_id = f.tenant_id AND s.provider = f.provider
         WHERE (f.tenant_id, f.provider) IN (SELECT * FROM unnest($1::uuid[], $2::text[]))
         ORDER BY f.tenant_id, f.provider FOR UPDATE OF f SKIP LOCKED`,
        [due.map((k) => k.tenant_id), due.map((k) => k.provider)],
      )
    : [];
  if (rows.length === 0) return { checked: 0, silenced: 0, resumed: 0, last };
  const horizon = new Date(now.getTime() - CADENCE_DAYS * 86_400_000);
  const settled = new Date(now.getTime() - SETTLE_MS);
  // What arrived since each row's last event, per day, with the longest wait before an event of that day
  // (the first one's measured from the last event already counted).
  const arrived = await sql.query<NewDay>(
    `SELECT f.tenant_id, f.provider, n.day, n.events, n.longest_gap, n.newest
     FROM unnest($1::uuid[], $2::text[], $3::timestamptz[], $6::timestamptz[]) AS f(tenant_id, provider, last_event_at, gap_from)
     CROSS JOIN LATERAL (
       SELECT to_char(received_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, count(*)::int AS events,
              max(extract(epoch FROM received_at - previous))::float8 AS longest_gap, max(received_at) AS newest
       FROM (SELECT received_at, lag(received_at, 1, f.gap_from) OVER (ORDER BY received_at) AS previous
             FROM inbox_events
             WHERE tenant_id = f.tenant_id AND provider = f.provider AND received_at > coalesce(f.last_event_at, $4) AND received_at <= $5) e
       GROUP BY 1) n`,
    [
      rows.map((r) => r.tenant_id),
      rows.map((r) => r.provider),
      rows.map((r) => r.last_event_at),
      horizon,
      settled,
      // A flagged silence is not a wait to learn: the cadence would grow with every outage.
      rows.map((r) => (r.silent_since ? null : r.last_event_at)),
    ],
  );
  // The last 14 days, today's included.
  const oldest = dayOf(new Date(horizon.getTime() + 86_400_000));
  const events: Parameters<typeof enqueueEvents>[1] = [];
  let silenced = 0;
  let resumed = 0;
  const arrivedOf = new Map<string, NewDay[]>();
  for (const a of arrived) {
    const key = `${a.tenant_id}:${a.provider}`;
    arrivedOf.set(key, [...(arrivedOf.get(key) ?? []), a]);
  }
  const updated = rows.map((r) => {
    const mine = arrivedOf.get(`${r.tenant_id}:${r.provider}`) ?? [];
    // A silent integration not heard from again keeps the cadence it fell silent against: letting its days
    // age out would let the silence stop counting as one while it goes on.
    const unheard = r.silent_since !== null && mine.length === 0;
    const days: Days = unheard ? r.days : Object.fromEntries(Object.entries(r.days).filter(([day]) => day >= oldest));
    let last = r.last_event_at;
    for (const n of mine) {
      const d = (days[n.day] ??= { events: 0, longestGap: 0 });
      d.events += n.events;
      d.longestGap = Math.max(d.longestGap, Math.round(n.longest_gap ?? 0));
      if (!last || n.newest > last) last = n.newest;
    }
    const usual = usualGapSeconds(days);
    const quiet = last ? (now.getTime() - last.getTime()) / 1000 : 0;
    const silent = unheard || (last !== null && usual !== null && quiet > silenceAfterSeconds(usual));
    let silentSince = r.silent_since;
    const source = { tenantId: r.tenant_id, provider: r.provider, lastEventAt: last, usualGapSeconds: usual };
    const subject = sequenceSubject('integration', r.provider);
    if (silent && !silentSince) {
      silentSince = now;
      silenced++;
      events.push(
        eventOf(
          'integration.silent',
          { ...source, silentSince: now, resumedAt: null },
          { subject, dedupKey: `integration.silent:${r.provider}:${now.toISOString()}` },
        ),
      );
    } else if (!silent && silentSince) {
      resumed++;
      events.push(
        eventOf(
          'integration.resumed',
          { ...source, silentSince, resumedAt: now },
          { subject, dedupKey: `integration.resumed:${r.provider}:${silentSince.toISOString()}` },
        ),
      );
      silentSince = null;
    }
    return { ...r, last, days, silentSince };
  });
  await sql.query(
    `UPDATE integration_freshness f SET last_event_at = u.last_event_at, days = u.days, silent_since = u.silent_since, checked_at = $6
     FROM unnest($1::uuid[], $2::text[], $3::timestamptz[], $4::jsonb[], $5::timestamptz[]) AS u(tenant_id, provider, last_event_at, days, silent_since)
     WHERE f.tenant_id = u.tenant_id AND f.provider = u.provider`,
    [
      updated.map((u) => u.tenant_id),
      updated.map((u) => u.provider),
      updated.map((u) => u.last),
      updated.map((u) => JSON.stringify(u.days)),
      updated.map((u) => u.silentSince),
      now,
    ],
  );
  await enqueueEvents(sql, events);
  return { checked: rows.length, silenced, resumed, last };
}

/** An integration's freshness from its stored row (read by the integrations service). */
export function freshnessView(row: { lastEventAt: Date | null; days: unknown; silentSince: Date | null }): IntegrationFreshness {
  const usual = usualGapSeconds((row.days ?? {}) as Days);
  return {
    lastEventAt: row.lastEventAt,
    usualGapSeconds: usual,
    silentAfterSeconds: usual === null ? null : silenceAfterSeconds(usual),
    silentSince: row.silentSince,
  };
}

/** A silent provider as a health read names it (JSON from SILENT_PROVIDERS_SQL, or Prisma). */
export interface SilentProvider {
  provider: string;
  silentSince: string | Date;
}

/** A tenant's silent integrations, as a Prisma relation selection reads them (the shape of SilentProvider). */
export const SILENT_INTEGRATIONS = { where: { silentSince: { not: null } }, select: { provider: true, silentSince: true } } as const;

/** The dimensions each provider's events feed (src/scoring/signal-kinds.ts). */
export const PROVIDER_DIMENSIONS: Record<ProviderName, readonly DimensionKey[]> = {
  stripe: ['billing', 'growth'],
  github: ['usage'],
  slack: ['engagement'],
  discord: ['engagement'],
  intercom: ['support'],
  meta_ads: ['growth'],
};

/** The silent providers that feed a dimension. */
export const staleSourcesOf = (dimension: DimensionKey, silent: readonly SilentProvider[]): ProviderName[] =>
  silent.map((s) => s.provider as ProviderName).filter((p) => PROVIDER_DIMENSIONS[p]?.includes(dimension));

/** The statement part naming a tenant's silent providers, as a JSON array, for reads of a customer's health. */
export const SILENT_PROVIDERS_SQL = (tenantColumn: string) =>
  `(SELECT coalesce(json_agg(json_build_object('provider', provider, 'silentSince', silent_since) ORDER BY provider), '[]'::json)
    FROM integration_freshness WHERE tenant_id = ${tenantColumn} AND silent_since IS NOT NULL)`;
