import { createHmac } from 'node:crypto';

/**
 * X-Webhook-Signature: `v0=` + hex HMAC-SHA256 over `{timestamp}.{raw body}`, keyed by the endpoint
 * secret's UTF-8 bytes as displayed. During a rotation overlap the new signature comes first and the
 * old one follows after a single space.
 */
export function signatureHeader(secrets: string[], timestamp: number, body: string): string {
  return secrets.map((s) => `v0=${createHmac('sha256', s).update(`${timestamp}.${body}`).digest('hex')}`).join(' ');
}
