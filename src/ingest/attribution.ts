import type { Sql } from '../db/sql.ts';

/**
 * Which customer an event is about (docs/decisions.md §4): first by the provider's own account id against the
 * customer's identities, then by the email domain in the payload against the customer's domain.
 */
export async function resolveCustomer(
  sql: Sql,
  tenantId: string,
  by: { provider: string; accountIds: (string | null | undefined)[]; emailDomain?: string | null },
): Promise<string | null> {
  const ids = by.accountIds.filter((x): x is string => typeof x === 'string' && x.length > 0);
  if (ids.length) {
    const [hit] = await sql.query<{ customer_id: string }>(
      'SELECT customer_id FROM customer_identities WHERE tenant_id = $1 AND provider = $2 AND external_id = ANY($3::text[]) LIMIT 1',
      [tenantId, by.provider, ids],
    );
    if (hit) return hit.customer_id;
  }
  if (by.emailDomain) {
    const [hit] = await sql.query<{ id: string }>(
      'SELECT id FROM customers WHERE tenant_id = $1 AND domain = $2 ORDER BY created_at LIMIT 1',
      [tenantId, by.emailDomain],
    );
    if (hit) return hit.id;
  }
  return null;
}

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
