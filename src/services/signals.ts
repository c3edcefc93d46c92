import type { Sql } from '../db/sql.ts';

export interface SignalInput {
  tenantId: string;
  customerId: string | null;
  inboxEventId?: string | null;
  source: string;
  kind: string;
  occurredAt: Date;
  value?: number;
  sentiment?: number | null;
  accountId?: string | null;
  altAccountId?: string | null;
  emailDomain?: string | null;
  attributes?: Record<string, unknown>;
}

/** Records observations about customers, the inputs of health scoring, in one statement. */
export async function recordSignals(sql: Sql, signals: SignalInput[]): Promise<void> {
  if (signals.length === 0) return;
  const col = <K extends keyof SignalInput>(k: K, d: unknown = null) => signals.map((s) => s[k] ?? d);
  await sql.query(
    `INSERT INTO signals (id, tenant_id, customer_id, inbox_event_id, source, kind, occurred_at, value, sentiment, account_id, alt_account_id, email_domain, attributes)
     SELECT gen_random_uuid(), * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::timestamptz[], $7::float8[], $8::float8[], $9::text[], $10::text[], $11::text[], $12::jsonb[])`,
    [
      col('tenantId'),
      col('customerId'),
      col('inboxEventId'),
      col('source'),
      col('kind'),
      col('occurredAt'),
      col('value', 1),
      col('sentiment'),
      col('accountId'),
      col('altAccountId'),
      col('emailDomain'),
      signals.map((s) => JSON.stringify(s.attributes ?? {})),
    ],
  );
}

/**
 * Gives a customer the signals kept without one that match its new identity (by account) or domain.
 * `skipLocked` passes by the rows a transaction applying events holds (attribution's first pass,
 * docs/concurrency.md).
 */
export async function attributeSignals(
  sql: Sql,
  to: { tenantId: string; customerId: string },
  match: { identity: { provider: string; externalId: string } } | { domain: string },
  opts: { skipLocked: boolean },
): Promise<void> {
  const [where, values] =
    'domain' in match
      ? ['email_domain = $3', [match.domain]]
      : ['source = $3 AND (account_id = $4 OR alt_account_id = $4)', [match.identity.provider, match.identity.externalId]];
  await sql.query(
    `UPDATE signals SET customer_id = $1 WHERE id IN (
       SELECT id FROM signals WHERE tenant_id = $2 AND customer_id IS NULL AND ${where} ${opts.skipLocked ? 'FOR UPDATE SKIP LOCKED' : ''})`,
    [to.customerId, to.tenantId, ...values],
  );
}

/** Deletes an erased customer's signals, and those kept without a customer that would be attributed to it. */
export function eraseSignalsOf(sql: Sql, tenantId: string, of: { customerId: string; accountIds: string[]; domain: string | null }) {
  return sql.query<{ id: string }>(
    `DELETE FROM signals WHERE tenant_id = $1
       AND (customer_id = $2
            OR (customer_id IS NULL AND (account_id = ANY($3::text[]) OR alt_account_id = ANY($3::text[])
                                         OR (email_domain IS NOT NULL AND email_domain = $4))))
     RETURNING id`,
    [tenantId, of.customerId, of.accountIds, of.domain],
  );
}
