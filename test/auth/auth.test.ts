import { createHmac, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../src/auth/api-keys.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { tenantWithKey, userWithSession } from '../support/factories.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const list = (headers: Record<string, string>) => t.app.inject({ method: 'GET', url: '/api/v1/customers', headers });

function expectProblem(res: { statusCode: number; headers: Record<string, unknown>; json: () => any }, status: number, code: string) {
  expect(res.statusCode).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  const body = res.json();
  expect(body).toMatchObject({ status, code });
  for (const f of ['type', 'title', 'detail']) expect(typeof body[f]).toBe('string');
}

describe('API keys', () => {
  it('are sk_ followed by 40 base62 characters', () => {
    for (let i = 0; i < 50; i++) expect(generateApiKey()).toMatch(/^sk_[A-Za-z0-9]{40}$/);
  });

  it('work as Authorization: Bearer', async () => {
    const { apiKey } = await tenantWithKey(t.prisma);
    expect((await list({ authorization: `Bearer ${apiKey}` })).statusCode).toBe(200);
  });

  it('work as X-API-Key', async () => {
    const { apiKey } = await tenantWithKey(t.prisma);
    expect((await list({ 'x-api-key': apiKey })).statusCode).toBe(200);
  });

  it('are accepted when both headers carry the same key', async () => {
    const { apiKey } = await tenantWithKey(t.prisma);
    expect((await list({ authorization: `Bearer ${apiKey}`, 'x-api-key': apiKey })).statusCode).toBe(200);
  });

  it('record when they were last used', async () => {
    const { apiKey, apiKeyId } = await tenantWithKey(t.prisma);
    await list({ 'x-api-key': apiKey });
    await expect.poll(async () => (await t.prisma.apiKey.findUnique({ where: { id: apiKeyId } }))?.lastUsedAt).not.toBeNull();
  });

  it('are stored only as a hash', async () => {
    const { apiKey, apiKeyId } = await tenantWithKey(t.prisma);
    const row = await t.prisma.apiKey.findUniqueOrThrow({ where: { id: apiKeyId } });
    expect(JSON.stringify(row)).not.toContain(apiKey.slice(10));
    expect(row.prefix).toBe(apiKey.slice(0, 10));
  });
});

describe('conflicting credentials', () => {
  it('answers 400 when Bearer and X-API-Key differ, both unknown', async () => {
    expectProblem(
      await list({ authorization: `Bearer ${generateApiKey()}`, 'x-api-key': generateApiKey() }),
      400,
      'conflicting_credentials',
    );
  });

  it('answers 400 when a valid Bearer key meets a different X-API-Key', async () => {
    const { apiKey } = await tenantWithKey(t.prisma);
    expectProblem(await list({ authorization: `Bearer ${apiKey}`, 'x-api-key': generateApiKey() }), 400, 'conflicting_credentials');
  });

  it('answers 400 when a different Bearer meets a valid X-API-Key', async () => {
    const { apiKey } = await tenantWithKey(t.prisma);
    expectProblem(await list({ authorization: `Bearer ${generateApiKey()}`, 'x-api-key': apiKey }), 400, 'conflicting_credentials');
  });

  it('answers 400 before checking the plan', async () => {
    const { apiKey } = await tenantWithKey(t.prisma, 'free');
    expectProblem(await list({ authorization: `Bearer ${apiKey}`, 'x-api-key': `${apiKey}x` }), 400, 'conflicting_credentials');
  });

  it('answers 400 when two valid keys of the same tenant differ', async () => {
    const a = await tenantWithKey(t.prisma);
    const b = await t.app.inject({ method: 'GET', url: '/healthz' });
    expect(b.statusCode).toBe(200);
    expectProblem(await list({ authorization: `Bearer ${a.apiKey}`, 'x-api-key': generateApiKey() }), 400, 'conflicting_credentials');
  });
});

describe('repeated and misplaced credential headers', () => {
  let base: { host: string; port: number };
  beforeAll(async () => {
    const listening = await createTestApp();
    await listening.app.listen({ host: '127.0.0.1', port: 0 });
    base = { host: '127.0.0.1', port: (listening.app.server.address() as AddressInfo).port };
    return () => listening.close();
  });

  // Over a real socket: Node keeps only the first Authorization header and joins repeated X-API-Keys,
  // so the repetition is visible only in the raw headers.
  const raw = (headers: Record<string, string | string[]>) =>
    new Promise<{ status: number; body: any }>((resolve, reject) => {
      const req = http.request({ ...base, path: '/api/v1/customers', headers }, (res) => {
        let data = '';
        res.on('data', (c) => (data += c));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(data) }));
      });
      req.on('error', reject);
      req.end();
    });

  it('answers 400 conflicting_credentials for two Authorization headers, even when the first is valid', async () => {
    const { apiKey } = await tenantWithKey(t.prisma);
    const res = await raw({ authorization: [`Bearer ${apiKey}`, `Bearer ${generateApiKey()}`] });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('conflicting_credentials');
  });

  it('answers 400 conflicting_credentials for two X-API-Key headers', async () => {
    const { apiKey } = await tenantWithKey(t.prisma);
    const res = await raw({ 'x-api-key': [apiKey, apiKey] });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('conflicting_credentials');
  });

  it('refuses a session token sent as X-API-Key with 401', async () => {
    const { tenantId } = await tenantWithKey(t.prisma, 'free');
    const { token } = await userWithSession(t.prisma, t.sessions, tenantId);
    expectProblem(await list({ 'x-api-key': token }), 401, 'invalid_credentials');
    expectProblem(await list({ authorization: `Bearer ${token}`, 'x-api-key': token }), 401, 'invalid_credentials');
    expect((await list({ authorization: `Bearer ${token}` })).statusCode).toBe(200);
  });
});

