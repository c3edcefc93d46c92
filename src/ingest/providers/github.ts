import { normalizeGithub } from '../normalizers/github.ts';
import { afterPrefix, hexEqual, hmacHex } from './hmac.ts';
import { header, type ProviderSpec } from './types.ts';

export const github: ProviderSpec = {
  normalize: normalizeGithub,
  sign: (secret, body) => ({
    'x-hub-signature': `sha1=${hmacHex('sha1', secret, body)}`,
    'x-hub-signature-256': `sha256=${hmacHex('sha256', secret, body)}`,
  }),
  name: 'github',
  dedupKeySigned: false,
  verify({ headers, rawBody }, secrets) {
    const got = afterPrefix(header(headers, 'x-hub-signature-256'), 'sha256=');
    return got !== null && secrets.some((s) => hexEqual(got, hmacHex('sha256', s, rawBody)));
  },
  handshake: (_body, { headers }) =>
    header(headers, 'x-github-event') === 'ping' ? { status: 200, body: { ok: true, pong: true } } : null,
  describe: (body, { headers }) => {
    const event = header(headers, 'x-github-event') ?? 'unknown';
    return { dedupKey: header(headers, 'x-github-delivery') ?? '', eventType: body?.action ? `${event}.${body.action}` : event };
  },
};
