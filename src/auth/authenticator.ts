import { LRUCache } from 'lru-cache';
import type { Db } from '../db/prisma.ts';
import { DomainError } from '../errors.ts';
import { hashApiKey, isApiKeyShaped } from './api-keys.ts';
import { PLANS_WITH_API_ACCESS, type Plan, type Principal } from './principal.ts';
import { type Role, type Sessions, sessionIdOf } from './sessions.ts';

interface KeyRecord {
  id: string;
  tenantId: string;
  plan: Plan;
  revokedAt: Date | null;
  expiresAt: Date | null;
  lastUsedAt: Date | null;
  /** When the workspace's deletion window ends, if its deletion is scheduled. */
  deletionDueAt: Date | null;
}

interface UserRecord {
  tenantId: string;
  plan: Plan;
  role: Role;
  deletionDueAt: Date | null;
  /** The later of the user's and the workspace's revocation times: sessions issued at or before it are refused. */
  sessionsValidAfter: Date | null;
  /** Ids of the user's signed-out sessions that have not yet expired. */
  revoked: Set<string>;
}

export interface Authenticator {
  /** Resolves a credential to a principal, or throws invalid_credentials / plan_without_api_access. */
  authenticate(credential: string): Promise<Principal>;
  /**
   * The principal of an API key whose record is in memory and lets its caller in, without waiting;
   * undefined for anything else (then `authenticate` decides, and words any refusal).
   */
  known(credential: string): Principal | undefined;
}

const LAST_USED_RESOLUTION_MS = 60_000;

/**
 * A workspace whose deletion window has ended lets no one in, from that moment and not only once the worker
 * has removed its keys and users. The due time is compared with the clock at each request, so a record
 * cached during the window does not outlive it.
 */
const deleted = (deletionDueAt: Date | null, now: Date) => deletionDueAt !== null && deletionDueAt <= now;
const workspaceDeleted = () =>
  new DomainError('invalid_credentials', 'This workspace was deleted; its API keys and sessions no longer work.');

