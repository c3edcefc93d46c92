import { githubRangeErrors, normalizeGithub } from '../normalizers/github.ts';
import { afterPrefix, hexEqual, hmacHex } from './hmac.ts';
import { header, type ProviderSpec, withinRanges } from './types.ts';

export const github: ProviderSpec = {
  normalize: withinRanges(normalizeGithub, githubRangeErrors),
  rangeErrors: githubRangeErrors,
  sign: (secret, body) => ({
    'x-hub-signature': `sha1=${hmacHex('sha1', secret, body)}`,
    'x-hub-signature-256': `sha256=${hmacHex('sha256', secret, body)}`,
  }),
  name: 'github',
  // No limit of its own: GitHub caps a delivery at 25 MB, and a push of many commits comes near the service's.
  signed: (headers) => afterPrefix(header(headers, 'x-hub-signature-256'), 'sha256=') !== null,
  dedupKeySigned: false,
  dedupKeyField: 'X-GitHub-Delivery',
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
  openapi: {
    label: 'GitHub',
    headers: {
      'x-hub-signature-256': '`sha256=<hex HMAC-SHA256 of the body>`.',
      'x-github-event': 'the event name (`ping` is answered as a handshake).',
      'x-github-delivery': 'the delivery id, the same on redeliveries.',
    },
    example: {
      summary: 'issues.opened',
      value: {
        action: 'opened',
        issue: { number: 7, title: 'Export fails' },
        repository: { full_name: 'acme/app' },
        sender: { login: 'octocat' },
      },
    },
  },
};
