import type pg from 'pg';
import { inTransaction, onPg, type Sql } from '../db/sql.ts';
import { DomainError, notFound, validationFailed } from '../errors.ts';
import type { AlertStatus } from '../contract/enums.ts';
import type { RowOf } from '../contract/serialize.ts';
import { columnsOf } from '../db/columns.ts';
import { enqueueEvents } from '../outbox/events/enqueue.ts';
import { alertEvent } from '../outbox/events/payloads.ts';
import { EVENTS, type PayloadOf } from '../outbox/events/registry.ts';
import { PG, pgCode } from '../db/pg-errors.ts';

export type { AlertStatus };

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

/** An alert row as its events carry it (src/outbox/events/registry.ts), fields as the domain names them. */
type AlertRow = RowOf<PayloadOf<'alert.created'>>;
const COLUMNS = columnsOf(EVENTS['alert.created'].payload);

/** The alerts table's statements for a user's transition; they run in the caller's transaction. */
export const alertRows = {
  async status(sql: Sql, tenantId: string, id: string): Promise<AlertStatus | null> {
    const [row] = await sql.query<{ status: AlertStatus }>('SELECT status::text AS status FROM alerts WHERE id = $1 AND tenant_id = $2', [
      id,
      tenantId,
    ]);
    return row?.status ?? null;
  },
  async transition(sql: Sql, tenantId: string, id: string, to: AlertTransition, now: Date): Promise<AlertRow | null> {
    const [row] = await sql.query<AlertRow>(
      `UPDATE alerts SET ${SET[to.status]}, updated_at = $3 WHERE id = $1 AND tenant_id = $2 RETURNING ${COLUMNS}`,
      to.status === 'snoozed' ? [id, tenantId, now, to.snoozedUntil] : [id, tenantId, now],
    );
    return row ?? null;
  },
};

function checkTransition(to: AlertTransition, now: Date) {
  if (to.status === 'snoozed') {
    if (!to.snoozedUntil) throw validationFailed([{ path: 'snoozed_until', message: 'is required when status is snoozed' }]);
    if (to.snoozedUntil <= now) throw validationFailed([{ path: 'snoozed_until', message: 'must be in the future' }]);
  } else if (to.snoozedUntil) {
    throw validationFailed([{ path: 'snoozed_until', message: 'is only allowed when status is snoozed' }]);
  }
}

/**
 * The user's side of the alert state machine: acknowledge, snooze until a time, resolve, reopen. Plain SQL, as
 * the scoring passes write the same table. The system's side (raise, follow the numbers, resolve when the
 * condition clears, wake snoozed alerts) is the scoring pipeline's set-based SQL (src/scoring/recompute.ts,
 * src/scoring/scoring-queue.ts), batched over many customers per statement.
 */
export function createAlertService(deps: { pool: pg.Pool }) {
  const { pool } = deps;
  return {
    async transition(tenantId: string, id: string, to: AlertTransition): Promise<void> {
      const now = new Date();
      checkTransition(to, now);
      const current = await alertRows.status(onPg(pool), tenantId, id);
      if (!current) throw notFound(`Alert ${id}`);
      if (current === to.status && to.status !== 'snoozed') return;
      try {
        // The resolution and its alert.resolved event commit together.
        await inTransaction(pool, async (sql) => {
          const a = await alertRows.transition(sql, tenantId, id, to, now);
          if (!a) throw notFound(`Alert ${id}`);
          if (a.status === 'resolved') await enqueueEvents(sql, [alertEvent('alert.resolved', a)]);
        });
      } catch (e) {
        // Reopening collides with a newer unresolved alert of the same type for the customer.
        if (pgCode(e) === PG.uniqueViolation) {
          throw new DomainError('conflict', 'The customer already has an unresolved alert of this type.');
        }
        throw e;
      }
    },
  };
}

export type AlertService = ReturnType<typeof createAlertService>;
