import type { Sql } from '../db/sql.ts';
import { type Change, GROUP_KINDS, type InputGroup } from './attribution.ts';

// The owner of `health_changes`: one row per computation that moved a customer's score, a dimension or
// its churn probability, with the drivers that explain it (src/scoring/attribution.ts) and the sources
// they cite. Written in the scoring loop's transaction with the snapshot and history (docs/concurrency.md,
// step 8); removed with the customer (the foreign key's cascade) and after the history's 400 days.
// The sources are read here, like the features (src/scoring/features.ts) read the signals they count.

/** A recorded signal as a change cites it, with the inbound event it came from. */
export interface SignalSource {
  customerId: string;
  signalId: string;
  kind: string;
  source: string;
  occurredAt: Date;
  recordedAt: Date;
  /** The event name a usage event was sent with. */
  usageEvent: string | null;
  inboundEventId: string | null;
  provider: string | null;
  eventType: string | null;
  providerEventId: string | null;
  receivedAt: Date | null;
}

/** Per customer, newest first, at most this many of each kind: enough to cite, bounded for a burst. */
const SOURCES_PER_KIND = 10;

/** The signals recorded for each customer after its `since` and up to `until`. */
export async function signalSourcesSince(sql: Sql, since: { customerId: string; since: Date }[], until: Date): Promise<SignalSource[]> {
  if (since.length === 0) return [];
  return sql.query<SignalSource>(
    `SELECT "customerId", "signalId", kind, source, "occurredAt", "recordedAt", "usageEvent", "inboundEventId", provider, "eventType",
            "providerEventId", "receivedAt"
     FROM (
       SELECT s.customer_id AS "customerId", s.id AS "signalId", s.kind, s.source, s.occurred_at AS "occurredAt",
              s.created_at AS "recordedAt", CASE WHEN s.kind = 'usage.event' THEN s.attributes->>'event' END AS "usageEvent",
              s.inbox_event_id AS "inboundEventId", i.provider, i.event_type AS "eventType", i.dedup_key AS "providerEventId",
              i.received_at AS "receivedAt",
              row_number() OVER (PARTITION BY s.customer_id, s.kind ORDER BY s.created_at DESC, s.id) AS n
       FROM unnest($1::uuid[], $2::timestamptz[]) AS c(id, since)
       JOIN signals s ON s.customer_id = c.id AND s.created_at > c.since AND s.created_at <= $3
       LEFT JOIN inbox_events i ON i.id = s.inbox_event_id) x
     WHERE n <= ${SOURCES_PER_KIND}
     ORDER BY "customerId", "recordedAt" DESC, "signalId"`,
    [since.map((s) => s.customerId), since.map((s) => s.since), until],
  );
}

/** One audited change of the tenant's scoring settings, as a change cites it. */
export interface AuditedChange {
  tenantId: string;
  auditEventId: string;
  action: string;
  occurredAt: Date;
  actorLabel: string | null;
}

/** The tenants' audited changes of these actions after `since` and up to `until`, newest first. */
export async function auditedChangesSince(
  sql: Sql,
  tenantIds: string[],
  actions: readonly string[],
  since: Date,
  until: Date,
): Promise<AuditedChange[]> {
  if (tenantIds.length === 0) return [];
  return sql.query<AuditedChange>(
    `SELECT tenant_id AS "tenantId", id AS "auditEventId", action, occurred_at AS "occurredAt", actor_label AS "actorLabel"
     FROM audit_events WHERE tenant_id = ANY($1::uuid[]) AND action = ANY($2::text[]) AND occurred_at > $3 AND occurred_at <= $4
     ORDER BY occurred_at DESC`,
    [tenantIds, actions, since, until],
  );
}

/** A source as stored with a change: what it was, enough to find it again, and when. */
export type StoredSource =
  | {
      type: 'provider_event' | 'usage_event' | 'signal';
      kind: string;
      signal_id: string;
      occurred_at: string;
      recorded_at: string;
      usage_event: string | null;
      inbound_event_id: string | null;
      provider: string | null;
      event_type: string | null;
      provider_event_id: string | null;
      received_at: string | null;
    }
  | { type: 'api_change'; kind: string; audit_event_id: string; occurred_at: string; actor: string | null };

export function storedSignalSource(s: SignalSource): StoredSource {
  return {
    type: s.inboundEventId ? 'provider_event' : s.kind === 'usage.event' ? 'usage_event' : 'signal',
    kind: s.kind,
    signal_id: s.signalId,
    occurred_at: s.occurredAt.toISOString(),
    recorded_at: s.recordedAt.toISOString(),
    usage_event: s.usageEvent,
    inbound_event_id: s.inboundEventId,
    provider: s.provider,
    event_type: s.eventType,
    provider_event_id: s.providerEventId,
    received_at: s.receivedAt?.toISOString() ?? null,
  };
}

