import { createHmac, timingSafeEqual } from 'node:crypto';

export function hmacHex(algorithm: 'sha1' | 'sha256', key: string, ...parts: (string | Buffer)[]): string {
  const h = createHmac(algorithm, key);
  for (const p of parts) h.update(p);
  return h.digest('hex');
}

/** Constant-time comparison of two digests or tokens (different lengths are simply unequal). */
export function hexEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

/** For `sha256=<hex>` style headers: the digest after the prefix, or null when the prefix is absent. */
export function afterPrefix(value: string | undefined, prefix: string): string | null {
  return value?.startsWith(prefix) ? value.slice(prefix.length).toLowerCase() : null;
}
