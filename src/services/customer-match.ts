import type { Sql } from '../db/sql.ts';

// Which customer an event is about, as an SQL expression (for a statement that writes what it finds in
// the same round trip) or as a read of its own. Reads only: customers and their identities are written by
// src/services/customers.ts.

/**
 * Which customer an event is about (docs/decisions.md §4), as an SQL expression over four parameters of the
 * statement it is part of: first by the provider's own account ids (a text[]) against the customer's
 * identities, then by the email domain in the payload against the customer's domain; null for neither.
 * A statement that writes what it finds (an invoice) resolves its customer itself, in the same round trip.
 */
export function customerOf(p: { tenant: string; provider: string; accountIds: string; emailDomain: string }): string {
  return `COALESCE(
    (SELECT customer_id FROM customer_identities WHERE tenant_id = ${p.tenant} AND provider = ${p.provider} AND external_id = ANY(${p.accountIds}) LIMIT 1),
    (SELECT id FROM customers WHERE tenant_id = ${p.tenant} AND domain = ${p.emailDomain} ORDER BY created_at LIMIT 1))`;
}

/** The account ids of a lookup that can match, for customerOf's text[] parameter. */
const accountIdsOf = (ids: (string | null | undefined)[]) => ids.filter((x): x is string => typeof x === 'string' && x.length > 0);

/** Which customer an event is about (customerOf), in one statement. */
export async function resolveCustomer(
  sql: Sql,
  tenantId: string,
  by: { provider: string; accountIds: (string | null | undefined)[]; emailDomain?: string | null },
): Promise<string | null> {
  const [row] = await sql.query<{ customer_id: string | null }>(
    `SELECT ${customerOf({ tenant: '$1::uuid', provider: '$2', accountIds: '$3::text[]', emailDomain: '$4' })} AS customer_id`,
    [tenantId, by.provider, accountIdsOf(by.accountIds), by.emailDomain ?? null],
  );
  return row?.customer_id ?? null;
}
