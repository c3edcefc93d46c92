import { decoyHash, hashPassword, verifyPassword } from '../auth/passwords.ts';
import type { Sessions } from '../auth/sessions.ts';
import type { Db } from '../db/prisma.ts';
import { DomainError } from '../errors.ts';
import { issueApiKey } from './api-keys.ts';
import { onPrisma } from '../db/sql.ts';
import { recordAudit, type Actor } from './audit.ts';
import { insertTenant, insertUser } from './workspace.ts';

type Plan = 'free' | 'starter' | 'growth' | 'scale';
type Role = 'owner' | 'admin' | 'member' | 'viewer';

/** Tenants, their users and signing in (Prisma: only the API, the CLI and the demo seed write these rows). */
export function createAccountService(deps: { prisma: Db; sessions?: Sessions }) {
  const { prisma } = deps;
  return {
    /** A tenant with its first API key; the key's secret is returned this once. */
    async createTenant(input: { name: string; plan: Plan; keyName?: string }) {
      const tenant = await insertTenant(prisma, input);
      const { key, secret } = await issueApiKey(prisma, { tenantId: tenant.id, name: input.keyName ?? 'Default key' });
      return { tenant, apiKey: secret, apiKeyId: key.id };
    },
    async tenantExists(tenantId: string): Promise<boolean> {
      return Boolean(await prisma.tenant.findUnique({ where: { id: tenantId }, select: { id: true } }));
    },
    async tenantOfUser(userId: string): Promise<string | null> {
      return (await prisma.user.findUnique({ where: { id: userId }, select: { tenantId: true } }))?.tenantId ?? null;
    },
    async emailTaken(email: string): Promise<boolean> {
      return Boolean(await prisma.user.findUnique({ where: { email }, select: { id: true } }));
    },
    async createUser(actor: Actor, input: { email: string; password: string; role: Role }) {
      const passwordHash = await hashPassword(input.password);
      return prisma.$transaction(async (tx) => {
        const user = await insertUser(tx, { tenantId: actor.tenantId, email: input.email, role: input.role, passwordHash });
        await recordAudit(onPrisma(tx), actor, {
          action: 'user.created',
          targetType: 'user',
          targetId: user.id,
          changes: { email: user.email, role: user.role },
        });
        return user;
      });
    },
    /** A session for the right email and password; the same answer, after the same work, for an unknown email. */
    async login(email: string, password: string, from: { clientAddress: string; requestId: string }) {
      const found = await prisma.user.findUnique({
        where: { email },
        select: { id: true, tenantId: true, role: true, passwordHash: true, tenant: { select: { deletionDueAt: true } } },
      });
      // The users of a workspace whose deletion window has ended are as good as removed (docs/data-lifecycle.md).
      const due = found?.tenant.deletionDueAt;
      const user = due && due <= new Date() ? null : found;
      const ok = await verifyPassword(user?.passwordHash ?? (await decoyHash()), password);
      // Attempts on a known email are the tenant's to see; an unknown email belongs to no tenant.
      const actor: Actor | null = user && { tenantId: user.tenantId, type: 'user', id: user.id, ...from };
      if (!user || !ok) {
        if (actor) await recordAudit(onPrisma(prisma), actor, { action: 'session.sign_in_failed', targetType: 'user', targetId: user!.id });
        throw new DomainError('invalid_credentials', 'The email or password is wrong.');
      }
      if (!deps.sessions) throw new Error('signing in needs the session issuer');
      const session = await deps.sessions.issue({ userId: user.id, tenantId: user.tenantId, role: user.role });
      await recordAudit(onPrisma(prisma), actor!, { action: 'session.signed_in', targetType: 'user', targetId: user.id });
      return session;
    },
    /**
     * Signs one session out on the server: its id is refused until the token would have expired anyway. The
     * user's revocations that have expired go in the same transaction (rows others hold are left for later).
     */
    async signOut(actor: Actor & { id: string }, session: { id: string; expiresAt: Date }): Promise<void> {
      await prisma.$transaction(async (tx) => {
        const sql = onPrisma(tx);
        await sql.query(
          `DELETE FROM revoked_sessions WHERE token_hash IN (
             SELECT token_hash FROM revoked_sessions WHERE user_id = $1::uuid AND expires_at <= now() FOR UPDATE SKIP LOCKED)`,
          [actor.id],
        );
        await sql.query(
          `INSERT INTO revoked_sessions (token_hash, user_id, expires_at) VALUES ($1, $2::uuid, $3) ON CONFLICT (token_hash) DO NOTHING`,
          [session.id, actor.id, session.expiresAt],
        );
        await recordAudit(sql, actor, {
          action: 'session.signed_out',
          targetType: 'user',
          targetId: actor.id,
          changes: { session_expires_at: session.expiresAt.toISOString() },
        });
      });
    },
  };
}

export type AccountService = ReturnType<typeof createAccountService>;
