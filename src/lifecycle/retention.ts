import type pg from 'pg';
import { inTransaction, onPg, type Sql } from '../db/sql.ts';
import { lockTenants } from '../db/locks.ts';
import { RETENTION_KEYS, RETENTION_SETTINGS, type Retention } from '../contract/retention.ts';
import { signalCutoff } from '../scoring/signal-rollups.ts';
import { rollUpSignals } from '../scoring/signals.ts';
import { FIXED_RETENTION, RETENTION_COLUMNS } from './policy.ts';

// The retention pass (docs/data-lifecycle.md): each kind of data past its tenant's window goes in bounded
// batches, oldest first, each batch one short statement whose rows are locked with SKIP LOCKED, so nothing
// waits on it for long and any number of workers can run it together. A pass stops at its batch budget
// and says it is behind; the next pass goes on from the oldest rows again.

export const RETENTION_KINDS = [
  'inbound_bodies',
  'inbound_events',
  'signals',
  'outbox_events',
  'deliveries',
  'audit_events',
  'health_history',
  'health_changes',
  'idempotency_keys',
  'delivery_figures',
] as const;
export type RetentionKind = (typeof RETENTION_KINDS)[number];

export interface RetentionOptions {
  /** Rows per statement. */
  batchSize: number;
  /** Full batches per kind and pass; past it the kind is reported behind. */
  maxBatches: number;
  now?: () => Date;
  /**
   * Empties up to `limit` of a tenant's inbound bodies received before `before`, answering how many: the
   * inbox's statement (its rows are the inbound pipeline's to change; lifecycle does not import it).
   */
  emptyInboundBodies: (sql: Sql, tenantId: string, before: Date, limit: number) => Promise<number>;
}

export interface TenantRetention extends Retention {
  tenantId: string;
}

const DAY_MS = 86_400_000;
const daysBefore = (now: Date, days: number) => new Date(now.getTime() - days * DAY_MS);

/** Every tenant's retention, defaults filled in; tenants whose deletion is due are the purge's (workspace-purge.ts). */
export async function tenantRetentions(sql: Sql): Promise<TenantRetention[]> {
  const rows = await sql.query<Record<string, string | number | null>>(
    `SELECT id, ${Object.values(RETENTION_COLUMNS).join(', ')} FROM tenants WHERE deletion_due_at IS NULL OR deletion_due_at > now()`,
  );
  return rows.map((r) => ({
    tenantId: r.id as string,
    ...(Object.fromEntries(RETENTION_KEYS.map((k) => [k, Number(r[RETENTION_COLUMNS[k]] ?? RETENTION_SETTINGS[k].days)])) as Retention),
  }));
}

/** One statement over up to `limit` rows; answers how many it removed or emptied. */
type Statement = (sql: Sql, limit: number) => Promise<number>;
/** A statement run in a transaction of its own. */
type Batch = (pool: pg.Pool, limit: number) => Promise<number>;

/** A statement on its own: it only takes rows no one else holds (SKIP LOCKED), so it never waits on them. */
const alone =
  (statement: Statement): Batch =>
  (pool, limit) =>
    statement(onPg(pool), limit);

/**
 * A statement after the tenant's lock, shared (docs/concurrency.md): deleting inbox rows empties their
 * signals' link to them, and rolling signals up writes rollups of the tenant's customers; holding the lock
 * as a transaction applying the tenant's events does, neither meets an attribution or an erasure halfway.
 */
const asApplier =
  (tenantId: string, statement: Statement): Batch =>
  (pool, limit) =>
    inTransaction(pool, async (sql) => {
      await lockTenants(sql, [{ tenantId, exclusive: false }]);
      return statement(sql, limit);
    });

/**
 * A batch over one tenant's oldest rows of a table: deletes up to `limit` rows whose `time` is before `before`
 * and that meet `where`, locked with SKIP LOCKED.
 */
const oldestRows =
  (spec: { table: string; time: string; where?: string }, tenantId: string, before: Date): Statement =>
  async (sql, limit) =>
    (
      await sql.query(
        `DELETE FROM ${spec.table} WHERE id IN (
           SELECT id FROM ${spec.table} WHERE tenant_id = $1 AND ${spec.time} < $2 ${spec.where ? `AND ${spec.where}` : ''}
           ORDER BY ${spec.time} LIMIT $3 FOR UPDATE SKIP LOCKED)
         RETURNING 1`,
        [tenantId, before, limit],
      )
    ).length;

