import type { InvoiceStatus } from '../contract/enums.ts';
import type { Sql } from '../db/sql.ts';
import type { InvoiceRecord } from '../outbox/events/payloads.ts';
import { customerOf } from './customer-match.ts';

// The one module that writes `invoices`: the provider invoices we keep, moved through their states by
// inbound invoice events and the overdue pass. Callers hold the invoice's object lock first
// (docs/concurrency.md); each function here takes only row locks.

export interface InvoiceRow extends InvoiceRecord {
  total_minor: string;
  account_id: string | null;
}

const COLUMNS = 'id, tenant_id, status::text AS status, total_minor, currency, customer_id, account_id, due_at';

/** What an invoice event says of the invoice it names, enough to create our row for it. */
export interface InvoiceInput {
  tenantId: string;
  externalId: string;
  account: string | null;
  initial: InvoiceStatus;
  total: string;
  currency: string;
  dueAt: Date | null;
  emailDomain: string | null;
}

export type FoundInvoice = { invoice: InvoiceRow; created: boolean };

/**
 * Finds or creates our invoice for each input (which name different invoices), locked for this transaction,
 * without changing its status, in one statement; answers them in the inputs' order. A stored invoice is
 * locked by its row (a transaction changing it holds the row until it ends, and this one then reads what it
 * committed); a new one is created with its customer resolved in the same statement. Two transactions
 * creating the same invoice meet on its unique key: the later waits for the earlier to end, creates
 * nothing, and then finds its row.
 */
export async function findOrCreateInvoices(sql: Sql, provider: string, inputs: InvoiceInput[]): Promise<FoundInvoice[]> {
  const customer = customerOf({
    tenant: 'i.tenant_id',
    provider: '$10',
    accountIds: 'ARRAY[i.account_id]',
    emailDomain: 'i.email_domain',
  });
  const rows = await sql.query<InvoiceRow & { n: number; created: boolean }>(
    `WITH input AS (
       SELECT * FROM unnest($1::int[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::text[], $8::timestamptz[], $9::text[])
         AS i(n, tenant_id, external_id, account_id, status, total_minor, currency, due_at, email_domain)
     ), found AS (
       SELECT i.n, v.id, v.tenant_id, v.status::text AS status, v.total_minor, v.currency, v.customer_id, v.account_id, v.due_at
       FROM input i JOIN invoices v ON v.tenant_id = i.tenant_id AND v.provider = $10 AND v.external_id = i.external_id
       ORDER BY i.n FOR UPDATE OF v
     ), made AS (
       INSERT INTO invoices (id, tenant_id, provider, external_id, account_id, customer_id, status, total_minor, currency, due_at, created_at, updated_at)
       SELECT gen_random_uuid(), i.tenant_id, $10, i.external_id, i.account_id, ${customer}, i.status::"InvoiceStatus",
              i.total_minor, i.currency, i.due_at, now(), now()
       FROM input i WHERE NOT EXISTS (SELECT 1 FROM found f WHERE f.n = i.n) ORDER BY i.n
       ON CONFLICT (tenant_id, provider, external_id) DO NOTHING
       RETURNING external_id, ${COLUMNS}
     )
     SELECT *, false AS created FROM found
     UNION ALL
     SELECT i.n, m.id, m.tenant_id, m.status, m.total_minor, m.currency, m.customer_id, m.account_id, m.due_at, true AS created
     FROM made m JOIN input i ON i.tenant_id = m.tenant_id AND i.external_id = m.external_id`,
    [
      inputs.map((_, n) => n),
      inputs.map((r) => r.tenantId),
      inputs.map((r) => r.externalId),
      inputs.map((r) => r.account),
      inputs.map((r) => r.initial),
      inputs.map((r) => r.total),
      inputs.map((r) => r.currency),
      inputs.map((r) => r.dueAt),
      inputs.map((r) => r.emailDomain),
      provider,
    ],
  );
  const found: (FoundInvoice | undefined)[] = inputs.map(() => undefined);
  for (const { n, created, ...invoice } of rows) found[n] = { invoice, created };
  for (const [n, input] of inputs.entries()) {
    if (found[n]) continue;
    // Created meanwhile by a transaction that has committed since (it made this one wait): a new statement sees it.
    const [invoice] = await sql.query<InvoiceRow>(
      `SELECT ${COLUMNS} FROM invoices WHERE tenant_id = $1 AND provider = $2 AND external_id = $3 FOR UPDATE`,
      [input.tenantId, provider, input.externalId],
    );
    found[n] = { invoice: invoice!, created: false };
  }
  return found as FoundInvoice[];
}

