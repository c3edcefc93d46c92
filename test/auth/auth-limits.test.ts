import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../src/auth/api-keys.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { tenantWithKey, userWithSession } from '../support/factories.ts';

// Credential guessing is limited per client address and per account, whatever else the request
// carries, and the limits hold when Redis is away.
const LIMITS = { LOGIN_ATTEMPTS_PER_ADDRESS: '4', LOGIN_ATTEMPTS_PER_ACCOUNT: '3', AUTH_FAILURES_PER_ADDRESS: '5' };

// Counters in Redis outlive a run by up to a minute: every run uses addresses of its own.
const run = randomBytes(2).toString('hex');
let n = 0;
const address = () => `2001:db8:${run}:${(++n).toString(16)}::1`;
const login = (t: TestApp, email: string, from: string, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'POST', url: '/api/v1/auth/login', remoteAddress: from, headers, payload: { email, password: 'a wrong guess' } });

function expect429(res: { statusCode: number; headers: Record<string, unknown>; json: () => any }) {
  expect(res.statusCode).toBe(429);
  expect(res.json().code).toBe('rate_limited');
  expect(String(res.headers['retry-after'])).toMatch(/^[1-9]\d*$/);
}

describe('sign-in attempts (Redis shared)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: LIMITS, redis: true });
  });
  afterAll(() => t.close());

  it('limits attempts per client address, even when a valid API key comes along', async () => {
    const { apiKey, tenantId } = await tenantWithKey(t.prisma, 'scale');
    const from = address();
    const statuses = [];
    // Different accounts, so only the address limit (4) can apply.
    for (let i = 0; i < 5; i++) {
      const { email } = await userWithSession(t.prisma, t.sessions, tenantId);
      statuses.push((await login(t, email, from, { 'x-api-key': apiKey })).statusCode);
    }
    expect(statuses.slice(0, 4)).toEqual([401, 401, 401, 401]);
    const { email } = await userWithSession(t.prisma, t.sessions, tenantId);
    expect429(await login(t, email, from, { 'x-api-key': apiKey }));
  });

  it('limits attempts per account across client addresses', async () => {
    const { tenantId } = await tenantWithKey(t.prisma);
    const { email } = await userWithSession(t.prisma, t.sessions, tenantId);
    for (let i = 0; i < 3; i++) expect((await login(t, email, address())).statusCode).toBe(401);
    expect429(await login(t, email.toUpperCase(), address()));
  });

  it('refuses the right password too once the account is over its limit', async () => {
    const { tenantId } = await tenantWithKey(t.prisma);
    const { email, password } = await userWithSession(t.prisma, t.sessions, tenantId);
    for (let i = 0; i < 3; i++) await login(t, email, address());
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', remoteAddress: address(), payload: { email, password } });
    expect429(res);
  });

  it('applies the same limit to the GraphQL login mutation', async () => {
    const { tenantId, apiKey } = await tenantWithKey(t.prisma);
    const { email } = await userWithSession(t.prisma, t.sessions, tenantId);
    const gql = () =>
      t.app.inject({
        method: 'POST',
        url: '/graphql',
        remoteAddress: address(),
        headers: { 'x-api-key': apiKey },
        payload: { query: 'mutation($e: String!) { login(email: $e, password: "guess") { token } }', variables: { e: email } },
      });
    for (let i = 0; i < 3; i++) expect((await gql()).json().errors[0].extensions.code).toBe('invalid_credentials');
    expect((await gql()).json().errors[0].extensions.code).toBe('rate_limited');
  });
});

describe('sign-in attempts with Redis unreachable', () => {
  let t: TestApp;
  let deadRedis: Redis;
  beforeAll(async () => {
    // Nothing listens on port 1: every command fails at once.
    deadRedis = new Redis('redis://127.0.0.1:1', { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0 });
    deadRedis.on('error', () => undefined);
    t = await createTestApp({ env: LIMITS, redisClient: deadRedis });
  });
  afterAll(async () => {
    await t.close();
    deadRedis.disconnect();
  });

  it('still limits attempts per client address, counting in the process', async () => {
    const { tenantId } = await tenantWithKey(t.prisma);
    const from = address();
    for (let i = 0; i < 4; i++) {
      const { email } = await userWithSession(t.prisma, t.sessions, tenantId);
      expect((await login(t, email, from)).statusCode).toBe(401);
    }
    const { email } = await userWithSession(t.prisma, t.sessions, tenantId);
    expect429(await login(t, email, from));
  });

  it('still limits failed authentications per client address', async () => {
    const from = address();
    for (let i = 0; i < 5; i++) {
      const res = await t.app.inject({
        method: 'GET',
        url: '/api/v1/customers',
        remoteAddress: from,
        headers: { 'x-api-key': generateApiKey() },
      });
      expect(res.statusCode).toBe(401);
    }
    expect429(
      await t.app.inject({ method: 'GET', url: '/api/v1/customers', remoteAddress: from, headers: { 'x-api-key': generateApiKey() } }),
    );
  });
});

