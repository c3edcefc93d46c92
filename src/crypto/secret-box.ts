import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * AES-256-GCM for secrets that must be used again in clear (inbound and endpoint signing secrets).
 * Stored form: `v1.<keyId>.<iv>.<tag>.<ciphertext>` (base64url), so keys can be rotated: new writes use
 * the first key, reads find theirs by id.
 */
export interface SecretBox {
  /** The id of the key new seals use. */
  readonly keyId: string;
  seal(plaintext: string): string;
  open(sealed: string): string;
}

/** Which key sealed a value, from its stored form. */
export const sealedKeyId = (sealed: string): string | undefined => sealed.split('.')[1];

export function createSecretBox(keys: { id: string; key: Buffer }[]): SecretBox {
  if (keys.length === 0) throw new Error('at least one encryption key is required');
  for (const k of keys) if (k.key.length !== 32) throw new Error(`encryption key ${k.id} must be 32 bytes`);
  const byId = new Map(keys.map((k) => [k.id, k.key]));
  const current = keys[0];
  return {
    keyId: current.id,
    seal(plaintext) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', current.key, iv);
      const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return ['v1', current.id, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
    },
    open(sealed) {
      const [version, keyId, iv, tag, ct] = sealed.split('.');
      const key = byId.get(keyId ?? '');
      if (version !== 'v1' || !key || !iv || !tag || ct === undefined) throw new Error('sealed secret is malformed or its key is unknown');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
    },
  };
}

/** ENCRYPTION_KEY is `base64` (one key, id k1) or `id:base64,id:base64` (the first encrypts, all decrypt). */
export function parseEncryptionKeys(value: string): { id: string; key: Buffer }[] {
  return value.split(',').map((part, i) => {
    const [id, b64] = part.includes(':') ? part.split(':', 2) : [`k${i + 1}`, part];
    return { id: id!, key: Buffer.from(b64!, 'base64') };
  });
}

/**
 * The secrets that hold during a rotation, in clear: the current one first, then the rotated-out one
 * while its overlap lasts. Inbound secrets verify with either; endpoint secrets sign with both.
 */
export function openWithOverlap(
  box: SecretBox,
  s: { secret: string; previousSecret: string | null; previousExpiresAt: Date | null },
  now = new Date(),
): string[] {
  return [
    box.open(s.secret),
    ...(s.previousSecret && s.previousExpiresAt && s.previousExpiresAt > now ? [box.open(s.previousSecret)] : []),
  ];
}
