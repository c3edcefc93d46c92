import type pg from 'pg';
import { inTransaction } from '../db/sql.ts';
import { enqueueEvents } from '../outbox/events/enqueue.ts';
import { invoiceEvent, type InvoiceRecord } from '../outbox/events/payloads.ts';
import { recordSignals } from '../services/signals.ts';

interface Row extends InvoiceRecord {
  total_minor: string;
  account_id: string | null;
  provider: string;
}

/**
 * Marks open or sent invoices whose due date has passed as overdue, once, announcing
 * invoice.overdue in the same transaction. Claimed with SKIP LOCKED, so several workers may run it.
 */
export async function markOverdueInvoices(pool: pg.Pool, now = new Date(), limit = 500): Promise<number> {
  return inTransaction(pool, async (sql) => {
    const rows = await sql.query<Row>(
      `UPDATE invoices SET status = 'overdue', overdue_at = $1, updated_at = $1
       WHERE id IN (
         SELECT id FROM invoices WHERE status IN ('open', 'sent') AND due_at < $1
         ORDER BY due_at LIMIT $2 FOR UPDATE SKIP LOCKED)
       RETURNING id, tenant_id, status::text AS status, customer_id, account_id, total_minor, currency, due_at, provider`,
      [now, limit],
    );
    await enqueueEvents(
      sql,
      rows.map((r) => invoiceEvent('invoice.overdue', r)),
    );
    await recordSignals(
      sql,
      rows.map((r) => ({
        tenantId: r.tenant_id,
        customerId: r.customer_id,
        source: r.provider,
        kind: 'billing.invoice_overdue',
        occurredAt: now,
        value: Number(r.total_minor),
        accountId: r.account_id,
        attributes: { invoice_id: r.id, currency: r.currency, reason: 'due_date_passed' },
      })),
    );
    return rows.length;
  });
}