/** One tenant's batch statement for a kind, or null when the kind is not per tenant. */
function tenantBatch(kind: RetentionKind, t: TenantRetention, now: Date, opts: RetentionOptions): Batch | null {
  const id = t.tenantId;
  switch (kind) {
    case 'inbound_bodies':
      // An event not yet processed keeps its body: processing needs it.
      return alone((sql, limit) => opts.emptyInboundBodies(sql, id, daysBefore(now, t.inboundBodies), limit));
    case 'inbound_events':
      return asApplier(
        id,
        oldestRows({ table: 'inbox_events', time: 'received_at', where: `status <> 'received'` }, id, daysBefore(now, t.signals)),
      );
    case 'signals': {
      const before = signalCutoff(now, t.signals);
      return asApplier(id, (sql, limit) => rollUpSignals(sql, id, before, limit));
    }
    case 'outbox_events':
      return alone(
        oldestRows(
          // Relayed: an event still to relay is the relay's, however old.
          {
            table: 'outbox_events',
            time: 'created_at',
            where: 'NOT EXISTS (SELECT 1 FROM outbox_pending p WHERE p.event_id = outbox_events.id)',
          },
          id,
          daysBefore(now, t.deliveries),
        ),
      );
    case 'deliveries':
      // Attempts (with the receivers' response excerpts) go with their delivery; at most eight each.
      return alone(
        oldestRows({ table: 'webhook_deliveries', time: 'updated_at', where: `status <> 'pending'` }, id, daysBefore(now, t.deliveries)),
      );
    case 'audit_events': {
      // The application's role cannot delete audit events; this function may, and only past a year.
      const before = daysBefore(now, t.auditEvents);
      return async (pool, limit) =>
        (await onPg(pool).query<{ n: number }>('SELECT audit_events_purge($1, $2, $3) AS n', [id, before, limit]))[0]!.n;
    }
    default:
      return null;
  }
}

/** A batch over the oldest rows of a table kept alike for every tenant; it has no id, so rows are named by ctid. */
const oldestGlobal =
  (table: string, time: string, before: Date): Batch =>
  async (pool, limit) =>
    (
      await onPg(pool).query(
        `DELETE FROM ${table} WHERE ctid = ANY(ARRAY(
           SELECT ctid FROM ${table} WHERE ${time} < $1 ORDER BY ${time} LIMIT $2 FOR UPDATE SKIP LOCKED))
         RETURNING 1`,
        [before, limit],
      )
    ).length;

/** Batch statements of the kinds kept alike for every tenant. */
function globalBatch(kind: RetentionKind, now: Date): Batch | null {
  if (kind === 'health_history') return oldestGlobal('health_history', 'day', daysBefore(now, FIXED_RETENTION.healthHistoryDays));
  // The explanations of the changes go with the history they explain.
  if (kind === 'health_changes') return oldestGlobal('health_changes', 'computed_at', daysBefore(now, FIXED_RETENTION.healthHistoryDays));
  if (kind === 'idempotency_keys')
    return oldestGlobal('idempotency_keys', 'created_at', daysBefore(now, FIXED_RETENTION.idempotencyKeyDays));
  // The figures' minutes beyond the longest window the API reads (a day), whichever endpoint they count.
  if (kind === 'delivery_figures')
    return oldestGlobal('webhook_endpoint_stats', 'minute', daysBefore(now, FIXED_RETENTION.deliveryFiguresDays));
  return null;
}

function shuffled<T>(items: T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

export interface RetentionReport {
  kind: RetentionKind;
  processed: number;
  behind: boolean;
}

/** One retention pass over every kind; each kind's outcome is recorded for /metrics. */
export async function runRetention(pool: pg.Pool, opts: RetentionOptions): Promise<RetentionReport[]> {
  const sql = onPg(pool);
  const now = opts.now?.() ?? new Date();
  const tenants = await tenantRetentions(sql);
  const reports: RetentionReport[] = [];
  for (const kind of RETENTION_KINDS) {
    const g = globalBatch(kind, now);
    // Tenants in a different order each pass, so a budget spent on one large tenant does not starve the rest.
    const batches = g ? [g] : shuffled(tenants).map((t) => tenantBatch(kind, t, now, opts)!);
    let budget = opts.maxBatches;
    let processed = 0;
    let behind = false;
    // Only a full batch spends the budget: a tenant with nothing (more) due costs one look.
    for (const batch of batches) {
      for (;;) {
        if (budget === 0) {
          behind = true;
          break;
        }
        const n = await batch(pool, opts.batchSize);
        processed += n;
        if (n < opts.batchSize) break;
        budget--;
      }
      if (behind) break;
    }
    await recordRun(sql, kind, processed, behind);
    reports.push({ kind, processed, behind });
  }
  return reports;
}

/** Records what one pass of a kind did, for /metrics (the retention_runs rows are written here only). */
export async function recordRun(sql: Sql, kind: string, processed: number, behind: boolean): Promise<void> {
  await sql.query(
    `INSERT INTO retention_runs (kind, last_run_at, processed, behind) VALUES ($1, now(), $2, $3)
     ON CONFLICT (kind) DO UPDATE SET last_run_at = now(), processed = retention_runs.processed + excluded.processed, behind = excluded.behind`,
    [kind, processed, behind],
  );
}
