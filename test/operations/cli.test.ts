import { operator } from '../../src/services/audit.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileDatabaseUrl } from '../support/database.ts';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInboundSecretStore } from '../../src/services/integrations.ts';
import { createTestApp, type TestApp, testSecretBox } from '../support/app.ts';
import { tenantWithKey } from '../support/factories.ts';
import { createSecretBox } from '../../src/crypto/secret-box.ts';
import { createPrisma } from '../../src/db/prisma.ts';
import { admin, ROOT } from '../support/spawn.ts';

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
        signingKey: before.seal('signing-key-clear'),
        previousSigningKey: before.seal('old-signing-key-clear'),
      },
    });
    const keys = { ENCRYPTION_KEY: `new:${newKey.key.toString('base64')},old:${oldKey.key.toString('base64')}` };

    const first = await admin(['secrets:reencrypt'], { ...env, ...keys });
    expect(first.code).toBe(0);
    expect(json(first.stdout).resealed).toBeGreaterThanOrEqual(5);
    const after = createSecretBox([newKey]);
    const i = await prisma.inboundSecret.findUniqueOrThrow({ where: { id: inbound.id } });
    const e = await prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } });
    await prisma.$disconnect();
    // Readable with the new key alone: the old one can go.
    expect(after.open(i.secret)).toBe('inbound-clear');
    expect(after.open(e.secret)).toBe('endpoint-clear');
    expect(after.open(e.previousSecret!)).toBe('old-endpoint-clear');
    expect(after.open(e.signingKey!)).toBe('signing-key-clear');
    expect(after.open(e.previousSigningKey!)).toBe('old-signing-key-clear');
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

  it('user:role and user:remove change a user, keep an owner, and are in the audit log as the operator', async () => {
    const { tenant_id } = json((await admin(['tenant:create', '--name', 'Roles', '--plan', 'free'], env)).stdout);
    const make = async (role: string) =>
      json(
        (
          await admin(
            [
              'user:create',
              '--tenant',
              tenant_id,
              '--email',
              `${role}-${Date.now()}@example.com`,
              '--password',
              'long enough pw',
              '--role',
              role,
            ],
            env,
          )
        ).stdout,
      ).user_id as string;
    const owner = await make('owner');
    const member = await make('member');
    expect(json((await admin(['user:role', '--user-id', member, '--role', 'admin'], env)).stdout)).toEqual({
      user_id: member,
      role: 'admin',
    });
    const lastOwner = await admin(['user:role', '--user-id', owner, '--role', 'viewer'], env);
    expect(lastOwner.code).not.toBe(0);
    expect(lastOwner.stderr).toMatch(/at least one owner/);
    expect(json((await admin(['user:remove', '--user-id', member], env)).stdout)).toEqual({ removed: true });
    const prisma = createPrisma({ url: env.DATABASE_URL, poolSize: 1 });
    const events = await prisma.auditEvent.findMany({
      where: { tenantId: tenant_id, action: { in: ['user.role_changed', 'user.removed'] } },
    });
    await prisma.$disconnect();
    expect(events.map((e) => [e.action, e.actorType]).sort()).toEqual([
      ['user.removed', 'operator'],
      ['user.role_changed', 'operator'],
    ]);
  }, 120_000);

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

describe('npm run admin -- inbound:replay', () => {
  const FIXTURES = join(ROOT, 'test', 'fixtures', 'providers');
  // The CLI opens the tenant's secret with the same key as the test app that sealed it.
  const keyEnv = { ...env, ENCRYPTION_KEY: `test:${Buffer.alloc(32, 7).toString('base64')}` };
  let t: TestApp;
  let worker: { close(): Promise<void> };
  let url: string;
  beforeAll(async () => {
    t = await createTestApp();
    worker = t.startWorker();
    url = await t.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await worker.close();
    await t.close();
  });
  const tenantWith = async (provider: 'github' | 'slack' | 'stripe') => {
    const { tenantId } = await tenantWithKey(t.prisma);
    await createInboundSecretStore(t.prisma, testSecretBox(), { cacheMs: 0 }).put({ tenantId, provider }, operator(tenantId));
    return tenantId;
  };

  it('signs recorded requests with the tenant’s current secret, posts them to the service and prints each answer', async () => {
    const tenantId = await tenantWith('github');
    const files = [join(FIXTURES, 'github', 'ping.json'), join(FIXTURES, 'github', 'push.json')];
    const r = await admin(['inbound:replay', '--tenant', tenantId, '--provider', 'github', '--url', url, ...files], keyEnv);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const out = json(r.stdout);
    expect(out.url).toBe(`${url}/api/v1/webhooks/in/github/${tenantId}`);
    expect(out.answers).toEqual([
      { file: files[0], status: 200, body: { ok: true, pong: true } },
      { file: files[1], status: 202, body: { received: true, id: expect.any(String), duplicate: false } },
    ]);
    await expect.poll(() => t.prisma.signal.count({ where: { tenantId, kind: 'code.push' } }), { timeout: 10_000 }).toBe(1);
  });

  it('replays a recorded Stripe story of the current API version, sent as Stripe sends it, with its effect', async () => {
    const tenantId = await tenantWith('stripe');
    const files = ['01.customer.created', '03.invoice.created'].map((n) => join(FIXTURES, 'stripe', `2025-09-30.clover.${n}.json`));
    const r = await admin(['inbound:replay', '--tenant', tenantId, '--provider', 'stripe', '--url', url, ...files], keyEnv);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(json(r.stdout).answers.map((a: { status: number }) => a.status)).toEqual([202, 202]);
    await expect.poll(() => t.prisma.invoice.count({ where: { tenantId } }), { timeout: 10_000 }).toBe(1);
  });

  it('exits 3 and prints the problem when the service refuses a request', async () => {
    const tenantId = await tenantWith('slack');
    const file = join(mkdtempSync(join(tmpdir(), 'replay-')), 'not-json.json');
    writeFileSync(file, JSON.stringify({ description: 'wrong content type', headers: { 'Content-Type': 'text/plain' }, rawBody: 'hello' }));
    const r = await admin(['inbound:replay', '--tenant', tenantId, '--provider', 'slack', '--url', url, file], keyEnv);
    expect(r.code).toBe(3);
    expect(json(r.stdout).answers).toEqual([{ file, status: 415, body: expect.objectContaining({ code: 'unsupported_media_type' }) }]);
  });

  it.each([
    [['--provider', 'slack'], /no inbound secret for slack/],
    [['--provider', 'discord'], /private key only Discord holds/],
    [['--provider', 'github', '--url', 'not a url'], /--url/],
  ])('fails with a message for %j', async (args, message) => {
    const tenantId = await tenantWith('github');
    const r = await admin(['inbound:replay', '--tenant', tenantId, ...args, join(FIXTURES, 'github', 'push.json')], keyEnv);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(message);
  });

  it('fails with a message for a file that is not a recorded request', async () => {
    const tenantId = await tenantWith('github');
    const file = join(mkdtempSync(join(tmpdir(), 'replay-')), 'bad.json');
    writeFileSync(file, JSON.stringify({ body: {} }));
    const r = await admin(['inbound:replay', '--tenant', tenantId, '--provider', 'github', '--url', url, file], keyEnv);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/headers/);
  });
});
