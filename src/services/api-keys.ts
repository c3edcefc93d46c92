import type { Db } from '../db/prisma.ts';
import type { Prisma } from '../generated/prisma/client.ts';
import { DomainError } from '../errors.ts';
import { displayPrefix, generateApiKey, hashApiKey } from '../auth/api-keys.ts';
import { onPrisma } from '../db/sql.ts';
import { operator, recordAudit, type Actor } from './audit.ts';

type Tx = Pick<Prisma.TransactionClient, 'apiKey'>;

export const DEFAULT_ROTATION_GRACE_HOURS = 24;

/** What is stored of a secret: a display prefix and its hash, never the secret. */
const secretColumns = (secret: string) => ({ prefix: displayPrefix(secret), hash: hashApiKey(secret) });

/** Creates a key and returns its secret, the only time the secret exists outside the caller's hands. */
export async function issueApiKey(db: Tx, opts: { tenantId: string; name: string; createdById?: string | null; expiresAt?: Date | null }) {
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
export async function revokeApiKey(db: Tx, opts: { tenantId?: string; keyId: string }): Promise<boolean> {
  const where = { id: opts.keyId, ...(opts.tenantId ? { tenantId: opts.tenantId } : {}) };
  const found = await db.apiKey.findFirst({ where, select: { id: true } });
  if (!found) return false;
  await db.apiKey.updateMany({ where: { ...where, revokedAt: null }, data: { revokedAt: new Date() } });
  return true;
}

/** Stores when a key was last used. */
export function recordKeyUse(db: Tx, keyId: string, at: Date) {
  return db.apiKey.update({ where: { id: keyId }, data: { lastUsedAt: at } });
}

const cannotRotate = (why: string) =>
  new DomainError('conflict', `This API key ${why}, so it cannot be rotated; create a new key instead.`);

/**
 * Rotation: a new key with the same name, while the old one keeps working for a grace period
 * (expires_at), so deployments can switch over without downtime. Only a live key that has not
 * been rotated yet can be: rotating a revoked or expired key would bring its access back, and
 * rotating twice would leave two successors.
 */
async function rotateApiKey(tx: Tx, opts: { tenantId: string; keyId: string; graceHours: number; createdById?: string | null }) {
  const old = await tx.apiKey.findFirst({ where: { id: opts.keyId, tenantId: opts.tenantId } });
  if (!old) return null;
  const now = new Date();
  if (old.revokedAt && old.revokedAt <= now) throw cannotRotate('is revoked');
  if (old.expiresAt && old.expiresAt <= now) throw cannotRotate('has expired');
  if (old.replacedById) throw cannotRotate('has already been rotated (rotate its replacement)');
  const secret = generateApiKey();
  const key = await tx.apiKey.create({
    data: {
      tenantId: opts.tenantId,
      name: old.name,
      ...secretColumns(secret),
      createdById: opts.createdById ?? null,
    },
  });
  const graceEnd = new Date(now.getTime() + opts.graceHours * 3600_000);
  // Conditional, so of two rotations racing for the same key only one commits.
  const { count } = await tx.apiKey.updateMany({
    where: { id: old.id, replacedById: null, revokedAt: null },
    data: {
      replacedById: key.id,
      // Never extend a key's life: the grace end only shortens an existing expiry.
      expiresAt: old.expiresAt && old.expiresAt < graceEnd ? old.expiresAt : graceEnd,
      ...(opts.graceHours === 0 ? { revokedAt: now } : {}),
    },
  });
  if (count === 0) throw cannotRotate('was rotated or revoked meanwhile');
  return { key, secret, old };
}

const createdBy = (actor: Actor) => (actor.type === 'user' ? actor.id : null);

/**
 * API keys as the API and the CLI manage them (Prisma: a row at a time), each change audited in its
 * own transaction.
 */
export function createApiKeyService(deps: { prisma: Db }) {
  const { prisma } = deps;
  return {
    issue: (actor: Actor, opts: { name: string; expiresAt?: Date | null }) =>
      prisma.$transaction(async (tx) => {
        const r = await issueApiKey(tx, {
          tenantId: actor.tenantId,
          name: opts.name,
          expiresAt: opts.expiresAt,
          createdById: createdBy(actor),
        });
        await recordAudit(onPrisma(tx), actor, {
          action: 'api_key.created',
          targetType: 'api_key',
          targetId: r.key.id,
          changes: { name: r.key.name, prefix: r.key.prefix, expires_at: r.key.expiresAt?.toISOString() ?? null },
        });
        return r;
      }),
    /** False when the tenant has no such key. */
    revoke: (actor: Actor, keyId: string) =>
      prisma.$transaction(async (tx) => {
        if (!(await revokeApiKey(tx, { tenantId: actor.tenantId, keyId }))) return false;
        await recordAudit(onPrisma(tx), actor, { action: 'api_key.revoked', targetType: 'api_key', targetId: keyId });
        return true;
      }),
    /** The operator's revocation, by key id alone; audited in the key's tenant. */
    async revokeAsOperator(keyId: string): Promise<boolean> {
      const key = await prisma.apiKey.findUnique({ where: { id: keyId }, select: { tenantId: true } });
      return key ? this.revoke(operator(key.tenantId), keyId) : false;
    },
    /** Null when the tenant has no such key. */
    rotate: (actor: Actor, opts: { keyId: string; graceHours: number }) =>
      prisma.$transaction(async (tx) => {
        const r = await rotateApiKey(tx, { tenantId: actor.tenantId, ...opts, createdById: createdBy(actor) });
        if (!r) return null;
        await recordAudit(onPrisma(tx), actor, {
          action: 'api_key.rotated',
          targetType: 'api_key',
          targetId: r.old.id,
          changes: { replaced_by: r.key.id, grace_period_hours: opts.graceHours },
        });
        return { key: r.key, secret: r.secret };
      }),
  };
}

export type ApiKeyService = ReturnType<typeof createApiKeyService>;
