import { createServer, type Server } from 'node:http';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/app.ts';
import { tenantWithKey, userWithSession } from './support/factories.ts';

// An identity provider's JWKS, served locally: sessions signed with its ES256 key are accepted.
let t: TestApp;
let jwks: Server;
let idp: Awaited<ReturnType<typeof generateKeyPair>>;
beforeAll(async () => {
  idp = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(idp.publicKey)), kid: 'idp-1', alg: 'ES256', use: 'sig' };
  jwks = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] })));
  await new Promise<void>((r) => jwks.listen(0, '127.0.0.1', r));
  t = await createTestApp({ env: { SESSION_JWKS_URL: `http://127.0.0.1:${(jwks.address() as { port: number }).port}/jwks.json` } });
});
afterAll(async () => {
  await t.close();
  jwks.close();
});

const sign = (claims: Record<string, unknown>, key = idp.privateKey) =>
  new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid: 'idp-1' }).setIssuedAt().setExpirationTime('10m').sign(key);
const list = (token: string) => t.app.inject({ method: 'GET', url: '/api/v1/customers', headers: { authorization: `Bearer ${token}` } });

describe('sessions from an identity provider (JWKS)', () => {
  it('accepts an ES256 token signed by the configured key set for a known user', async () => {
    const { tenantId } = await tenantWithKey(t.prisma, 'free');
    const { user } = await userWithSession(t.prisma, t.sessions, tenantId, 'viewer');
    expect((await list(await sign({ sub: user.id, tid: tenantId, role: 'viewer' }))).statusCode).toBe(200);
  });

  it('refuses an ES256 token signed by another key', async () => {
    const { tenantId } = await tenantWithKey(t.prisma, 'free');
    const { user } = await userWithSession(t.prisma, t.sessions, tenantId, 'viewer');
    const stranger = await generateKeyPair('ES256');
    expect((await list(await sign({ sub: user.id, tid: tenantId, role: 'viewer' }, stranger.privateKey))).statusCode).toBe(401);
  });

  it('refuses a token for a user the service does not know', async () => {
    const { tenantId } = await tenantWithKey(t.prisma, 'free');
    expect((await list(await sign({ sub: globalThis.crypto.randomUUID(), tid: tenantId, role: 'owner' }))).statusCode).toBe(401);
  });
});
