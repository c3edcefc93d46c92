import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.ts';
import { tenantWithKey, userWithSession } from '../support/factories.ts';

const get = (t: TestApp, key: string) => t.app.inject({ method: 'GET', url: '/api/v1/customers?limit=1', headers: { 'x-api-key': key } });

describe('in memory', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { RATE_LIMIT_GROWTH: '5', RATE_LIMIT_SCALE: '8' } });
  });
  afterAll(() => t.close());

  it('answers 429 rate_limited with Retry-After once the plan limit is spent', async () => {
    const { apiKey } = await tenantWithKey(t.prisma, 'growth');
    for (let i = 0; i < 5; i++) expect((await get(t, apiKey)).statusCode).toBe(200);
    const res = await get(t, apiKey);
    expect(res.statusCode).toBe(429);
    expect(res.headers['content-type']).toMatch(/problem\+json/);
    expect(res.json().code).toBe('rate_limited');
    expect(String(res.headers['retry-after'])).toMatch(/^[1-9]\d*$/);
  });

  it('gives the scale plan its own, higher limit', async () => {
    const { apiKey } = await tenantWithKey(t.prisma, 'scale');
    const statuses = [];
    for (let i = 0; i < 9; i++) statuses.push((await get(t, apiKey)).statusCode);
    expect(statuses.filter((s) => s === 200)).toHaveLength(8);
    expect(statuses[8]).toBe(429);
  });

  it('sends RateLimit-Limit, -Remaining and -Reset on every response', async () => {
    const { apiKey } = await tenantWithKey(t.prisma, 'growth');
    const res = await get(t, apiKey);
    expect(res.headers['ratelimit-limit']).toBe('5');
    expect(res.headers['ratelimit-remaining']).toBe('4');
    expect(Number(res.headers['ratelimit-reset'])).toBeGreaterThan(0);
  });

  it('counts all keys and sessions of a tenant together', async () => {
    const { apiKey, tenantId } = await tenantWithKey(t.prisma, 'growth');
    const { token } = await userWithSession(t.prisma, t.sessions, tenantId);
    for (let i = 0; i < 3; i++) expect((await get(t, apiKey)).statusCode).toBe(200);
    const bySession = (n: number) =>
      t.app
        .inject({ method: 'GET', url: '/api/v1/customers', headers: { authorization: `Bearer ${token}` } })
        .then((r) => r.statusCode === n);
    expect(await bySession(200)).toBe(true);
    expect(await bySession(200)).toBe(true);
    expect(await bySession(429)).toBe(true);
  });

  it('keeps tenants apart', async () => {
    const a = await tenantWithKey(t.prisma, 'growth');
    const b = await tenantWithKey(t.prisma, 'growth');
    for (let i = 0; i < 6; i++) await get(t, a.apiKey);
    expect((await get(t, a.apiKey)).statusCode).toBe(429);
    expect((await get(t, b.apiKey)).statusCode).toBe(200);
  });

  it('does not count refused credentials against the tenant', async () => {
    const { apiKey } = await tenantWithKey(t.prisma, 'growth');
    for (let i = 0; i < 10; i++)
      await t.app.inject({ method: 'GET', url: '/api/v1/customers', headers: { 'x-api-key': apiKey, authorization: 'Bearer sk_x' } });
    expect((await get(t, apiKey)).statusCode).toBe(200);
  });
});

describe('without a credential', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  const anonymous = (remoteAddress: string) =>
    t.app.inject({ method: 'POST', url: '/graphql', remoteAddress, payload: { query: '{ __typename }' } }).then((r) => r.statusCode);

  it('counts every address of an IPv6 /64 together', async () => {
    const statuses: number[] = [];
    for (let i = 1; i <= 31; i++) statuses.push(await anonymous(`2001:db8:5:6::${i.toString(16)}`));
    expect(statuses.slice(0, 30).every((s) => s === 200)).toBe(true);
    expect(statuses[30]).toBe(429);
    expect(await anonymous('2001:db8:5:6:ffff:ffff:ffff:ffff')).toBe(429);
    // The next /64 has a limit of its own.
    expect(await anonymous('2001:db8:5:7::1')).toBe(200);
  });
});

describe('across two API processes sharing Redis', () => {
  let one: TestApp;
  let two: TestApp;
  beforeAll(async () => {
    // Counters are keyed by tenant id, and every test makes a new tenant, so runs never share one.
    const env = { RATE_LIMIT_GROWTH: '6' };
    one = await createTestApp({ env, redis: true });
    two = await createTestApp({ env, redis: true });
    await one.app.listen({ port: 0, host: '127.0.0.1' });
    await two.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await one.close();
    await two.close();
  });

  it('enforces one limit for the tenant whichever process answers', async () => {
    const { apiKey } = await tenantWithKey(one.prisma, 'growth');
    const urls = [one, two].map((t) => {
      const addr = t.app.server.address() as { port: number };
      return `http://127.0.0.1:${addr.port}/api/v1/customers?limit=1`;
    });
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await fetch(urls[i % 2], { headers: { 'x-api-key': apiKey, 'x-request-id': `rl-${randomUUID()}` } });
      statuses.push(res.status);
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(6);
    expect(statuses.slice(6).every((s) => s === 429)).toBe(true);
  });
});
