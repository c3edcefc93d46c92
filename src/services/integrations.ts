import { randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Resealer } from '../crypto/reencrypt.ts';
import { openWithOverlap, type SecretBox } from '../crypto/secret-box.ts';
import type { Db } from '../db/prisma.ts';
import { validationFailed } from '../errors.ts';
import { isDiscordPublicKey } from '../contract/provider-secrets.ts';
import { PROVIDERS, type ProviderName } from '../contract/enums.ts';
import { onPrisma, type Sql } from '../db/sql.ts';
import { freshnessView, type IntegrationFreshness } from '../scoring/freshness.ts';
import { recordAudit, type Actor } from './audit.ts';

export const ROTATION_OVERLAP_HOURS = 24;

export interface ActiveSecrets {
  /** Current first, then the rotated-out secret while its overlap lasts. */
  secrets: string[];
  verifyToken: string | null;
}

export interface InboundSecretStore {
  /** Generates (or sets, when given) the provider secret; an existing one keeps verifying for 24 h. Audited as the actor's. */
  put(
    opts: {
      tenantId: string;
      provider: ProviderName;
      secret?: string | null;
      verifyToken?: string | null;
    },
    actor: Actor,
  ): Promise<{ secret: string; rotated: boolean }>;
  active(tenantId: string, provider: ProviderName): Promise<ActiveSecrets | null>;
}

const generate = (provider: ProviderName) => `${provider === 'stripe' ? 'whsec' : 'insec'}_${randomBytes(32).toString('base64url')}`;

export function createInboundSecretStore(db: Db, box: SecretBox, opts: { cacheMs: number }): InboundSecretStore {
  // Only found secrets are remembered: one set by another process (the CLI, another API) must work at once.
  const cache = new LRUCache<string, ActiveSecrets>({ max: 10_000, ttl: Math.max(opts.cacheMs, 1) });
  return {
    async put({ tenantId, provider, secret, verifyToken }, actor) {
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
      await db.$transaction(async (tx) => {
        await tx.inboundSecret.upsert({
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
        // What changed, never the values.
        await recordAudit(onPrisma(tx), actor, {
          action: 'inbound_secret.set',
          targetType: 'integration',
          targetId: provider,
          changes: {
            secret: keepSecret ? 'kept' : existing ? 'rotated' : 'set',
            ...(verifyToken ? { verify_token: 'set' } : {}),
            generated: !keepSecret && !secret,
          },
        });
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

export interface IntegrationCard {
  tenantId: string;
  provider: ProviderName;
  secretSet: boolean;
  verifyTokenSet: boolean;
  previousSecretValidUntil: Date | null;
  lastEvent: { id: string; eventType: string; status: string; receivedAt: Date } | null;
  /** Null for a provider never connected. */
  freshness: IntegrationFreshness | null;
}

/**
 * Provider integrations: the inbound signing secrets (Prisma, written only by the API and the CLI) and a card per
 * provider with the newest inbound event, read in plain SQL (DISTINCT ON has no Prisma form).
 */
export function createIntegrationService(deps: { prisma: Db; box: SecretBox; cacheMs: number }) {
  const { prisma } = deps;
  const secrets = createInboundSecretStore(prisma, deps.box, { cacheMs: deps.cacheMs });
  return {
    secrets,
    async cards(tenantId: string): Promise<IntegrationCard[]> {
      const [stored, last, fresh] = await Promise.all([
        prisma.inboundSecret.findMany({ where: { tenantId }, select: { provider: true, verifyToken: true, previousExpiresAt: true } }),
        // The newest event per provider in one query.
        prisma.$queryRaw<{ provider: string; id: string; event_type: string; status: string; received_at: Date }[]>`
          SELECT DISTINCT ON (provider) provider, id, event_type, status::text AS status, received_at
          FROM inbox_events WHERE tenant_id = ${tenantId}::uuid ORDER BY provider, received_at DESC`,
        prisma.integrationFreshness.findMany({ where: { tenantId } }),
      ]);
      return PROVIDERS.map((provider) => {
        const s = stored.find((x) => x.provider === provider);
        const e = last.find((x) => x.provider === provider);
        return {
          tenantId,
          provider,
          secretSet: Boolean(s),
          verifyTokenSet: Boolean(s?.verifyToken),
          previousSecretValidUntil: s?.previousExpiresAt && s.previousExpiresAt > new Date() ? s.previousExpiresAt : null,
          lastEvent: e ? { id: e.id, eventType: e.event_type, status: e.status, receivedAt: e.received_at } : null,
          freshness: ((f) => (s && f ? freshnessView(f) : null))(fresh.find((x) => x.provider === provider)),
        };
      });
    },
  };
}

export type IntegrationService = ReturnType<typeof createIntegrationService>;

/**
 * Re-seals, row by row, every inbound secret an older key sealed (the operator's `secrets:reencrypt`). Safe
 * while the service runs, and to run again. Answers how many rows it read.
 */
export async function resealInboundSecrets(db: Db, resealer: Resealer): Promise<number> {
  const rows = await db.inboundSecret.findMany({ select: { id: true, secret: true, previousSecret: true, verifyToken: true } });
  for (const row of rows) {
    const next = {
      secret: resealer.reseal(row.secret)!,
      previousSecret: resealer.reseal(row.previousSecret),
      verifyToken: resealer.reseal(row.verifyToken),
    };
    if (next.secret !== row.secret || next.previousSecret !== row.previousSecret || next.verifyToken !== row.verifyToken) {
      // Only if unchanged since read: a rotation meanwhile already sealed with the current key.
      await db.inboundSecret.updateMany({ where: { id: row.id, secret: row.secret }, data: next });
    }
  }
  return rows.length;
}

/**
 * The stored bodies of a tenant's inbound events, as a score change cites them: an event whose body
 * retention or an erasure removed answers an empty body, one removed altogether is missing. Without
 * `withBody`, a body still kept answers a single space (only whether it is kept is read).
 */
export async function inboundBodies(sql: Sql, tenantId: string, ids: string[], withBody: boolean): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await sql.query<{ id: string; body: string }>(
    `SELECT id, ${withBody ? 'body' : "CASE WHEN body = '' THEN '' ELSE ' ' END AS body"} FROM inbox_events
     WHERE tenant_id = $1 AND id = ANY($2::uuid[])`,
    [tenantId, ids],
  );
  return new Map(rows.map((r) => [r.id, r.body]));
}
