import { createHmac, createPrivateKey, generateKeyPairSync, sign } from 'node:crypto';
import type { SignatureScheme } from '../../contract/enums.ts';

/**
 * X-Webhook-Signature: `v0=` + hex HMAC-SHA256 over `{timestamp}.{raw body}`, keyed by the endpoint
 * secret's UTF-8 bytes as displayed. During a rotation overlap the new signature comes first and the
 * old one follows after a single space.
 */
export function signatureHeader(secrets: string[], timestamp: number, body: string): string {
  return secrets.map((s) => `v0=${createHmac('sha256', s).update(`${timestamp}.${body}`).digest('hex')}`).join(' ');
}

/**
 * The HMAC key of the Standard Webhooks scheme: the bytes the secret's base64 text after `whsec_` encodes,
 * as the specification serialises symmetric secrets (Node's decoder also reads the URL-safe alphabet).
 */
const standardKey = (secret: string) => Buffer.from(secret.replace(/^whsec_/, ''), 'base64');

/**
 * webhook-signature of the Standard Webhooks specification: space-separated `v1,<base64 HMAC-SHA256>` and
 * `v1a,<base64 Ed25519>` signatures of `{id}.{timestamp}.{body}`. Each key's pair of signatures comes in
 * order, the current key's first, so during a rotation overlap the header carries four.
 */
export function standardSignatureHeader(
  keys: { secrets: string[]; signingKeys: string[] },
  id: string,
  timestamp: number,
  body: string,
): string {
  const signed = Buffer.from(`${id}.${timestamp}.${body}`);
  const sigs: string[] = [];
  for (let i = 0; i < Math.max(keys.secrets.length, keys.signingKeys.length); i++) {
    const secret = keys.secrets[i];
    const signingKey = keys.signingKeys[i];
    if (secret !== undefined) sigs.push(`v1,${createHmac('sha256', standardKey(secret)).update(signed).digest('base64')}`);
    if (signingKey !== undefined) sigs.push(`v1a,${sign(null, signed, privateKey(signingKey)).toString('base64')}`);
  }
  return sigs.join(' ');
}

/** The headers that identify and sign one attempt, in the endpoint's scheme. */
export function signedHeaders(
  scheme: SignatureScheme,
  keys: { secrets: string[]; signingKeys: string[] },
  id: string,
  timestamp: number,
  body: string,
): Record<string, string> {
  if (scheme === 'standard') {
    return {
      'webhook-id': id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': standardSignatureHeader(keys, id, timestamp, body),
    };
  }
  return {
    'x-webhook-id': id,
    'x-webhook-timestamp': String(timestamp),
    'x-webhook-signature': signatureHeader(keys.secrets, timestamp, body),
  };
}

const SECRET_KEY_PREFIX = 'whsk_';
const PUBLIC_KEY_PREFIX = 'whpk_';

/** Ed25519 private keys are kept as `whsk_` + base64 of their PKCS #8 DER form (sealed at rest). */
const privateKey = (serialised: string) =>
  createPrivateKey({ key: Buffer.from(serialised.slice(SECRET_KEY_PREFIX.length), 'base64'), format: 'der', type: 'pkcs8' });

/**
 * A new Ed25519 key pair: the private key as stored (before sealing) and the public key as shown, `whpk_`
 * + base64 of its 32 raw bytes, the serialisation the Standard Webhooks specification gives.
 */
export function newSigningKeyPair(): { signingKey: string; publicKey: string } {
  const { privateKey: priv, publicKey: pub } = generateKeyPairSync('ed25519');
  const raw = Buffer.from(pub.export({ format: 'jwk' }).x!, 'base64url');
  return {
    signingKey: SECRET_KEY_PREFIX + priv.export({ format: 'der', type: 'pkcs8' }).toString('base64'),
    publicKey: PUBLIC_KEY_PREFIX + raw.toString('base64'),
  };
}
