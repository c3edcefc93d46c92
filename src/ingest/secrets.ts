import { randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { openWithOverlap, type SecretBox } from '../crypto/secret-box.ts';
import type { Db } from '../db/prisma.ts';
import { validationFailed } from '../errors.ts';
import { isDiscordPublicKey } from './providers/discord.ts';
import type { ProviderName } from './providers/types.ts';

export const ROTATION_OVERLAP_HOURS = 24;

export interface ActiveSecrets {
  /** Current first, then the rotated-out secret while its overlap lasts. */
  secrets: string[];
  verifyToken: string | null;
}

export interface InboundSecretStore {
  /** Generates (or sets, when given) the provider secret; an existing one keeps verifying for 24 h. */
  put(opts: {
    tenantId: string;
    provider: ProviderName;
    secret?: string | null;
    verifyToken?: string | null;
  }): Promise<{ secret: string; rotated: boolean }>;
  active(tenantId: string, provider: ProviderName): Promise<ActiveSecrets | null>;
}

const generate = (provider: ProviderName) => `${provider === 'stripe' ? 'whsec' : 'insec'}_${randomBytes(32).toString('base64url')}`;

export function createInboundSecretStore(db: Db, box: SecretBox, opts: { cacheMs: number }): InboundSecretStore {
  // Only found secrets are remembered: one set by another process (the CLI, another API) must work at once.
  const cache = new LRUCache<string, ActiveSecrets>({ max: 10_000, ttl: Math.max(opts.cacheMs, 1) });
  return {
    async put({ tenantId, provider, secret, verifyToken }) {
      if (provider === 'discord' && !secret) {
        throw validationFailed([
          { path: 'secret', message: "Discord signs with the application's key pair: paste the application's public key" },
        ]);
      }
      if (provider === 'discord' && secret && !isDiscordPublicKey(secret)) {
        throw validationFailed([{ path: 'secret', message: 'must be the Discord application public key, 64 hexadecimal characters' }]);
      }
      if (secret !== undefined && secret !== null && (secret.length < 8 || secret.length > 512)) {
        throw validationFailed([{ path: 'secret', message: 'must be 8 to 512 characters' }]);
      }
      const existing = await db.inboundSecret.findUnique({ where: { tenantId_provider: { tenantId, provider } } });
      // Only a verify token was given for an existing integration: keep its signing secret.
      const keepSecret = existing && !secret && verifyToken;
      const clear = keepSecret ? box.open(existing.secret) : (secret ?? generate(provider));
      const sealed = keepSecret ? existing.secret : box.seal(clear);
      const token = verifyToken ? box.seal(verifyToken) : (existing?.verifyToken ?? null);
      const rotated = Boolean(existing && !keepSecret);
      await db.inboundSecret.upsert({
        where: { tenantId_provider: { tenantId, provider } },
        create: { tenantId, provider, secret: sealed, verifyToken: token },
        update: {
          secret: sealed,
          verifyToken: token,
          ...(rotated
            ? { previousSecret: existing!.secret, previousExpiresAt: new Date(Date.now() + ROTATION_OVERLAP_HOURS * 3600_000) }
            : {}),
        },
      });
      cache.delete(`${tenantId}:${provider}`);
      return { secret: clear, rotated };
    },
    async active(tenantId, provider) {
      const key = `${tenantId}:${provider}`;
      const hit = opts.cacheMs > 0 ? cache.get(key) : undefined;
      if (hit) return hit;
      const row = await db.inboundSecret.findUnique({ where: { tenantId_provider: { tenantId, provider } } });
      if (!row) return null;
      const value: ActiveSecrets = {
        secrets: openWithOverlap(box, row),
        verifyToken: row.verifyToken ? box.open(row.verifyToken) : null,
      };
      if (opts.cacheMs > 0) cache.set(key, value);
      return value;
    },
  };
}