/** An invoice written whole, with its past (the demo workspace's history, which no event brings). */
export async function insertInvoice(
  sql: Sql,
  r: {
    tenantId: string;
    customerId: string | null;
    provider: string;
    externalId: string;
    status: InvoiceStatus;
    total: bigint;
    currency: string;
    dueAt: Date | null;
    overdueAt: Date | null;
    createdAt: Date;
  },
): Promise<void> {
  await sql.query(
    `INSERT INTO invoices (id, tenant_id, customer_id, provider, external_id, status, total_minor, currency, due_at, overdue_at, created_at, updated_at)
     VALUES (gen_random_uuid(), $1, $2, $3, $4, $5::"InvoiceStatus", $6, $7, $8, $9, $10, now())`,
    [r.tenantId, r.customerId, r.provider, r.externalId, r.status, r.total.toString(), r.currency, r.dueAt, r.overdueAt, r.createdAt],
  );
}

/** Moves different invoices to their new statuses in one statement; answers each as it now is. */
export async function moveInvoices(
  sql: Sql,
  moves: { id: string; status: InvoiceStatus; total: string; dueAt: Date | null; at: Date }[],
): Promise<Map<string, InvoiceRow>> {
  if (moves.length === 0) return new Map();
  const rows = await sql.query<InvoiceRow>(
    `UPDATE invoices v SET status = u.status::"InvoiceStatus", total_minor = u.total_minor, due_at = COALESCE(u.due_at, v.due_at),
       paid_at = CASE WHEN u.status = 'paid' THEN u.at ELSE v.paid_at END,
       overdue_at = CASE WHEN u.status = 'overdue' THEN u.at ELSE v.overdue_at END, updated_at = now()
     FROM unnest($1::uuid[], $2::text[], $3::bigint[], $4::timestamptz[], $5::timestamptz[]) AS u(id, status, total_minor, due_at, at)
     WHERE v.id = u.id
     RETURNING v.id, v.tenant_id, v.status::text AS status, v.total_minor, v.currency, v.customer_id, v.account_id, v.due_at`,
    [moves.map((m) => m.id), moves.map((m) => m.status), moves.map((m) => m.total), moves.map((m) => m.dueAt), moves.map((m) => m.at)],
  );
  return new Map(rows.map((r) => [r.id, r]));
}

/** Our id of a provider's invoice, if we keep it. */
export async function invoiceIdOf(sql: Sql, tenantId: string, provider: string, externalId: string): Promise<string | null> {
  const [row] = await sql.query<{ id: string }>('SELECT id FROM invoices WHERE tenant_id = $1 AND provider = $2 AND external_id = $3', [
    tenantId,
    provider,
    externalId,
  ]);
  return row?.id ?? null;
}

/** Open or sent invoices past their due date, the oldest due first. */
export function invoicesPastDue(sql: Sql, now: Date, limit: number) {
  return sql.query<{ tenant_id: string; provider: string; external_id: string }>(
    `SELECT tenant_id, provider, external_id FROM invoices WHERE status IN ('open', 'sent') AND due_at < $1 ORDER BY due_at LIMIT $2`,
    [now, limit],
  );
}

/** Marks a tenant's invoices overdue that are still open or sent and past due; answers those it changed. */
export function markOverdue(sql: Sql, tenantId: string, invoices: { provider: string; external_id: string }[], now: Date) {
  return sql.query<InvoiceRow & { provider: string }>(
    `UPDATE invoices v SET status = 'overdue', overdue_at = $1, updated_at = $1
     FROM unnest($3::text[], $4::text[]) AS i(provider, external_id)
     WHERE v.tenant_id = $2 AND v.provider = i.provider AND v.external_id = i.external_id
       AND v.status IN ('open', 'sent') AND v.due_at < $1
     RETURNING v.id, v.tenant_id, v.status::text AS status, v.customer_id, v.account_id, v.total_minor, v.currency, v.due_at, v.provider`,
    [now, tenantId, invoices.map((i) => i.provider), invoices.map((i) => i.external_id)],
  );
}

/**
 * Gives a customer the invoices kept without one that its new identity names. `skipLocked` passes by the
 * rows a transaction applying events holds (attribution's first pass, docs/concurrency.md).
 */
export async function attributeInvoices(
  sql: Sql,
  to: { tenantId: string; customerId: string },
  identity: { provider: string; externalId: string },
  opts: { skipLocked: boolean },
): Promise<void> {
  await sql.query(
    `UPDATE invoices SET customer_id = $1 WHERE id IN (
       SELECT id FROM invoices WHERE tenant_id = $2 AND customer_id IS NULL AND provider = $3 AND account_id = $4
       ${opts.skipLocked ? 'FOR UPDATE SKIP LOCKED' : ''})`,
    [to.customerId, to.tenantId, identity.provider, identity.externalId],
  );
}

/**
 * Unlinks an erased customer's invoices: the revenue facts stay, without the customer or the provider's
 * account id. Answers the provider's ids of those invoices, whose remembered payments go too.
 */
export function detachInvoicesOf(sql: Sql, tenantId: string, customerId: string, accountIds: string[]) {
  return sql.query<{ provider: string; externalId: string }>(
    `UPDATE invoices SET customer_id = NULL, account_id = NULL
     WHERE tenant_id = $1 AND (customer_id = $2 OR account_id = ANY($3::text[]))
     RETURNING provider, external_id AS "externalId"`,
    [tenantId, customerId, accountIds],
  );
}
