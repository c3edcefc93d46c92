import type { Sql } from '../db/sql.ts';

// The one module that writes `idempotency_keys`: the answers of requests sent with an Idempotency-Key,
// kept so that the same request sent again gets the same answer (deleted by age by the retention pass).

/**
 * Claims a key for a request in the caller's transaction, storing its answer; when the key was claimed
 * already, answers the earlier request's hash and answer instead. A concurrent request with the same key
 * waits on the first one's row until it commits, then reads its answer.
 */
export async function claimIdempotencyKey<T>(
  sql: Sql,
  claim: { tenantId: string; key: string; requestHash: string; response: T },
): Promise<{ claimed: true } | { claimed: false; requestHash: string; response: T }> {
  const rows = await sql.query(
    `INSERT INTO idempotency_keys (tenant_id, key, request_hash, response) VALUES ($1, $2, $3, $4)
     ON CONFLICT (tenant_id, key) DO NOTHING RETURNING key`,
    [claim.tenantId, claim.key, claim.requestHash, JSON.stringify(claim.response)],
  );
  if (rows.length > 0) return { claimed: true };
  const [earlier] = await sql.query<{ request_hash: string; response: T }>(
    'SELECT request_hash, response FROM idempotency_keys WHERE tenant_id = $1 AND key = $2',
    [claim.tenantId, claim.key],
  );
  return { claimed: false, requestHash: earlier!.request_hash, response: earlier!.response };
}

/** Forgets the stored answers that name an erased customer. */
export async function forgetAnswersNaming(sql: Sql, tenantId: string, customerId: string): Promise<void> {
  await sql.query('DELETE FROM idempotency_keys WHERE tenant_id = $1 AND strpos(response::text, $2) > 0', [tenantId, customerId]);
}
