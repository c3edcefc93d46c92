import type { Prisma } from '../generated/prisma/client.ts';

type Tx = Prisma.TransactionClient;

/**
 * Which customer an event is about (DECISIONS §4): first by the provider's own account id against the
 * customer's identities, then by the email domain in the payload against the customer's domain.
 */
export async function resolveCustomer(
  tx: Tx,
  tenantId: string,
  by: { provider: string; accountIds: (string | null | undefined)[]; emailDomain?: string | null },
): Promise<string | null> {
  const ids = by.accountIds.filter((x): x is string => typeof x === 'string' && x.length > 0);
  if (ids.length) {
    const identity = await tx.customerIdentity.findFirst({
      where: { tenantId, provider: by.provider, externalId: { in: ids } },
      select: { customerId: true },
    });
    if (identity) return identity.customerId;
  }
  if (by.emailDomain) {
    const c = await tx.customer.findFirst({
      where: { tenantId, domain: by.emailDomain },
      orderBy: { createdAt: 'asc' },
      select: { id: true },
    });
    if (c) return c.id;
  }
  return null;
}

/**
 * Events kept without a customer are attributed once the matching identity or domain is added:
 * signals, invoices and subscriptions alike. Runs in the caller's transaction.
 */
export async function attributePending(
  tx: Tx,
  tenantId: string,
  customerId: string,
  by: { identities: { provider: string; externalId: string }[]; domain?: string | null },
): Promise<number> {
  let moved = 0;
  for (const { provider, externalId } of by.identities) {
    moved += (
      await tx.signal.updateMany({
        where: { tenantId, customerId: null, source: provider, OR: [{ accountId: externalId }, { altAccountId: externalId }] },
        data: { customerId },
      })
    ).count;
    moved += (await tx.invoice.updateMany({ where: { tenantId, customerId: null, provider, accountId: externalId }, data: { customerId } }))
      .count;
    moved += (
      await tx.subscription.updateMany({ where: { tenantId, customerId: null, provider, accountId: externalId }, data: { customerId } })
    ).count;
  }
  if (by.domain) {
    moved += (await tx.signal.updateMany({ where: { tenantId, customerId: null, emailDomain: by.domain }, data: { customerId } })).count;
  }
  return moved;
}
