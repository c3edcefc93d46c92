import type { Prisma } from '../generated/prisma/client.ts';

export interface SignalInput {
  tenantId: string;
  customerId: string | null;
  inboxEventId?: string | null;
  source: string;
  kind: string;
  occurredAt: Date;
  value?: number;
  sentiment?: number | null;
  accountId?: string | null;
  altAccountId?: string | null;
  emailDomain?: string | null;
  attributes?: Record<string, unknown>;
}

/** Records observations about customers: the inputs of health scoring. */
export async function recordSignals(tx: Prisma.TransactionClient, signals: SignalInput[]): Promise<void> {
  if (signals.length === 0) return;
  await tx.signal.createMany({
    data: signals.map((s) => ({
      tenantId: s.tenantId,
      customerId: s.customerId,
      inboxEventId: s.inboxEventId ?? null,
      source: s.source,
      kind: s.kind,
      occurredAt: s.occurredAt,
      value: s.value ?? 1,
      sentiment: s.sentiment ?? null,
      accountId: s.accountId ?? null,
      altAccountId: s.altAccountId ?? null,
      emailDomain: s.emailDomain ?? null,
      attributes: (s.attributes ?? {}) as Prisma.InputJsonValue,
    })),
  });
}