export function createAuthenticator(deps: {
  prisma: Db;
  sessions: Sessions;
  cacheMs: number;
  /** Stores when a key was last used (its table's owner writes it). */
  recordKeyUse: (keyId: string, at: Date) => Promise<unknown>;
  onError?: (e: unknown) => void;
}): Authenticator {
  const { prisma, sessions } = deps;
  // A short memory of verified keys and users keeps a database round trip off most requests; its
  // TTL bounds how long a revoked key or a deleted user can still be served.
  const keys = new LRUCache<string, KeyRecord | 'unknown'>({ max: 10_000, ttl: Math.max(deps.cacheMs, 1) });
  const users = new LRUCache<string, UserRecord | 'unknown'>({ max: 10_000, ttl: Math.max(deps.cacheMs, 1) });
  const invalid = () => new DomainError('invalid_credentials', 'The API key is unknown, revoked or expired.');
  // A burst of requests with one key, arriving before it is cached, shares one lookup instead of taking
  // a database connection each.
  const keyLookups = new Map<string, Promise<KeyRecord | 'unknown'>>();

  async function loadKey(hash: string): Promise<KeyRecord | 'unknown'> {
    const cached = deps.cacheMs > 0 ? keys.get(hash) : undefined;
    if (cached) return cached;
    const pending = keyLookups.get(hash);
    if (pending) return pending;
    const lookup = (async () => {
      const row = await prisma.apiKey.findUnique({
        where: { hash },
        select: {
          id: true,
          tenantId: true,
          revokedAt: true,
          expiresAt: true,
          lastUsedAt: true,
          tenant: { select: { plan: true, deletionDueAt: true } },
        },
      });
      const record: KeyRecord | 'unknown' = row
        ? {
            id: row.id,
            tenantId: row.tenantId,
            revokedAt: row.revokedAt,
            expiresAt: row.expiresAt,
            lastUsedAt: row.lastUsedAt,
            ...row.tenant,
          }
        : 'unknown';
      if (deps.cacheMs > 0) keys.set(hash, record);
      return record;
    })().finally(() => keyLookups.delete(hash));
    keyLookups.set(hash, lookup);
    return lookup;
  }

  function touch(record: KeyRecord, now: Date) {
    if (record.lastUsedAt && now.getTime() - record.lastUsedAt.getTime() < LAST_USED_RESOLUTION_MS) return;
    record.lastUsedAt = now;
    deps.recordKeyUse(record.id, now).catch((e) => deps.onError?.(e));
  }

  async function byApiKey(secret: string): Promise<Principal> {
    return byRecord(await loadKey(hashApiKey(secret)), new Date());
  }

  function byRecord(record: KeyRecord | 'unknown', now: Date): Principal {
    if (record === 'unknown' || (record.revokedAt && record.revokedAt <= now) || (record.expiresAt && record.expiresAt <= now)) {
      throw invalid();
    }
    if (deleted(record.deletionDueAt, now)) throw workspaceDeleted();
    if (!PLANS_WITH_API_ACCESS.includes(record.plan)) {
      throw new DomainError(
        'plan_without_api_access',
        `API access needs the Growth or Scale plan; this tenant is on the ${record.plan} plan.`,
      );
    }
    touch(record, now);
    return { kind: 'api_key', tenantId: record.tenantId, plan: record.plan, apiKeyId: record.id };
  }

  /**
   * The user with what revokes their sessions, in one read that the cache keeps for `cacheMs`: that bounds how
   * long any revocation, this process's own included, can go unseen here (docs/operations.md).
   */
  async function loadUser(userId: string): Promise<UserRecord | 'unknown'> {
    const cached = deps.cacheMs > 0 ? users.get(userId) : undefined;
    if (cached) return cached;
    const row = await prisma.user.findUnique({
      where: { id: userId },
      select: {
        tenantId: true,
        role: true,
        sessionsValidAfter: true,
        tenant: { select: { plan: true, deletionDueAt: true, sessionsValidAfter: true } },
        revokedSessions: { where: { expiresAt: { gt: new Date() } }, select: { tokenHash: true } },
      },
    });
    const later = (a: Date | null, b: Date | null) => (a && b ? (a > b ? a : b) : (a ?? b));
    const user: UserRecord | 'unknown' = row
      ? {
          tenantId: row.tenantId,
          role: row.role,
          plan: row.tenant.plan,
          deletionDueAt: row.tenant.deletionDueAt,
          sessionsValidAfter: later(row.sessionsValidAfter, row.tenant.sessionsValidAfter),
          revoked: new Set(row.revokedSessions.map((r) => r.tokenHash)),
        }
      : 'unknown';
    if (deps.cacheMs > 0) users.set(userId, user);
    return user;
  }

  async function bySession(token: string): Promise<Principal> {
    const claims = await sessions.verify(token);
    const user = await loadUser(claims.userId);
    const sessionId = sessionIdOf(token);
    const revoked =
      user !== 'unknown' &&
      (user.revoked.has(sessionId) ||
        (user.sessionsValidAfter !== null && (claims.issuedAtMs === null || claims.issuedAtMs <= user.sessionsValidAfter.getTime())));
    if (user === 'unknown' || user.tenantId !== claims.tenantId) {
      throw new DomainError('invalid_credentials', 'The session token is invalid or has expired.');
    }
    if (revoked) throw new DomainError('invalid_credentials', 'This session was signed out or revoked; sign in again.');
    if (deleted(user.deletionDueAt, new Date())) throw workspaceDeleted();
    // The stored role wins over the token's, so a demotion takes effect without waiting for expiry.
    return {
      kind: 'session',
      tenantId: claims.tenantId,
      plan: user.plan,
      userId: claims.userId,
      role: user.role,
      sessionId,
      sessionExpiresAt: claims.expiresAt,
    };
  }

  return {
    authenticate: (credential) => (isApiKeyShaped(credential) ? byApiKey(credential) : bySession(credential)),
    known(credential) {
      if (deps.cacheMs <= 0 || !isApiKeyShaped(credential)) return undefined;
      const record = keys.get(hashApiKey(credential));
      if (!record || record === 'unknown') return undefined;
      try {
        return byRecord(record, new Date());
      } catch {
        // Refused: `authenticate` refuses it again, with the failure counted.
        return undefined;
      }
    },
  };
}
