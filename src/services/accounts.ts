import { decoyHash, hashPassword, verifyPassword } from '../auth/passwords.ts';
import type { Sessions } from '../auth/sessions.ts';
import type { Db } from '../db/prisma.ts';
import { DomainError } from '../errors.ts';
import { issueApiKey } from './api-keys.ts';

type Plan = 'free' | 'starter' | 'growth' | 'scale';
type Role = 'owner' | 'admin' | 'member' | 'viewer';

/** Tenants, their users and signing in (Prisma: only the API, the CLI and the demo seed write these rows). */
export function createAccountService(deps: { prisma: Db; sessions?: Sessions }) {
  const { prisma } = deps;
  return {
    /** A tenant with its first API key; the key's secret is returned this once. */
    async createTenant(input: { name: string; plan: Plan; keyName?: string }) {
      const tenant = await prisma.tenant.create({ data: { name: input.name, plan: input.plan } });
      const { key, secret } = await issueApiKey(prisma, { tenantId: tenant.id, name: input.keyName ?? 'Default key' });
      return { tenant, apiKey: secret, apiKeyId: key.id };
    },
    async tenantExists(tenantId: string): Promise<boolean> {
      return Boolean(await prisma.tenant.findUnique({ where: { id: tenantId }, select: { id: true } }));
    },
    async emailTaken(email: string): Promise<boolean> {
      return Boolean(await prisma.user.findUnique({ where: { email }, select: { id: true } }));
    },
    async createUser(input: { tenantId: string; email: string; password: string; role: Role }) {
      return prisma.user.create({
        data: { tenantId: input.tenantId, email: input.email, role: input.role, passwordHash: await hashPassword(input.password) },
      });
    },
    /** A session for the right email and password; the same answer, after the same work, for an unknown email. */
    async login(email: string, password: string) {
      const user = await prisma.user.findUnique({
        where: { email },
        select: { id: true, tenantId: true, role: true, passwordHash: true },
      });
      const ok = await verifyPassword(user?.passwordHash ?? (await decoyHash()), password);
      if (!user || !ok) throw new DomainError('invalid_credentials', 'The email or password is wrong.');
      if (!deps.sessions) throw new Error('signing in needs the session issuer');
      return deps.sessions.issue({ userId: user.id, tenantId: user.tenantId, role: user.role });
    },
  };
}

export type AccountService = ReturnType<typeof createAccountService>;
