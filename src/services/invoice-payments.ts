import type { Sql } from '../db/sql.ts';

// The one module that reads and writes `invoice_payments`: which provider invoice each payment (a Stripe
// PaymentIntent `pi_…` or Charge `ch_…`) belongs to, remembered from the events that say so.

/** A payment and the invoice it belongs to, for events that name only the payment. */
export interface PaymentOfInvoice {
  tenantId: string;
  invoiceExternalId: string;
  paymentId: string;
}

/**
 * Remembers which invoice each payment belongs to, in one statement; the first invoice to name a payment
 * keeps it. Inserted in payment order: a payment two invoices name may be written by two transactions at
 * once (each holding only its own invoice's lock), and they then meet on its key in the same order.
 */
export async function rememberPayments(sql: Sql, provider: string, payments: PaymentOfInvoice[]): Promise<void> {
  const seen = new Set<string>();
  const first = payments
    .filter((p) => !seen.has(`${p.tenantId}:${p.paymentId}`) && seen.add(`${p.tenantId}:${p.paymentId}`))
    .sort((a, b) => (a.tenantId + a.paymentId < b.tenantId + b.paymentId ? -1 : 1));
  if (first.length === 0) return;
  await sql.query(
    `INSERT INTO invoice_payments (id, tenant_id, provider, payment_id, invoice_external_id)
     SELECT gen_random_uuid(), t, $1, p, i FROM unnest($2::uuid[], $3::text[], $4::text[]) AS r(t, p, i)
     ON CONFLICT (tenant_id, provider, payment_id) DO NOTHING`,
    [provider, first.map((p) => p.tenantId), first.map((p) => p.paymentId), first.map((p) => p.invoiceExternalId)],
  );
}

/** The invoice the first of these payments that is remembered belongs to. */
export async function invoiceOfPayment(sql: Sql, tenantId: string, provider: string, paymentIds: string[]): Promise<string | null> {
  if (paymentIds.length === 0) return null;
  const [row] = await sql.query<{ invoice_external_id: string }>(
    `SELECT invoice_external_id FROM invoice_payments WHERE tenant_id = $1 AND provider = $2 AND payment_id = ANY($3::text[])
     ORDER BY array_position($3::text[], payment_id) LIMIT 1`,
    [tenantId, provider, paymentIds],
  );
  return row?.invoice_external_id ?? null;
}

/** The newest payment remembered for an invoice. */
export async function latestPaymentOf(sql: Sql, tenantId: string, provider: string, invoiceExternalId: string): Promise<string | null> {
  const [row] = await sql.query<{ payment_id: string }>(
    `SELECT payment_id FROM invoice_payments WHERE tenant_id = $1 AND provider = $2 AND invoice_external_id = $3
     ORDER BY created_at DESC, payment_id DESC LIMIT 1`,
    [tenantId, provider, invoiceExternalId],
  );
  return row?.payment_id ?? null;
}

/**
 * Forgets every payment remembered for these invoices (a customer's, on erasure): a payment id is the
 * provider's reference to the person's payment. The caller holds the tenant's lock exclusively
 * (docs/concurrency.md), so the rows are deleted in whatever order the statement meets them.
 */
export async function forgetPaymentsOf(sql: Sql, tenantId: string, invoices: { provider: string; externalId: string }[]): Promise<number> {
  if (invoices.length === 0) return 0;
  const rows = await sql.query<{ id: string }>(
    `DELETE FROM invoice_payments p USING unnest($2::text[], $3::text[]) AS i(provider, external_id)
     WHERE p.tenant_id = $1 AND p.provider = i.provider AND p.invoice_external_id = i.external_id
     RETURNING p.id`,
    [tenantId, invoices.map((i) => i.provider), invoices.map((i) => i.externalId)],
  );
  return rows.length;
}
