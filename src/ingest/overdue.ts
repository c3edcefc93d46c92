import type pg from 'pg';
import { inTransaction, onPg } from '../db/sql.ts';
import { enqueueEvents } from '../outbox/events/enqueue.ts';
import { invoiceEvent } from '../outbox/events/payloads.ts';
import { invoicesPastDue, markOverdue } from '../services/invoices.ts';
import { recordSignals } from '../scoring/signals.ts';
import { lockObjects, lockTenants } from '../db/locks.ts';

const PER_TRANSACTION = 100;

/**
 * Marks open or sent invoices whose due date has passed as overdue, once, announcing invoice.overdue in
 * the same transaction. The pass changes invoices as an inbound invoice event does, so it takes the same
 * locks in the same order (docs/concurrency.md): per tenant, its lock shared, then its
 * invoices' object locks, then the rows, checked again. Several workers may run it: the second to lock
 * an invoice finds it overdue already.
 */
export async function markOverdueInvoices(pool: pg.Pool, now = new Date(), limit = 500): Promise<number> {
  const due = await invoicesPastDue(onPg(pool), now, limit);
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
      const rows = await markOverdue(sql, tenantId, invoices, now);
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
