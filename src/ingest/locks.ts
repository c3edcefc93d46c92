import type { Prisma } from '../generated/prisma/client.ts';

/**
 * Serialises work on one provider object (an invoice, a subscription, a customer account) across
 * concurrent consumers for the rest of the transaction; the lock is released at commit or rollback.
 */
export async function lockObject(tx: Prisma.TransactionClient, ...parts: string[]): Promise<void> {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${parts.join(':')}, 0))`;
}