describe('failed authentications', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { ...LIMITS, API_KEY_CACHE_MS: '2000' }, redis: true });
  });
  afterAll(() => t.close());

  const list = (from: string, headers: Record<string, string>) =>
    t.app.inject({ method: 'GET', url: '/api/v1/customers?limit=1', remoteAddress: from, headers });
  const keyLookups = () => t.queries.filter((q) => /"api_keys"/.test(q)).length;

  it('answers 429 with Retry-After once an address has spent its failures, without another key lookup', async () => {
    const from = address();
    for (let i = 0; i < 5; i++) expect((await list(from, { 'x-api-key': generateApiKey() })).statusCode).toBe(401);
    const before = keyLookups();
    expect429(await list(from, { 'x-api-key': generateApiKey() }));
    expect(keyLookups()).toBe(before);
  });

  it('counts bad session tokens as failures too', async () => {
    const from = address();
    for (let i = 0; i < 5; i++) expect((await list(from, { authorization: 'Bearer eyJhbGciOiJIUzI1NiJ9.e30.x' })).statusCode).toBe(401);
    expect429(await list(from, { authorization: 'Bearer eyJhbGciOiJIUzI1NiJ9.e30.x' }));
  });

  it('counts an IPv6 client by its /64, so a fresh address per guess does not help', async () => {
    const prefix = address().replace(/::1$/, '');
    for (let i = 0; i < 5; i++) expect((await list(`${prefix}::${i + 10}`, { 'x-api-key': generateApiKey() })).statusCode).toBe(401);
    expect429(await list(`${prefix}::abcd`, { 'x-api-key': generateApiKey() }));
  });

  it('keeps serving a key that worked lately from an address whose failures are spent, as a shared egress serves other clients', async () => {
    const shared = address();
    const { apiKey } = await tenantWithKey(t.prisma);
    expect((await list(shared, { 'x-api-key': apiKey })).statusCode).toBe(200);
    for (let i = 0; i < 5; i++) expect((await list(shared, { 'x-api-key': generateApiKey() })).statusCode).toBe(401);
    expect429(await list(shared, { 'x-api-key': generateApiKey() }));
    expect((await list(shared, { 'x-api-key': apiKey })).statusCode).toBe(200);
    // A key this process has not seen work is held back with the guesses.
    expect429(await list(shared, { 'x-api-key': (await tenantWithKey(t.prisma)).apiKey }));
  });

  it('leaves other addresses alone', async () => {
    const noisy = address();
    for (let i = 0; i < 6; i++) await list(noisy, { 'x-api-key': generateApiKey() });
    const { apiKey } = await tenantWithKey(t.prisma);
    expect((await list(address(), { 'x-api-key': apiKey })).statusCode).toBe(200);
  });

  it('does not count successful authentications', async () => {
    const from = address();
    const { apiKey } = await tenantWithKey(t.prisma);
    for (let i = 0; i < 8; i++) expect((await list(from, { 'x-api-key': apiKey })).statusCode).toBe(200);
  });

  it('remembers an unknown key briefly instead of looking it up again', async () => {
    const key = generateApiKey();
    const from = address();
    await list(from, { 'x-api-key': key });
    const before = keyLookups();
    expect((await list(from, { 'x-api-key': key })).statusCode).toBe(401);
    expect(keyLookups()).toBe(before);
  });
});

describe('inbound addresses for unknown tenants', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: LIMITS });
  });
  afterAll(() => t.close());

  const post = (tenantId: string, from: string) =>
    t.app.inject({ method: 'POST', url: `/api/v1/webhooks/in/stripe/${tenantId}`, remoteAddress: from, payload: { id: 'evt_1' } });
  const tenantLookups = () => t.queries.filter((q) => /FROM "public"\."tenants"/.test(q)).length;

  it('answers 429 once an address has named too many tenants that do not exist, without another lookup', async () => {
    const from = address();
    for (let i = 0; i < 5; i++) expect((await post(crypto.randomUUID(), from)).statusCode).toBe(404);
    const before = tenantLookups();
    expect429(await post(crypto.randomUUID(), from));
    expect(tenantLookups()).toBe(before);
  });

  it('remembers an unknown tenant briefly instead of looking it up again', async () => {
    const id = crypto.randomUUID();
    await post(id, address());
    const before = tenantLookups();
    expect((await post(id, address())).statusCode).toBe(404);
    expect(tenantLookups()).toBe(before);
  });

  it('leaves a tenant that exists reachable from the address that named the unknown ones, a provider’s address being every tenant’s', async () => {
    const provider = address();
    const { tenantId } = await tenantWithKey(t.prisma);
    expect((await post(tenantId, provider)).statusCode).toBe(403);
    // Someone points the provider at made-up addresses of ours, from the same sender.
    for (let i = 0; i < 6; i++) await post(crypto.randomUUID(), provider);
    expect429(await post(crypto.randomUUID(), provider));
    expect((await post(tenantId, provider)).statusCode).toBe(403);
  });

  it('leaves a known tenant reachable from other addresses', async () => {
    const noisy = address();
    for (let i = 0; i < 6; i++) await post(crypto.randomUUID(), noisy);
    const { tenantId } = await tenantWithKey(t.prisma);
    // 403: the tenant exists but has no Stripe secret yet, which is past the tenant lookup.
    expect((await post(tenantId, address())).statusCode).toBe(403);
  });
});
