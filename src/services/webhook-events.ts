import type pg from 'pg';
import { parseSequenceSubject, type SequenceSubject } from '../contract/sequence-subject.ts';
import type { Prisma } from '../generated/prisma/client.ts';
import { onPg } from '../db/sql.ts';
import { validationFailed } from '../errors.ts';
import { sequenceBounds, type SequenceBounds } from '../outbox/events/sequences.ts';

/** The highest number an event can carry (the column is an int). */
const MAX_SEQUENCE = 2_147_483_647;

/**
 * The catch-up read of outbound events (docs/receiving-webhooks.md, "Catching up"): a subject's events after
 * a number, in number order, tenant by tenant. The outbox owns the tables; this checks what a reader asks
 * and says where the subject's numbering stands.
 */
export function createWebhookEventService(deps: { pool: pg.Pool }) {
  const sql = onPg(deps.pool);
  return {
    /** The reader's subject and starting number, checked: a bad one is a validation error that reads nothing. */
    parse(input: { subject: string; afterSequence?: number | null }): { subject: SequenceSubject; afterSequence: number } {
      const subject = parseSequenceSubject(input.subject);
      const after = input.afterSequence ?? 0;
      const errors = [
        ...(subject ? [] : [{ path: 'subject', message: 'must be a sequence subject such as customer:<uuid> or invoice:<uuid>' }]),
        ...(Number.isInteger(after) && after >= 0 && after <= MAX_SEQUENCE
          ? []
          : [{ path: 'afterSequence', message: `must be an integer from 0 to ${MAX_SEQUENCE}` }]),
      ];
      if (errors.length) throw validationFailed(errors);
      return { subject: subject!, afterSequence: after };
    },
    /** The events the read returns, as a Prisma condition for the GraphQL connection's planned read. */
    where(tenantId: string, subject: SequenceSubject, afterSequence: number): Prisma.OutboxEventWhereInput {
      return { tenantId, sequenceSubject: subject, sequence: { gt: afterSequence } };
    },
    bounds: (tenantId: string, subject: SequenceSubject): Promise<SequenceBounds> => sequenceBounds(sql, tenantId, subject),
  };
}

export type WebhookEventService = ReturnType<typeof createWebhookEventService>;
