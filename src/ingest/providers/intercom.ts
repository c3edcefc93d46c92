import { normalizeIntercom, intercomRangeErrors } from '../normalizers/intercom.ts';
import { afterPrefix, hexEqual, hmacHex } from './hmac.ts';
import { header, type ProviderSpec, withinRanges } from './types.ts';

export const intercom: ProviderSpec = {
  normalize: withinRanges(normalizeIntercom, intercomRangeErrors),
  rangeErrors: intercomRangeErrors,
  sign: (secret, body) => ({ 'x-hub-signature': `sha1=${hmacHex('sha1', secret, body)}` }),
  name: 'intercom',
  // A notification carries the conversation with its parts (up to 500 of them), so no bound below the service's own.
  signed: (headers) => afterPrefix(header(headers, 'x-hub-signature'), 'sha1=') !== null,
  dedupKeySigned: true,
  verify({ headers, rawBody }, secrets) {
    const got = afterPrefix(header(headers, 'x-hub-signature'), 'sha1=');
    return got !== null && secrets.some((s) => hexEqual(got, hmacHex('sha1', s, rawBody)));
  },
  handshake: (body) => (body?.topic === 'ping' ? { status: 200, body: { ok: true } } : null),
  describe: (body) => ({ dedupKey: String(body?.id ?? ''), eventType: String(body?.topic ?? 'unknown') }),
  // A conversation's events in the order accepted: opened, replied, closed.
  orderKeyOf: (body) =>
    String(body?.topic ?? '').startsWith('conversation.') && body?.data?.item?.id != null
      ? `conversation:${String(body.data.item.id)}`
      : null,
  openapi: {
    label: 'Intercom',
    headers: { 'x-hub-signature': '`sha1=<hex HMAC-SHA1 of the body>`.' },
    example: {
      summary: 'conversation.user.created',
      value: {
        type: 'notification_event',
        id: 'notif_1',
        topic: 'conversation.user.created',
        created_at: 1767225600,
        data: { item: { type: 'conversation', id: '42' } },
      },
    },
  },
};
