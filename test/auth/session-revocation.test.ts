import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.ts';
import { tenantWithKey, userWithSession } from '../support/factories.ts';

// Sessions end on the server: signing out refuses that token from then on, and an owner (or the user) revokes
// every session of a user or of the workspace. A second API process, with its credential cache on, stands
// for another process of the service: a revocation made in one holds in the other within its cache's life.
let t: TestApp;
let other: TestApp;
const OTHER_CACHE_MS = 500;
beforeAll(async () => {
  t = await createTestApp();
  other = await createTestApp({ env: { API_KEY_CACHE_MS: String(OTHER_CACHE_MS) } });
});
afterAll(async () => {
  await other.close();
  await t.close();
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const list = (token: string, app = t) => app.app.inject({ method: 'GET', url: '/api/v1/customers', headers: bearer(token) });
const signIn = async (email: string, password: string) => {
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password } });
  expect(res.statusCode).toBe(200);
  return res.json().token as string;
};
const gql = (token: string, query: string, variables: object = {}) =>
  t.app.inject({ method: 'POST', url: '/graphql', headers: bearer(token), payload: { query, variables } }).then((r) => r.json());
const actions = async (tenantId: string) =>
  (await t.prisma.auditEvent.findMany({ where: { tenantId }, orderBy: { occurredAt: 'asc' } })).map((e) => [e.action, e.targetId]);

describe('signing out', () => {
  it('refuses the signed-out token afterwards with 401, while the user’s other session goes on', async () => {
    const { tenantId } = await tenantWithKey(t.prisma);
    const { email, password } = await userWithSession(t.prisma, t.sessions, tenantId, 'viewer');
    const [laptop, phone] = [await signIn(email, password), await signIn(email, password)];
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: bearer(laptop) });
    expect(res.statusCode).toBe(204);
    const refused = await list(laptop);
    expect(refused.statusCode).toBe(401);
    expect(refused.json().code).toBe('invalid_credentials');
    expect((await list(phone)).statusCode).toBe(200);
  });

  it('signs out over GraphQL as well, recorded in the audit log against the user', async () => {
    const { tenantId } = await tenantWithKey(t.prisma);
    const { user, token } = await userWithSession(t.prisma, t.sessions, tenantId, 'member');
    expect(await gql(token, 'mutation { signOut }')).toEqual({ data: { signOut: true } });
    expect((await list(token)).statusCode).toBe(401);
    expect(await actions(tenantId)).toEqual([['session.signed_out', user.id]]);
  });

  it('refuses an API key with 403: a key is revoked, not signed out', async () => {
    const { apiKey } = await tenantWithKey(t.prisma);
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: { 'x-api-key': apiKey } });
    expect(res.statusCode).toBe(403);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  });

  it('holds in another API process once its credential cache has lapsed', async () => {
    const { tenantId } = await tenantWithKey(t.prisma);
    const { token } = await userWithSession(t.prisma, t.sessions, tenantId, 'viewer');
    expect((await list(token, other)).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: bearer(token) })).statusCode).toBe(204);
    const since = Date.now();
    await expect.poll(async () => (await list(token, other)).statusCode, { timeout: OTHER_CACHE_MS * 4, interval: 50 }).toBe(401);
    expect(Date.now() - since).toBeLessThan(OTHER_CACHE_MS * 4);
  });
});

describe('revoking sessions', () => {
  it('an owner revokes every session of a user; the user signs in again at once and works', async () => {
    const { tenantId } = await tenantWithKey(t.prisma);
    const owner = await userWithSession(t.prisma, t.sessions, tenantId, 'owner');
    const member = await userWithSession(t.prisma, t.sessions, tenantId, 'member');
    const second = await signIn(member.email, member.password);
    const res = await t.app.inject({ method: 'DELETE', url: `/api/v1/users/${member.user.id}/sessions`, headers: bearer(owner.token) });
    expect(res.statusCode).toBe(204);
    expect([(await list(member.token)).statusCode, (await list(second)).statusCode]).toEqual([401, 401]);
    expect((await list(owner.token)).statusCode).toBe(200);
    // Within the same second as the revocation, a new session is told apart from the revoked ones.
    expect((await list(await signIn(member.email, member.password))).statusCode).toBe(200);
    expect(await actions(tenantId)).toContainEqual(['user.sessions_revoked', member.user.id]);
  });

  it('lets a user revoke their own sessions, but not a member another user’s', async () => {
    const { tenantId } = await tenantWithKey(t.prisma);
    const a = await userWithSession(t.prisma, t.sessions, tenantId, 'member');
    const b = await userWithSession(t.prisma, t.sessions, tenantId, 'viewer');
    const denied = await t.app.inject({ method: 'DELETE', url: `/api/v1/users/${b.user.id}/sessions`, headers: bearer(a.token) });
    expect(denied.statusCode).toBe(403);
    expect((await list(b.token)).statusCode).toBe(200);
    const own = await gql(b.token, 'mutation($id: UUID!) { revokeUserSessions(id: $id) }', { id: b.user.id });
    expect(own).toEqual({ data: { revokeUserSessions: true } });
    expect((await list(b.token)).statusCode).toBe(401);
  });

  it('answers 404 for a user of another workspace, and revokes nothing there', async () => {
    const mine = await tenantWithKey(t.prisma);
    const theirs = await tenantWithKey(t.prisma);
    const owner = await userWithSession(t.prisma, t.sessions, mine.tenantId, 'owner');
    const stranger = await userWithSession(t.prisma, t.sessions, theirs.tenantId, 'owner');
    const res = await t.app.inject({ method: 'DELETE', url: `/api/v1/users/${stranger.user.id}/sessions`, headers: bearer(owner.token) });
    expect(res.statusCode).toBe(404);
    expect((await list(stranger.token)).statusCode).toBe(200);
  });

  it('an owner revokes every session of the workspace, their own included; API keys and other workspaces go on', async () => {
    const { tenantId, apiKey } = await tenantWithKey(t.prisma);
    const owner = await userWithSession(t.prisma, t.sessions, tenantId, 'owner');
    const admin = await userWithSession(t.prisma, t.sessions, tenantId, 'admin');
    const elsewhere = await userWithSession(t.prisma, t.sessions, (await tenantWithKey(t.prisma)).tenantId, 'owner');
    const res = await t.app.inject({ method: 'DELETE', url: '/api/v1/workspace/sessions', headers: bearer(owner.token) });
    expect(res.statusCode).toBe(204);
    expect([(await list(owner.token)).statusCode, (await list(admin.token)).statusCode]).toEqual([401, 401]);
    expect((await list(elsewhere.token)).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/customers', headers: { 'x-api-key': apiKey } })).statusCode).toBe(200);
    expect((await list(await signIn(admin.email, admin.password))).statusCode).toBe(200);
    expect(await actions(tenantId)).toContainEqual(['workspace.sessions_revoked', tenantId]);
  });

  it('leaves revoking the workspace’s sessions to owners', async () => {
    const { tenantId, apiKey } = await tenantWithKey(t.prisma);
    const admin = await userWithSession(t.prisma, t.sessions, tenantId, 'admin');
    for (const headers of [bearer(admin.token), { 'x-api-key': apiKey }]) {
      expect((await t.app.inject({ method: 'DELETE', url: '/api/v1/workspace/sessions', headers })).statusCode).toBe(403);
    }
    expect((await list(admin.token)).statusCode).toBe(200);
  });
});