describe('missing and invalid credentials', () => {
  it('answers 401 missing_credentials with WWW-Authenticate: Bearer when nothing is sent', async () => {
    const res = await list({});
    expectProblem(res, 401, 'missing_credentials');
    expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
  });

  it('answers 401 invalid_credentials for an unknown key', async () => {
    expectProblem(await list({ authorization: `Bearer ${generateApiKey()}` }), 401, 'invalid_credentials');
  });

  it('answers 401 for a revoked key', async () => {
    const { apiKey, apiKeyId } = await tenantWithKey(t.prisma);
    await t.prisma.apiKey.update({ where: { id: apiKeyId }, data: { revokedAt: new Date() } });
    expectProblem(await list({ 'x-api-key': apiKey }), 401, 'invalid_credentials');
  });

  it('answers 401 for an expired key', async () => {
    const { apiKey, apiKeyId } = await tenantWithKey(t.prisma);
    await t.prisma.apiKey.update({ where: { id: apiKeyId }, data: { expiresAt: new Date(Date.now() - 1000) } });
    expectProblem(await list({ 'x-api-key': apiKey }), 401, 'invalid_credentials');
  });

  it('answers 401 for an Authorization header that is not Bearer', async () => {
    expectProblem(await list({ authorization: 'Basic dXNlcjpwYXNz' }), 401, 'invalid_credentials');
  });
});

describe('API keys remembered in memory', () => {
  let cached: TestApp;
  beforeAll(async () => {
    cached = await createTestApp({ env: { API_KEY_CACHE_MS: '5000' } });
  });
  afterAll(() => cached.close());
  const listOn = (headers: Record<string, string>) => cached.app.inject({ method: 'GET', url: '/api/v1/customers', headers });

  it('serve a key again without looking it up', async () => {
    const { apiKey } = await tenantWithKey(cached.prisma);
    expect((await listOn({ 'x-api-key': apiKey })).statusCode).toBe(200);
    // The first use records the key's last use without the request waiting for it; let it land first.
    await expect.poll(() => cached.queries.some((q) => q.startsWith('UPDATE') && q.includes('"api_keys"'))).toBe(true);
    cached.queries.length = 0;
    expect((await listOn({ 'x-api-key': apiKey })).statusCode).toBe(200);
    expect(cached.queries.filter((q) => q.includes('"api_keys"'))).toEqual([]);
  });

  it('keep refusing a key of a plan without API access with 403 plan_without_api_access', async () => {
    const { apiKey } = await tenantWithKey(cached.prisma, 'free');
    for (let i = 0; i < 2; i++) expectProblem(await listOn({ 'x-api-key': apiKey }), 403, 'plan_without_api_access');
  });

  it('keep refusing an unknown key with 401 invalid_credentials', async () => {
    const apiKey = generateApiKey();
    for (let i = 0; i < 2; i++) expectProblem(await listOn({ 'x-api-key': apiKey }), 401, 'invalid_credentials');
  });
});

describe('plans', () => {
  it.each(['growth', 'scale'] as const)('gives the %s plan API access', async (plan) => {
    const { apiKey } = await tenantWithKey(t.prisma, plan);
    expect((await list({ 'x-api-key': apiKey })).statusCode).toBe(200);
  });

  it.each(['free', 'starter'] as const)('refuses API keys of the %s plan with 403 plan_without_api_access', async (plan) => {
    const { apiKey } = await tenantWithKey(t.prisma, plan);
    expectProblem(await list({ 'x-api-key': apiKey }), 403, 'plan_without_api_access');
  });

  it('lets sessions in on the free plan', async () => {
    const { tenantId } = await tenantWithKey(t.prisma, 'free');
    const { token } = await userWithSession(t.prisma, t.sessions, tenantId, 'viewer');
    expect((await list({ authorization: `Bearer ${token}` })).statusCode).toBe(200);
  });
});

