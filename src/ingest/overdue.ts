import type pg from 'pg';
import { inTransaction, onPg } from '../db/sql.ts';
import { enqueueEvents } from '../outbox/events/enqueue.ts';
import { invoiceEvent, type InvoiceRecord } from '../outbox/events/payloads.ts';
import { recordSignals } from '../services/signals.ts';
import { lockObjects, lockTenants } from '../db/locks.ts';

const PER_TRANSACTION = 100;

interface Row extends InvoiceRecord {
  total_minor: string;
  account_id: string | null;
  provider: string;
}

/**
 * Marks open or sent invoices whose due date has passed as overdue, once, announcing invoice.overdue in
 * the same transaction. The pass changes invoices as an inbound invoice event does, so it takes the same
 * locks in the same order (docs/concurrency.md): per tenant, its lock shared, then its
 * invoices' object locks, then the rows, checked again. Several workers may run it: the second to lock
 * an invoice finds it overdue already.
 */
export async function markOverdueInvoices(pool: pg.Pool, now = new Date(), limit = 500): Promise<number> {
  const due = await onPg(pool).query<{ tenant_id: string; provider: string; external_id: string }>(
    `SELECT tenant_id, provider, external_id FROM invoices WHERE status IN ('open', 'sent') AND due_at < $1 ORDER BY due_at LIMIT $2`,
    [now, limit],
  );
  // One transaction per tenant and up to a hundred invoices: each invoice is one lock held to its end.
  type Chunk = { tenantId: string; invoices: { provider: string; external_id: string }[] };
  const chunks: Chunk[] = [];
  const filling = new Map<string, Chunk>();
  for (const r of due) {
    let chunk = filling.get(r.tenant_id);
    if (!chunk || chunk.invoices.length >= PER_TRANSACTION) {
      chunk = { tenantId: r.tenant_id, invoices: [] };
      filling.set(r.tenant_id, chunk);
      chunks.push(chunk);
    }
    chunk.invoices.push(r);
  }
  let marked = 0;
  for (const { tenantId, invoices } of chunks) {
    marked += await inTransaction(pool, async (sql) => {
      await lockTenants(sql, [{ tenantId, exclusive: false }]);
      await lockObjects(
        sql,
        invoices.map((i) => `${tenantId}:${i.provider}:${i.external_id}`),
      );
      const rows = await sql.query<Row>(
        `UPDATE invoices v SET status = 'overdue', overdue_at = $1, updated_at = $1
         FROM unnest($3::text[], $4::text[]) AS i(provider, external_id)
         WHERE v.tenant_id = $2 AND v.provider = i.provider AND v.external_id = i.external_id
           AND v.status IN ('open', 'sent') AND v.due_at < $1
         RETURNING v.id, v.tenant_id, v.status::text AS status, v.customer_id, v.account_id, v.total_minor, v.currency, v.due_at, v.provider`,
        [now, tenantId, invoices.map((i) => i.provider), invoices.map((i) => i.external_id)],
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
      // Last: the outbox's sequence counters are the last lock a transaction takes (docs/concurrency.md).
      await enqueueEvents(
        sql,
        rows.map((r) => invoiceEvent('invoice.overdue', r)),
      );
      return rows.length;
    });
  }
  return marked;
}
