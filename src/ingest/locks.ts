import type { Sql } from '../db/sql.ts';

/**
 * Serialises work on one provider object (a subscription, a customer account) across concurrent consumers
 * for the rest of the transaction; the lock is released at commit or rollback. Invoices are locked by their
 * rows instead (normalizers/stripe.ts invoiceRow).
 */
export async function lockObject(sql: Sql, ...parts: string[]): Promise<void> {
  await sql.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [parts.join(':')]);
}