export const storedAuditSource = (a: AuditedChange): StoredSource => ({
  type: 'api_change',
  kind: a.action,
  audit_event_id: a.auditEventId,
  occurred_at: a.occurredAt.toISOString(),
  actor: a.actorLabel,
});

/** The audited actions that change the settings group's inputs. */
export const SETTINGS_ACTIONS = ['scoring_weights.changed', 'churn_model.activated', 'churn_model.trained', 'churn_model.reset'] as const;

/** Whether a source can have moved an input of this group. */
export function feeds(source: StoredSource, group: InputGroup): boolean {
  if (source.type === 'api_change') return group === 'settings';
  return GROUP_KINDS[group].includes(source.kind);
}

export interface NewHealthChange {
  tenantId: string;
  customerId: string;
  change: Change;
  sources: StoredSource[];
}

/** Records a batch's changes in one statement, in the batch's (customer) order. */
export async function recordHealthChanges(sql: Sql, rows: NewHealthChange[], computedAt: Date): Promise<void> {
  if (rows.length === 0) return;
  await sql.query(
    `INSERT INTO health_changes (id, tenant_id, customer_id, computed_at, score_from, score_to, churn_from, churn_to, dimensions, drivers, sources)
     SELECT gen_random_uuid(), t.tenant_id, t.customer_id, $10, t.score_from, t.score_to, t.churn_from, t.churn_to, t.dimensions, t.drivers, t.sources
     FROM unnest($1::uuid[], $2::uuid[], $3::int[], $4::int[], $5::float8[], $6::float8[], $7::jsonb[], $8::jsonb[], $9::jsonb[])
       AS t(tenant_id, customer_id, score_from, score_to, churn_from, churn_to, dimensions, drivers, sources)`,
    [
      rows.map((r) => r.tenantId),
      rows.map((r) => r.customerId),
      rows.map((r) => r.change.score.from),
      rows.map((r) => r.change.score.to),
      rows.map((r) => r.change.churn.from),
      rows.map((r) => r.change.churn.to),
      rows.map((r) => JSON.stringify(r.change.dimensions)),
      rows.map((r) => JSON.stringify(r.change.drivers)),
      rows.map((r) => JSON.stringify(r.sources)),
      computedAt,
    ],
  );
}

export interface HealthChangeRow {
  id: string;
  computedAt: Date;
  scoreFrom: number | null;
  scoreTo: number | null;
  churnFrom: number | null;
  churnTo: number | null;
  dimensions: Change['dimensions'];
  drivers: Change['drivers'];
  sources: StoredSource[];
}

export interface ChangeFilter {
  /** Changes computed at or after this moment. */
  since?: Date | null;
  /** Changes computed before this moment (a page's cursor, or the end of a day). */
  before?: Date | null;
  limit: number;
}

/** A customer's changes, newest first. */
export async function listHealthChanges(sql: Sql, tenantId: string, customerId: string, f: ChangeFilter): Promise<HealthChangeRow[]> {
  return sql.query<HealthChangeRow>(
    `SELECT id, computed_at AS "computedAt", score_from AS "scoreFrom", score_to AS "scoreTo", churn_from AS "churnFrom",
            churn_to AS "churnTo", dimensions, drivers, sources
     FROM health_changes
     WHERE tenant_id = $1 AND customer_id = $2 AND ($3::timestamptz IS NULL OR computed_at >= $3) AND ($4::timestamptz IS NULL OR computed_at < $4)
     ORDER BY computed_at DESC, id DESC LIMIT $5`,
    [tenantId, customerId, f.since ?? null, f.before ?? null, f.limit],
  );
}

/** One recorded change's drivers, as an announcement sums them. */
export interface RecordedDrivers {
  customerId: string;
  computedAt: Date;
  drivers: Change['drivers'];
}

/** The drivers of the changes recorded for each customer after its `since`, oldest first. */
export async function driversSince(sql: Sql, since: { customerId: string; since: Date }[]): Promise<RecordedDrivers[]> {
  if (since.length === 0) return [];
  return sql.query<RecordedDrivers>(
    `SELECT h.customer_id AS "customerId", h.computed_at AS "computedAt", h.drivers
     FROM unnest($1::uuid[], $2::timestamptz[]) AS c(id, since)
     JOIN health_changes h ON h.customer_id = c.id AND h.computed_at > c.since
     ORDER BY h.customer_id, h.computed_at, h.id`,
    [since.map((s) => s.customerId), since.map((s) => s.since)],
  );
}
