import { hash, randomBytes } from 'node:crypto';

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** `sk_` followed by 40 base62 characters (about 238 bits), drawn without modulo bias. */
export function generateApiKey(): string {
  let out = 'sk_';
  while (out.length < 43) {
    for (const byte of randomBytes(48)) {
      if (byte < 248 && out.length < 43) out += BASE62[byte % 62];
    }
  }
  return out;
}

/** Keys are high-entropy random strings, so a plain SHA-256 is the right lookup hash (no KDF needed). */
export function hashApiKey(secret: string): string {
  // One-shot hashing: no Hash object per request.
  return hash('sha256', secret, 'hex');
}

/** What the dashboard shows of a key: enough to recognise it, far too little to use it. */
export function displayPrefix(secret: string): string {
  return secret.slice(0, 10);
}

export const isApiKeyShaped = (token: string) => token.startsWith('sk_');
