import type pg from 'pg';
import { onPg } from '../db/sql.ts';
import { notFound } from '../errors.ts';
import { inboundBodies } from './integrations.ts';
import { inputLabel, type InputGroup } from '../scoring/attribution.ts';
import { DIMENSIONS, type DimensionKey } from '../scoring/dimensions.ts';
import { feeds, type HealthChangeRow, listHealthChanges, type StoredSource } from '../scoring/health-changes.ts';

// Why a customer's health moved, as the API shows it: the stored changes with their drivers, each driver
// with the sources that feed its group, and whether each inbound event's body is still kept.

export interface SourceView {
  type: StoredSource['type'];
  kind: string;
  occurredAt: Date;
  recordedAt: Date | null;
  signalId: string | null;
  usageEvent: string | null;
  inboundEventId: string | null;
  provider: string | null;
  eventType: string | null;
  providerEventId: string | null;
  receivedAt: Date | null;
  auditEventId: string | null;
  actor: string | null;
  /** For an inbound event: whether its body is still stored (retention and erasure remove it); null otherwise. */
  bodyRetained: boolean | null;
}

export interface DriverView {
  input: string;
  label: string;
  group: InputGroup;
  from: unknown;
  to: unknown;
  score: number;
  churnProbability: number;
  dimensions: { key: DimensionKey; points: number }[];
  sources: SourceView[];
}

export interface Movement {
  from: number | null;
  to: number | null;
  change: number | null;
}

export interface HealthChangeView {
  id: string;
  computedAt: Date;
  score: Movement;
  churnProbability: Movement;
  dimensions: (Movement & { key: DimensionKey })[];
  drivers: DriverView[];
}

const movement = (from: number | null, to: number | null, unit: number): Movement => ({
  from,
  to,
  change: from === null || to === null ? null : Math.round((to - from) * unit) / unit,
});

const date = (s: string | null | undefined) => (s ? new Date(s) : null);

function sourceView(s: StoredSource, bodies: Map<string, string>): SourceView {
  if (s.type === 'api_change')
    return {
      type: s.type,
      kind: s.kind,
      occurredAt: new Date(s.occurred_at),
      recordedAt: null,
      signalId: null,
      usageEvent: null,
      inboundEventId: null,
      provider: null,
      eventType: null,
      providerEventId: null,
      receivedAt: null,
      auditEventId: s.audit_event_id,
      actor: s.actor,
      bodyRetained: null,
    };
  return {
    type: s.type,
    kind: s.kind,
    occurredAt: new Date(s.occurred_at),
    recordedAt: date(s.recorded_at),
    signalId: s.signal_id,
    usageEvent: s.usage_event,
    inboundEventId: s.inbound_event_id,
    provider: s.provider,
    eventType: s.event_type,
    providerEventId: s.provider_event_id,
    receivedAt: date(s.received_at),
    auditEventId: null,
    actor: null,
    bodyRetained: s.inbound_event_id ? Boolean(bodies.get(s.inbound_event_id)) : null,
  };
}

export function changeView(row: HealthChangeRow, bodies: Map<string, string>): HealthChangeView {
  return {
    id: row.id,
    computedAt: row.computedAt,
    score: movement(row.scoreFrom, row.scoreTo, 1),
    churnProbability: movement(row.churnFrom, row.churnTo, 10_000),
    dimensions: DIMENSIONS.map((key) => ({ key, ...movement(row.dimensions[key]?.from ?? null, row.dimensions[key]?.to ?? null, 10) })),
    drivers: row.drivers.map((d) => ({
      input: d.input,
      label: inputLabel(d.input),
      group: d.group,
      from: d.from,
      to: d.to,
      score: d.score,
      churnProbability: d.churn,
      dimensions: DIMENSIONS.flatMap((key) => (d.dimensions[key] === undefined ? [] : [{ key, points: d.dimensions[key] }])),
      sources: row.sources.filter((s) => feeds(s, d.group)).map((s) => sourceView(s, bodies)),
    })),
  };
}

export interface ChangeQuery {
  since?: Date | null;
  before?: Date | null;
  first: number;
}

export function createHealthChangeService(deps: { pool: pg.Pool }) {
  const sql = onPg(deps.pool);

  async function requireCustomer(tenantId: string, customerId: string) {
    const [c] = await sql.query<{ id: string }>('SELECT id FROM customers WHERE tenant_id = $1 AND id = $2', [tenantId, customerId]);
    if (!c) throw notFound(`Customer ${customerId}`);
  }

  return {
    /** A customer's changes, newest first; one more than asked tells the caller there is a next page. */
    async list(tenantId: string, customerId: string, q: ChangeQuery): Promise<HealthChangeView[]> {
      await requireCustomer(tenantId, customerId);
      const rows = await listHealthChanges(sql, tenantId, customerId, { since: q.since, before: q.before, limit: q.first });
      const ids = [
        ...new Set(
          rows.flatMap((r) => r.sources.flatMap((s) => (s.type !== 'api_change' && s.inbound_event_id ? [s.inbound_event_id] : []))),
        ),
      ];
      const bodies = await inboundBodies(sql, tenantId, ids, false);
      return rows.map((r) => changeView(r, bodies));
    },
    /** The stored body of an inbound event a change cites; null once retention or an erasure removed it. */
    async body(tenantId: string, inboundEventId: string): Promise<string | null> {
      const body = (await inboundBodies(sql, tenantId, [inboundEventId], true)).get(inboundEventId);
      return body ? body : null;
    },
  };
}

export type HealthChangeService = ReturnType<typeof createHealthChangeService>;
