import type { Sql } from '../db/sql.ts';

/** Advisory lock space of the attribution lock (lockAttribution); other spaces: the inbox's accept locks. */
export const ATTRIBUTION_LOCK_SPACE = 0x63687361;

/**
 * Orders attribution within a tenant. A transaction that applies inbound events holds its tenant's
 * attribution lock shared from before it looks a customer up until it commits; one that may give a customer
 * an identity as it goes (a Stripe customer.* event) holds it exclusively. Without it, an event applied
 * beside the transaction creating its customer would not see the customer yet, and that transaction would
 * not see the event's rows kept without a customer: they would stay unattributed for good. Taken before any
 * other lock of the transaction, tenants in order, so it cannot deadlock with them.
 */
export async function lockAttribution(sql: Sql, tenants: { tenantId: string; exclusive: boolean }[]): Promise<void> {
  if (tenants.length === 0) return;
  const sorted = [...tenants].sort((a, b) => (a.tenantId < b.tenantId ? -1 : a.tenantId > b.tenantId ? 1 : 0));
  await sql.query(
    `SELECT CASE WHEN t.exclusive THEN pg_advisory_xact_lock($1::int, hashtext(t.tenant))::text
                 ELSE pg_advisory_xact_lock_shared($1::int, hashtext(t.tenant))::text END
     FROM unnest($2::text[], $3::bool[]) WITH ORDINALITY AS t(tenant, exclusive, n) ORDER BY t.n`,
    [ATTRIBUTION_LOCK_SPACE, sorted.map((t) => t.tenantId), sorted.map((t) => t.exclusive)],
  );
}
