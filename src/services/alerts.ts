import type pg from 'pg';
import { inTransaction, onPg } from '../db/sql.ts';
import { DomainError, notFound, validationFailed } from '../errors.ts';
import type { AlertStatus } from '../contract/enums.ts';
import { enqueueEvents } from '../outbox/events/enqueue.ts';
import { alertEvent } from '../outbox/events/payloads.ts';
import { alertStatus, type AlertTransition, transitionAlert } from '../scoring/alert-rows.ts';
import { PG, pgCode } from '../db/pg-errors.ts';

export type { AlertStatus, AlertTransition };

function checkTransition(to: AlertTransition, now: Date) {
  if (to.status === 'snoozed') {
    if (!to.snoozedUntil) throw validationFailed([{ path: 'snoozed_until', message: 'is required when status is snoozed' }]);
    if (to.snoozedUntil <= now) throw validationFailed([{ path: 'snoozed_until', message: 'must be in the future' }]);
  } else if (to.snoozedUntil) {
    throw validationFailed([{ path: 'snoozed_until', message: 'is only allowed when status is snoozed' }]);
  }
}

/**
 * The user's side of the alert state machine: acknowledge, snooze until a time, resolve, reopen. The table's
 * statements, the system's side of the machine among them, are its owner's (src/scoring/alert-rows.ts).
 */
export function createAlertService(deps: { pool: pg.Pool }) {
  const { pool } = deps;
  return {
    async transition(tenantId: string, id: string, to: AlertTransition): Promise<void> {
      const now = new Date();
      checkTransition(to, now);
      const current = await alertStatus(onPg(pool), tenantId, id);
      if (!current) throw notFound(`Alert ${id}`);
      if (current === to.status && to.status !== 'snoozed') return;
      try {
        // The resolution and its alert.resolved event commit together.
        await inTransaction(pool, async (sql) => {
          const a = await transitionAlert(sql, tenantId, id, to, now);
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