describe('sessions', () => {
  const b64u = (x: object | string) => Buffer.from(typeof x === 'string' ? x : JSON.stringify(x)).toString('base64url');
  const forge = (claims: object, alg: string, key: Buffer | string = randomBytes(32)) => {
    const head = `${b64u({ alg, typ: 'JWT' })}.${b64u(claims)}`;
    return alg === 'none' ? `${head}.` : `${head}.${createHmac('sha256', key).update(head).digest('base64url')}`;
  };

  it('logs in with email and password and the token works', async () => {
    const { tenantId } = await tenantWithKey(t.prisma, 'starter');
    const { email, password } = await userWithSession(t.prisma, t.sessions, tenantId);
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: email.toUpperCase(), password } });
    expect(res.statusCode).toBe(200);
    const { token, expires_at } = res.json();
    expect(new Date(expires_at).getTime()).toBeGreaterThan(Date.now());
    expect((await list({ authorization: `Bearer ${token}` })).statusCode).toBe(200);
  });

  it('refuses a wrong password with 401', async () => {
    const { tenantId } = await tenantWithKey(t.prisma);
    const { email } = await userWithSession(t.prisma, t.sessions, tenantId);
    expectProblem(
      await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password: 'wrong password' } }),
      401,
      'invalid_credentials',
    );
  });

  it('refuses an unknown email with the same 401', async () => {
    expectProblem(
      await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'nobody@example.com', password: 'whatever1' } }),
      401,
      'invalid_credentials',
    );
  });

  it('refuses a login body without a password with 400', async () => {
    expectProblem(
      await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'a@example.com' } }),
      400,
      'validation_failed',
    );
  });

  it('refuses a token signed with a foreign key', async () => {
    const { tenantId } = await tenantWithKey(t.prisma);
    const { user } = await userWithSession(t.prisma, t.sessions, tenantId);
    const now = Math.floor(Date.now() / 1000);
    const token = forge({ sub: user.id, tid: tenantId, role: 'owner', iat: now, exp: now + 60, iss: 'customer-health-service' }, 'HS256');
    expectProblem(await list({ authorization: `Bearer ${token}` }), 401, 'invalid_credentials');
  });

  it('refuses an unsigned (alg none) token', async () => {
    const { tenantId } = await tenantWithKey(t.prisma);
    const { user } = await userWithSession(t.prisma, t.sessions, tenantId);
    const now = Math.floor(Date.now() / 1000);
    const token = forge({ sub: user.id, tid: tenantId, role: 'owner', iat: now, exp: now + 60, iss: 'customer-health-service' }, 'none');
    expectProblem(await list({ authorization: `Bearer ${token}` }), 401, 'invalid_credentials');
  });

  it('refuses an expired token', async () => {
    const { tenantId } = await tenantWithKey(t.prisma);
    const { user } = await userWithSession(t.prisma, t.sessions, tenantId);
    const { createSessions } = await import('../../src/auth/sessions.ts');
    const { SESSION_SECRET } = await import('../support/app.ts');
    const shortLived = createSessions({ secret: SESSION_SECRET, ttlSeconds: -10 });
    const { token } = await shortLived.issue({ userId: user.id, tenantId, role: 'admin' });
    expectProblem(await list({ authorization: `Bearer ${token}` }), 401, 'invalid_credentials');
  });

  it('refuses a garbage token', async () => {
    expectProblem(await list({ authorization: `Bearer eyJ${randomBytes(20).toString('hex')}.abc.def` }), 401, 'invalid_credentials');
  });

  it('refuses the token of a deleted user', async () => {
    const { tenantId } = await tenantWithKey(t.prisma);
    const { user, token } = await userWithSession(t.prisma, t.sessions, tenantId);
    await t.prisma.user.delete({ where: { id: user.id } });
    expectProblem(await list({ authorization: `Bearer ${token}` }), 401, 'invalid_credentials');
  });

  it('refuses a token whose tenant claim is not the user’s tenant', async () => {
    const a = await tenantWithKey(t.prisma);
    const b = await tenantWithKey(t.prisma);
    const { user } = await userWithSession(t.prisma, t.sessions, a.tenantId);
    const { token } = await t.sessions.issue({ userId: user.id, tenantId: b.tenantId, role: 'owner' });
    expectProblem(await list({ authorization: `Bearer ${token}` }), 401, 'invalid_credentials');
  });
});

describe('roles', () => {
  const create = (token: string) =>
    t.app.inject({
      method: 'POST',
      url: '/api/v1/customers',
      headers: { authorization: `Bearer ${token}` },
      payload: { name: 'Role Test' },
    });

  it('lets a viewer read but not write', async () => {
    const { tenantId } = await tenantWithKey(t.prisma);
    const { token } = await userWithSession(t.prisma, t.sessions, tenantId, 'viewer');
    expect((await list({ authorization: `Bearer ${token}` })).statusCode).toBe(200);
    expectProblem(await create(token), 403, 'forbidden');
  });

  it('lets a member write', async () => {
    const { tenantId } = await tenantWithKey(t.prisma);
    const { token } = await userWithSession(t.prisma, t.sessions, tenantId, 'member');
    expect((await create(token)).statusCode).toBe(201);
  });

  it('applies a demotion at once, whatever role the token claims', async () => {
    const { tenantId } = await tenantWithKey(t.prisma);
    const { user, token } = await userWithSession(t.prisma, t.sessions, tenantId, 'admin');
    await t.prisma.user.update({ where: { id: user.id }, data: { role: 'viewer' } });
    expectProblem(await create(token), 403, 'forbidden');
  });
});
