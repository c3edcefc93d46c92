import { describe, expect, it } from 'vitest';
import { fileDatabaseUrl } from './support/database.ts';
import { randomBytes } from 'node:crypto';
import { createSecretBox } from '../src/crypto/secret-box.ts';
import { createPrisma } from '../src/db/prisma.ts';
import { admin } from './support/spawn.ts';

const env = { DATABASE_URL: await fileDatabaseUrl(), LOG_LEVEL: 'silent' };
const json = (stdout: string) => JSON.parse(stdout.trim().split('\n').pop()!);

describe('npm run admin', () => {
  it('secrets:reencrypt re-seals secrets of a retired key with the current one, and then has nothing left to do', async () => {
    const oldKey = { id: 'old', key: randomBytes(32) };
    const newKey = { id: 'new', key: randomBytes(32) };
    const before = createSecretBox([oldKey]);
    const { tenant_id } = json((await admin(['tenant:create', '--name', 'Keys rotate', '--plan', 'scale'], env)).stdout);
    const prisma = createPrisma({ url: env.DATABASE_URL, poolSize: 1 });
    const inbound = await prisma.inboundSecret.create({
      data: { tenantId: tenant_id, provider: 'github', secret: before.seal('inbound-clear'), verifyToken: null },
    });
    const endpoint = await prisma.webhookEndpoint.create({
      data: {
        tenantId: tenant_id,
        url: 'https://example.com/h',
        events: ['alert.created'],
        secret: before.seal('endpoint-clear'),
        previousSecret: before.seal('old-endpoint-clear'),
      },
    });
    const keys = { ENCRYPTION_KEY: `new:${newKey.key.toString('base64')},old:${oldKey.key.toString('base64')}` };

    const first = await admin(['secrets:reencrypt'], { ...env, ...keys });
    expect(first.code).toBe(0);
    expect(json(first.stdout).resealed).toBeGreaterThanOrEqual(3);
    const after = createSecretBox([newKey]);
    const i = await prisma.inboundSecret.findUniqueOrThrow({ where: { id: inbound.id } });
    const e = await prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } });
    await prisma.$disconnect();
    // Readable with the new key alone: the old one can go.
    expect(after.open(i.secret)).toBe('inbound-clear');
    expect(after.open(e.secret)).toBe('endpoint-clear');
    expect(after.open(e.previousSecret!)).toBe('old-endpoint-clear');
    expect(json((await admin(['secrets:reencrypt'], { ...env, ...keys })).stdout).resealed).toBe(0);
  });

  it('tenant:create prints one JSON object with the tenant id and a new API key', async () => {
    const r = await admin(['tenant:create', '--name', 'Acme', '--plan', 'scale'], env);
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
    const out = json(r.stdout);
    expect(out.tenant_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(out.api_key).toMatch(/^sk_[A-Za-z0-9]{40}$/);
  });

  it('apikey:create, then apikey:revoke, change whether the key is valid', async () => {
    const { tenant_id } = json((await admin(['tenant:create', '--name', 'Keys', '--plan', 'growth'], env)).stdout);
    const created = json((await admin(['apikey:create', '--tenant', tenant_id, '--name', 'deploy'], env)).stdout);
    expect(created.api_key).toMatch(/^sk_/);
    const revoked = await admin(['apikey:revoke', '--key-id', created.api_key_id], env);
    expect(json(revoked.stdout)).toEqual({ revoked: true });
    const prisma = createPrisma({ url: env.DATABASE_URL, poolSize: 1 });
    const key = await prisma.apiKey.findUniqueOrThrow({ where: { id: created.api_key_id } });
    await prisma.$disconnect();
    expect(key.revokedAt).not.toBeNull();
    expect(key.name).toBe('deploy');
  });

  it('user:create makes a user of the tenant with the role and an Argon2id password hash', async () => {
    const { tenant_id } = json((await admin(['tenant:create', '--name', 'Users', '--plan', 'free'], env)).stdout);
    const email = `cli-${Date.now()}@example.com`;
    const r = await admin(
      ['user:create', '--tenant', tenant_id, '--email', email.toUpperCase(), '--password', 'long enough pw', '--role', 'admin'],
      env,
    );
    expect(r.code).toBe(0);
    const prisma = createPrisma({ url: env.DATABASE_URL, poolSize: 1 });
    const user = await prisma.user.findUniqueOrThrow({ where: { id: json(r.stdout).user_id } });
    await prisma.$disconnect();
    expect(user).toMatchObject({ tenantId: tenant_id, email, role: 'admin' });
    expect(user.passwordHash).toMatch(/^\$argon2id\$/);
  });

  it.each([
    [['tenant:create', '--name', 'X', '--plan', 'platinum'], /--plan/],
    [['tenant:create', '--plan', 'scale'], /--name: is required/],
    [['apikey:revoke', '--key-id', '00000000-0000-4000-8000-000000000000'], /no API key/],
    [['apikey:create', '--tenant', 'not-a-uuid'], /--tenant/],
    [['frobnicate'], /usage/],
  ])('fails with a message and a non-zero exit for %j', async (args, message) => {
    const r = await admin(args, env);
    expect(r.code).not.toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(message);
  });
});
