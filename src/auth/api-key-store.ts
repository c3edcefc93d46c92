import type { Db } from '../db/prisma.ts';
import { displayPrefix, generateApiKey, hashApiKey } from './api-keys.ts';

export const DEFAULT_ROTATION_GRACE_HOURS = 24;

/** What is stored of a secret: a display prefix and its hash, never the secret. */
const secretColumns = (secret: string) => ({ prefix: displayPrefix(secret), hash: hashApiKey(secret) });

/** Creates a key and returns its secret, the only time the secret exists outside the caller's hands. */
export async function issueApiKey(db: Db, opts: { tenantId: string; name: string; createdById?: string | null; expiresAt?: Date | null }) {
  const secret = generateApiKey();
  const key = await db.apiKey.create({
    data: {
      tenantId: opts.tenantId,
      name: opts.name,
      ...secretColumns(secret),
      createdById: opts.createdById ?? null,
      expiresAt: opts.expiresAt ?? null,
    },
  });
  return { key, secret };
}

/** Revokes a key of the tenant; false when the tenant has no such key. Revoking twice keeps the first time. */
export async function revokeApiKey(db: Db, opts: { tenantId?: string; keyId: string }): Promise<boolean> {
  const where = { id: opts.keyId, ...(opts.tenantId ? { tenantId: opts.tenantId } : {}) };
  const found = await db.apiKey.findFirst({ where, select: { id: true } });
  if (!found) return false;
  await db.apiKey.updateMany({ where: { ...where, revokedAt: null }, data: { revokedAt: new Date() } });
  return true;
}

/**
 * Rotation: a new key with the same name, while the old one keeps working for a grace period
 * (expires_at), so deployments can switch over without downtime.
 */
export async function rotateApiKey(db: Db, opts: { tenantId: string; keyId: string; graceHours: number; createdById?: string | null }) {
  return db.$transaction(async (tx) => {
    const old = await tx.apiKey.findFirst({ where: { id: opts.keyId, tenantId: opts.tenantId } });
    if (!old) return null;
    const secret = generateApiKey();
    const key = await tx.apiKey.create({
      data: {
        tenantId: opts.tenantId,
        name: old.name,
        ...secretColumns(secret),
        createdById: opts.createdById ?? null,
      },
    });
    const graceEnd = new Date(Date.now() + opts.graceHours * 3600_000);
    await tx.apiKey.update({
      where: { id: old.id },
      data: {
        replacedById: key.id,
        // Never extend a key's life: the grace end only shortens an existing expiry.
        expiresAt: old.expiresAt && old.expiresAt < graceEnd ? old.expiresAt : graceEnd,
        ...(opts.graceHours === 0 ? { revokedAt: new Date() } : {}),
      },
    });
    return { key, secret };
  });
}
