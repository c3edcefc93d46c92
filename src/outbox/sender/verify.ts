import { createHmac, timingSafeEqual } from 'node:crypto';

export interface VerifyInput {
  /** The endpoint's signing secret, exactly as shown (whsec_...). */
  secret: string;
  /** Request headers, lower-case names as Node gives them. */
  headers: Record<string, string | string[] | undefined>;
  /** The raw request body, before any JSON parsing. */
  rawBody: Buffer | string;
  /** Oldest acceptable timestamp, in seconds (default 300). */
  toleranceSeconds?: number;
  /** Unix seconds; defaults to now. */
  now?: number;
}

/**
 * Verifies a delivery of ours: X-Webhook-Signature carries one or more `v0=<hex>` values (two during a
 * secret rotation), each an HMAC-SHA256 of `{X-Webhook-Timestamp}.{raw body}`. Constant-time compare;
 * stale timestamps are refused. Receivers can copy this function as it is.
 */
export function verifyWebhookSignature({
  secret,
  headers,
  rawBody,
  toleranceSeconds = 300,
  now = Math.floor(Date.now() / 1000),
}: VerifyInput): boolean {
  const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v) ?? '';
  const timestamp = one(headers['x-webhook-timestamp']);
  if (!/^\d+$/.test(timestamp) || Math.abs(now - Number(timestamp)) > toleranceSeconds) return false;
  const expected = Buffer.from(`v0=${createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest('hex')}`);
  return one(headers['x-webhook-signature'])
    .split(' ')
    .some((candidate) => {
      const got = Buffer.from(candidate);
      return got.length === expected.length && timingSafeEqual(got, expected);
    });
}
