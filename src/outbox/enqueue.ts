import type { Prisma } from '../generated/prisma/client.ts';

export interface OutboxInput {
  tenantId: string;
  type: string;
  subject?: string | null;
  payload: Record<string, unknown>;
  /** Writing the same event twice (a redelivered message, a retried job) stays one event. */
  dedupKey: string;
}

/**
 * Writes events for the tenant's endpoints in the caller's transaction, so an event exists exactly when
 * the change it describes was committed. The relay delivers them (src/outbox).
 */
export async function enqueueEvents(tx: Prisma.TransactionClient, events: OutboxInput[]): Promise<void> {
  if (events.length === 0) return;
  await tx.outboxEvent.createMany({
    data: events.map((e) => ({
      tenantId: e.tenantId,
      type: e.type,
      subject: e.subject ?? null,
      payload: e.payload as Prisma.InputJsonValue,
      dedupKey: e.dedupKey,
    })),
    skipDuplicates: true,
  });
}
