import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signatureHeader } from './signing.ts';
import { verifyWebhookSignature } from './verify.ts';

const hmac = (secret: string, text: string) => createHmac('sha256', secret).update(text).digest('hex');

describe('webhook signatures', () => {
  it('signs `{timestamp}.{body}` with HMAC-SHA256 under the secret, as v0=<hex>', () => {
    expect(signatureHeader(['whsec_a'], 1700000000, '{"a":1}')).toBe(`v0=${hmac('whsec_a', '1700000000.{"a":1}')}`);
  });

  it('lists the new secret’s signature first during a rotation, space-separated', () => {
    const header = signatureHeader(['new', 'old'], 1, 'x');
    expect(header).toBe(`v0=${hmac('new', '1.x')} v0=${hmac('old', '1.x')}`);
  });

  it('is what the receivers’ verifier accepts, and a changed byte is refused', () => {
    const now = 1_700_000_000;
    const body = '{"id":"x"}';
    const headers = { 'x-webhook-timestamp': String(now), 'x-webhook-signature': signatureHeader(['s3cret'], now, body) };
    expect(verifyWebhookSignature({ secret: 's3cret', headers, rawBody: body, now })).toBe(true);
    expect(verifyWebhookSignature({ secret: 's3cret', headers, rawBody: `${body} `, now })).toBe(false);
  });
});
