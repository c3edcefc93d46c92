import type { AlertStatus } from '../contract/enums.ts';
import type { RowOf } from '../contract/serialize.ts';
import { columnsOf } from '../db/columns.ts';
import type { Sql } from '../db/sql.ts';
import { EVENTS, type PayloadOf } from '../outbox/events/registry.ts';
import type { AlertType, Firing } from './alert-rules.ts';

// The one module that writes `alerts`. The system's side of their state machine (raise, follow the numbers,
// resolve when the condition clears) runs in the scorer's writing transaction, over many customers per
// statement, holding their rows (docs/concurrency.md, step 8); waking snoozed alerts passes by rows others
// hold; a user's transition (acknowledge, snooze, resolve, reopen) changes one alert.

/** An alert row as its events carry it (src/outbox/events/registry.ts), with who resolved it. */
export type AlertRow = RowOf<PayloadOf<'alert.created'>> & { resolvedBy: string | null };

export const ALERT_COLUMNS = `${columnsOf(EVENTS['alert.created'].payload)}, resolved_by AS "resolvedBy"`;

/** A user's transition of one alert. */
export interface AlertTransition {
  status: AlertStatus;
  snoozedUntil?: Date | null;
}

/** The SET list of a user's transition ($3 is the time of the change, $4 the wake-up time of a snooze). */
const SET: Record<AlertStatus, string> = {
  acknowledged: `status = 'acknowledged', acknowledged_at = $3, snoozed_until = NULL`,
  snoozed: `status = 'snoozed', snoozed_until = $4`,
  resolved: `status = 'resolved', resolved_at = $3, resolved_by = 'user', snoozed_until = NULL`,
  open: `status = 'open', resolved_at = NULL, resolved_by = NULL, acknowledged_at = NULL, snoozed_until = NULL`,
};

export async function alertStatus(sql: Sql, tenantId: string, id: string): Promise<AlertStatus | null> {
  const [row] = await sql.query<{ status: AlertStatus }>('SELECT status::text AS status FROM alerts WHERE id = $1 AND tenant_id = $2', [
    id,
    tenantId,
  ]);
  return row?.status ?? null;
}

/** A user's transition of one alert; answers it as it now is, or null when the tenant has no such alert. */
export async function transitionAlert(sql: Sql, tenantId: string, id: string, to: AlertTransition, now: Date): Promise<AlertRow | null> {
  const [row] = await sql.query<AlertRow>(
    `UPDATE alerts SET ${SET[to.status]}, updated_at = $3 WHERE id = $1 AND tenant_id = $2 RETURNING ${ALERT_COLUMNS}`,
    to.status === 'snoozed' ? [id, tenantId, now, to.snoozedUntil] : [id, tenantId, now],
  );
  return row ?? null;
}

/** What the scorer decided for a batch of customers' alerts. */
export interface AlertWrites {
  creates: { tenantId: string; customerId: string; alertType: AlertType; firing: Firing }[];
  updates: { id: string; firing: Firing }[];
  resolves: string[];
}

/**
 * Writes the scorer's decisions, one statement each: new alerts (a concurrent hand-made change wins, as the
 * partial unique index keeps one unresolved alert per type), the numbers of firing ones, and resolutions.
 * Answers the alerts created and resolved, for their events.
 */
export async function writeAlertChanges(sql: Sql, w: AlertWrites, now: Date): Promise<{ created: AlertRow[]; resolved: AlertRow[] }> {
  const created = w.creates.length
    ? await sql.query<AlertRow>(
        `INSERT INTO alerts (id, tenant_id, customer_id, alert_type, severity, status, title, message, details, created_at, updated_at)
         SELECT gen_random_uuid(), t.tenant_id, t.customer_id, t.alert_type::"AlertType", t.severity::"AlertSeverity", 'open', t.title,
           t.message, t.details, $8, $8
         FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], $7::jsonb[])
           AS t(tenant_id, customer_id, alert_type, severity, title, message, details)
         ON CONFLICT (customer_id, alert_type) WHERE status <> 'resolved' DO NOTHING
         RETURNING ${ALERT_COLUMNS}`,
        [
          w.creates.map((x) => x.tenantId),
          w.creates.map((x) => x.customerId),
          w.creates.map((x) => x.alertType),
          w.creates.map((x) => x.firing.severity),
          w.creates.map((x) => x.firing.title),
          w.creates.map((x) => x.firing.message),
          w.creates.map((x) => JSON.stringify(x.firing.details)),
          now,
        ],
      )
    : [];
  if (w.updates.length) {
    await sql.query(
      `UPDATE alerts a SET severity = t.severity::"AlertSeverity", title = t.title, message = t.message, details = t.details, updated_at = $6
       FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::jsonb[]) AS t(id, severity, title, message, details)
       WHERE a.id = t.id AND a.status <> 'resolved'`,
      [
        w.updates.map((u) => u.id),
        w.updates.map((u) => u.firing.severity),
        w.updates.map((u) => u.firing.title),
        w.updates.map((u) => u.firing.message),
        w.updates.map((u) => JSON.stringify(u.firing.details)),
        now,
      ],
    );
  }
  const resolved = w.resolves.length
    ? await sql.query<AlertRow>(
        `UPDATE alerts SET status = 'resolved', resolved_at = $2, resolved_by = 'system', snoozed_until = NULL, updated_at = $2
         WHERE id = ANY($1::uuid[]) AND status <> 'resolved' RETURNING ${ALERT_COLUMNS}`,
        [w.resolves, now],
      )
    : [];
  return { created, resolved };
}

/** Snoozed alerts whose time has come are open again; one the scorer is changing now is woken next time. */
export async function wakeSnoozedAlerts(sql: Sql): Promise<number> {
  const rows = await sql.query(
    `UPDATE alerts SET status = 'open', snoozed_until = NULL, updated_at = now()
     WHERE id IN (SELECT id FROM alerts WHERE status = 'snoozed' AND snoozed_until <= now() FOR UPDATE SKIP LOCKED)
     RETURNING id`,
  );
  return rows.length;
}
