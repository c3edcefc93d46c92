import type { Sql } from '../db/sql.ts';

/**
 * Events kept without a customer are attributed once the matching identity or domain is added:
 * signals, invoices and subscriptions alike. Runs in the caller's transaction.
 */
export async function attributePending(
  sql: Sql,
  tenantId: string,
  customerId: string,
  by: { identities: { provider: string; externalId: string }[]; domain?: string | null },
): Promise<void> {
  for (const { provider, externalId } of by.identities) {
    await sql.query(
      `UPDATE signals SET customer_id = $1
       WHERE tenant_id = $2 AND customer_id IS NULL AND source = $3 AND (account_id = $4 OR alt_account_id = $4)`,
      [customerId, tenantId, provider, externalId],
    );
    for (const table of ['invoices', 'subscriptions']) {
      await sql.query(
        `UPDATE ${table} SET customer_id = $1 WHERE tenant_id = $2 AND customer_id IS NULL AND provider = $3 AND account_id = $4`,
        [customerId, tenantId, provider, externalId],
      );
    }
  }
  if (by.domain) {
    await sql.query('UPDATE signals SET customer_id = $1 WHERE tenant_id = $2 AND customer_id IS NULL AND email_domain = $3', [
      customerId,
      tenantId,
      by.domain,
    ]);
  }
}
