import type { SignalKind } from './signal-kinds.ts';
import type { Sql } from '../db/sql.ts';

// The one module that writes `signals`, the observations health scoring reads, and `signal_rollups`, what
// retention keeps of old ones (signal-rollups.ts says how the features read both).

export interface SignalInput {
  tenantId: string;
  customerId: string | null;
  inboxEventId?: string | null;
  source: string;
  kind: SignalKind;
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

/**
 * Rolls up and deletes a bounded batch of one tenant's signals older than `before`, oldest first, in one
 * statement. Signals without a customer are deleted: nothing scores them. Rows another worker holds are skipped.
 */
export async function rollUpSignals(sql: Sql, tenantId: string, before: Date, limit: number): Promise<number> {
  const [r] = await sql.query<{ removed: number }>(
    `WITH picked AS (
       SELECT id FROM signals WHERE tenant_id = $1 AND occurred_at < $2 ORDER BY occurred_at LIMIT $3 FOR UPDATE SKIP LOCKED
     ), gone AS (
       DELETE FROM signals s USING picked WHERE s.id = picked.id
       RETURNING s.tenant_id, s.customer_id, s.source, s.kind, s.occurred_at, s.value, s.sentiment, s.attributes, s.created_at
     ), keyed AS (
       SELECT tenant_id, customer_id, source, kind, value, occurred_at, sentiment, created_at,
         (occurred_at AT TIME ZONE 'UTC')::date AS day,
         CASE WHEN jsonb_typeof(attributes->'previous') = 'number' THEN (attributes->>'previous')::float8 END AS previous,
         md5(coalesce(attributes->>'user_id', attributes->>'actor')) AS actor,
         attributes->>'conversation_id' AS conversation_id
       FROM gone WHERE customer_id IS NOT NULL
     ), rolled AS (
       INSERT INTO signal_rollups (id, tenant_id, customer_id, day, bucket, source, kind, value, previous, actor, conversation_id,
                                   signals, sentiment_sum, sentiment_count, first_at, last_at, last_created_at)
       SELECT gen_random_uuid(), tenant_id, customer_id, day,
         md5(json_build_array(source, kind, value, previous, actor, conversation_id)::text),
         source, kind, value, previous, actor, conversation_id,
         count(*), coalesce(sum(sentiment), 0), count(sentiment), min(occurred_at), max(occurred_at),
         (array_agg(created_at ORDER BY occurred_at DESC, created_at DESC))[1]
       FROM keyed
       GROUP BY tenant_id, customer_id, day, source, kind, value, previous, actor, conversation_id
       -- In key order, so two workers rolling up the same days never wait on each other's rows in a cycle.
       ORDER BY 3, 4, 5
       ON CONFLICT (customer_id, day, bucket) DO UPDATE SET
         signals = signal_rollups.signals + excluded.signals,
         sentiment_sum = signal_rollups.sentiment_sum + excluded.sentiment_sum,
         sentiment_count = signal_rollups.sentiment_count + excluded.sentiment_count,
         first_at = least(signal_rollups.first_at, excluded.first_at),
         last_at = greatest(signal_rollups.last_at, excluded.last_at),
         last_created_at = CASE WHEN (excluded.last_at, excluded.last_created_at) > (signal_rollups.last_at, signal_rollups.last_created_at)
                                THEN excluded.last_created_at ELSE signal_rollups.last_created_at END
       RETURNING 1
     )
     SELECT (SELECT count(*) FROM gone)::int AS removed, (SELECT count(*) FROM rolled)::int AS buckets`,
    [tenantId, before, limit],
  );
  return r?.removed ?? 0;
}
