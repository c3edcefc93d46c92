import { createHash } from 'node:crypto';
import { normalizeMetaAds, metaAdsRangeErrors } from '../normalizers/meta-ads.ts';
import { afterPrefix, hexEqual, hmacHex } from './hmac.ts';
import { header, KIB, MAX_DEDUP_KEY_BYTES, type ProviderSpec, withinRanges } from './types.ts';

/** Every lead change in the delivery: entry id, change time and leadgen id make its identity. */
export function leadKeys(body: any): string[] {
  const keys: string[] = [];
  for (const entry of Array.isArray(body?.entry) ? body.entry : []) {
    for (const change of Array.isArray(entry?.changes) ? entry.changes : []) {
      keys.push(
        `${entry?.id ?? ''}:${change?.value?.created_time ?? entry?.time ?? ''}:${change?.value?.leadgen_id ?? change?.field ?? ''}`,
      );
    }
  }
  return keys;
}

export const metaAds: ProviderSpec = {
  normalize: withinRanges(normalizeMetaAds, metaAdsRangeErrors),
  rangeErrors: metaAdsRangeErrors,
  sign: (secret, body) => ({
    'x-hub-signature': `sha1=${hmacHex('sha1', secret, body)}`,
    'x-hub-signature-256': `sha256=${hmacHex('sha256', secret, body)}`,
  }),
  name: 'meta_ads',
  // A batch of lead changes, a few hundred bytes each.
  maxBodyBytes: 256 * KIB,
  signed: (headers) => afterPrefix(header(headers, 'x-hub-signature-256'), 'sha256=') !== null,
  dedupKeySigned: true,
  verify({ headers, rawBody }, secrets) {
    const got = afterPrefix(header(headers, 'x-hub-signature-256'), 'sha256=');
    return got !== null && secrets.some((s) => hexEqual(got, hmacHex('sha256', s, rawBody)));
  },
  describe: (body) => {
    const keys = leadKeys(body).sort().join('|');
    return {
      // A large batch's keys together can outgrow what the index holds: their hash then stands for them.
      dedupKey: Buffer.byteLength(keys) > MAX_DEDUP_KEY_BYTES ? `leads-sha256:${createHash('sha256').update(keys).digest('hex')}` : keys,
      eventType: `${body?.object ?? 'page'}.${body?.entry?.[0]?.changes?.[0]?.field ?? 'unknown'}`,
    };
  },
  openapi: {
    label: 'Meta',
    headers: { 'x-hub-signature-256': '`sha256=<hex HMAC-SHA256 of the body>`.' },
    example: {
      summary: 'ad account change',
      value: {
        object: 'ad_account',
        entry: [{ id: 'act_123', time: 1767225600, changes: [{ field: 'spend', value: { amount: 120.5 } }] }],
      },
    },
  },
};
