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
