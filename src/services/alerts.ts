import { onPrisma } from '../db/sql.ts';
import type { Db } from '../db/prisma.ts';
import { DomainError, notFound, validationFailed } from '../errors.ts';
import { enqueueEvents } from '../outbox/enqueue.ts';
import { alertEvent } from '../outbox/payloads.ts';

export type AlertStatus = 'open' | 'acknowledged' | 'snoozed' | 'resolved';

export interface AlertTransition {
  status: AlertStatus;
  snoozedUntil?: Date | null;
}

/** The columns a user's transition sets; snoozing again moves the wake-up time, the other repeats change nothing. */
function transition(to: AlertTransition, now: Date) {
  switch (to.status) {
    case 'acknowledged':
      return { status: 'acknowledged' as const, acknowledgedAt: now, snoozedUntil: null };
    case 'snoozed':
      return { status: 'snoozed' as const, snoozedUntil: to.snoozedUntil! };
    case 'resolved':
      return { status: 'resolved' as const, resolvedAt: now, resolvedBy: 'user', snoozedUntil: null };
    case 'open':
      return { status: 'open' as const, resolvedAt: null, resolvedBy: null, acknowledgedAt: null, snoozedUntil: null };
  }
}

function checkTransition(to: AlertTransition, now: Date) {
  if (to.status === 'snoozed') {
    if (!to.snoozedUntil) throw validationFailed([{ path: 'snoozed_until', message: 'is required when status is snoozed' }]);
    if (to.snoozedUntil <= now) throw validationFailed([{ path: 'snoozed_until', message: 'must be in the future' }]);
  } else if (to.snoozedUntil) {
    throw validationFailed([{ path: 'snoozed_until', message: 'is only allowed when status is snoozed' }]);
  }
}

/**
 * The user's side of the alert state machine: acknowledge, snooze until a time, resolve, reopen. Prisma: only
 * the API makes these transitions, one alert at a time. The system's side (raise, follow the numbers,
 * resolve when the condition clears, wake snoozed alerts) is the scoring pipeline's set-based SQL
 * (src/scoring/recompute.ts, src/scoring/scoring-queue.ts), batched over many customers per statement.
 */
export function createAlertService(deps: { prisma: Db }) {
  const { prisma } = deps;
  return {
    async transition(tenantId: string, id: string, to: AlertTransition): Promise<void> {
      const now = new Date();
      checkTransition(to, now);
      const current = await prisma.alert.findFirst({ where: { id, tenantId }, select: { status: true } });
      if (!current) throw notFound(`Alert ${id}`);
      if (current.status === to.status && to.status !== 'snoozed') return;
      try {
        // The resolution and its alert.resolved event commit together.
        await prisma.$transaction(async (tx) => {
          const a = await tx.alert.update({ where: { id }, data: transition(to, now) });
          if (a.status === 'resolved') await enqueueEvents(onPrisma(tx), [alertEvent('alert.resolved', a)]);
        });
      } catch (e) {
        // Reopening collides with a newer unresolved alert of the same type for the customer.
        if ((e as { code?: string })?.code === 'P2002') {
          throw new DomainError('conflict', 'The customer already has an unresolved alert of this type.');
        }
        throw e;
      }
    },
  };
}

export type AlertService = ReturnType<typeof createAlertService>;
