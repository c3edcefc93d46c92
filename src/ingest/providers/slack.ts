import { normalizeSlack, slackRangeErrors } from '../normalizers/chat.ts';
import { afterPrefix, hexEqual, hmacHex } from './hmac.ts';
import { header, KIB, type ProviderSpec, TOLERANCE_SECONDS, withinRanges } from './types.ts';

export const slack: ProviderSpec = {
  normalize: withinRanges(normalizeSlack, slackRangeErrors),
  rangeErrors: slackRangeErrors,
  sign: (secret, body, now) => ({
    'x-slack-request-timestamp': String(now),
    'x-slack-signature': `v0=${hmacHex('sha256', secret, `v0:${now}:`, body)}`,
  }),
  name: 'slack',
  // An Events API envelope around one message (at most 40,000 characters of text, with its blocks).
  maxBodyBytes: 256 * KIB,
  signed(headers, now) {
    const ts = header(headers, 'x-slack-request-timestamp');
    return (
      !!ts &&
      /^\d+$/.test(ts) &&
      Math.abs(now - Number(ts)) <= TOLERANCE_SECONDS &&
      afterPrefix(header(headers, 'x-slack-signature'), 'v0=') !== null
    );
  },
  dedupKeySigned: true,
  dedupKeyField: 'event_id',
  verify({ headers, rawBody, now }, secrets) {
    const ts = header(headers, 'x-slack-request-timestamp');
    const got = afterPrefix(header(headers, 'x-slack-signature'), 'v0=');
    if (!ts || !/^\d+$/.test(ts) || got === null || Math.abs(now - Number(ts)) > TOLERANCE_SECONDS) return false;
    return secrets.some((s) => hexEqual(got, hmacHex('sha256', s, `v0:${ts}:`, rawBody)));
  },
  handshake: (body) => (body?.type === 'url_verification' ? { status: 200, body: { challenge: String(body.challenge ?? '') } } : null),
  describe: (body) => ({
    dedupKey: String(body?.event_id ?? ''),
    eventType: body?.event?.type
      ? `${body.event.type}${body.event.subtype ? `.${body.event.subtype}` : ''}`
      : String(body?.type ?? 'unknown'),
  }),
  openapi: {
    label: 'Slack',
    headers: {
      'x-slack-signature': '`v0=<hex HMAC-SHA256 of v0:<timestamp>:<body>>`.',
      'x-slack-request-timestamp': 'unix seconds; older than five minutes is refused.',
    },
    example: {
      summary: 'Events API message',
      value: {
        type: 'event_callback',
        event_id: 'Ev0PV52K25',
        team_id: 'T123',
        event: { type: 'message', user: 'U123', text: 'Thanks!', ts: '1767225600.000100' },
      },
    },
  },
};
