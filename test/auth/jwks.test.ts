import { createServer, type Server } from 'node:http';
import { exportJWK, exportSPKI, generateKeyPair, SignJWT, UnsecuredJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { createTestApp, SESSION_SECRET, type TestApp } from '../support/app.ts';
import { tenantWithKey, userWithSession } from '../support/factories.ts';

// An identity provider's JWKS, served locally: sessions signed with its ES256 key are accepted.
const ISSUER = 'https://idp.example.com/';
const AUDIENCE = 'customer-health-service';
let t: TestApp;
let jwks: Server;
let idp: Awaited<ReturnType<typeof generateKeyPair>>;
beforeAll(async () => {
  idp = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(idp.publicKey)), kid: 'idp-1', alg: 'ES256', use: 'sig' };
  jwks = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] })));
  await new Promise<void>((r) => jwks.listen(0, '127.0.0.1', r));
  t = await createTestApp({
    env: {
      SESSION_JWKS_URL: `http://127.0.0.1:${(jwks.address() as { port: number }).port}/jwks.json`,
      SESSION_JWT_ISSUER: `${ISSUER}, https://idp.example.com/other-tenant`,
      SESSION_JWT_AUDIENCE: AUDIENCE,
    },
  });
});
afterAll(async () => {
  await t.close();
  jwks.close();
});

const sign = (claims: Record<string, unknown>, key = idp.privateKey) =>
  new SignJWT({ iss: ISSUER, aud: AUDIENCE, exp: Math.floor(Date.now() / 1000) + 600, ...claims })
    .setProtectedHeader({ alg: 'ES256', kid: 'idp-1' })
    .setIssuedAt()
    .sign(key);
const viewer = async () => {
  const { tenantId } = await tenantWithKey(t.prisma, 'free');
  const { user } = await userWithSession(t.prisma, t.sessions, tenantId, 'viewer');
  return { sub: user.id, tid: tenantId, role: 'viewer' };
};
const now = () => Math.floor(Date.now() / 1000);
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

describe('identity-provider tokens are bound to their issuer and audience', () => {
  it('accepts any of the configured issuers', async () => {
    expect((await list(await sign({ ...(await viewer()), iss: 'https://idp.example.com/other-tenant' }))).statusCode).toBe(200);
  });

  it('refuses a token from another issuer of the same key set', async () => {
    expect((await list(await sign({ ...(await viewer()), iss: 'https://evil.example.com/' }))).statusCode).toBe(401);
  });

  it('refuses a token without an issuer', async () => {
    expect((await list(await sign({ ...(await viewer()), iss: undefined }))).statusCode).toBe(401);
  });

  it('refuses a token minted for another application', async () => {
    expect((await list(await sign({ ...(await viewer()), aud: 'some-other-app' }))).statusCode).toBe(401);
  });

  it('refuses a token without an audience', async () => {
    expect((await list(await sign({ ...(await viewer()), aud: undefined }))).statusCode).toBe(401);
  });
});

describe('identity-provider token siblings', () => {
  it('refuses a token without an expiry', async () => {
    const token = await new SignJWT({ iss: ISSUER, aud: AUDIENCE, ...(await viewer()) })
      .setProtectedHeader({ alg: 'ES256', kid: 'idp-1' })
      .setIssuedAt()
      .sign(idp.privateKey);
    expect((await list(token)).statusCode).toBe(401);
  });

  it('refuses a token that expired beyond the clock tolerance', async () => {
    expect((await list(await sign({ ...(await viewer()), exp: now() - 300 }))).statusCode).toBe(401);
  });

  it('tolerates a few seconds of clock skew on expiry', async () => {
    expect((await list(await sign({ ...(await viewer()), exp: now() - 5 }))).statusCode).toBe(200);
  });

  it('refuses a token not yet valid beyond the clock tolerance', async () => {
    expect((await list(await sign({ ...(await viewer()), nbf: now() + 300 }))).statusCode).toBe(401);
  });

  it('refuses an unsigned token (alg none)', async () => {
    const token = new UnsecuredJWT({ iss: ISSUER, aud: AUDIENCE, ...(await viewer()) }).setIssuedAt().setExpirationTime('10m').encode();
    expect((await list(token)).statusCode).toBe(401);
  });

  it("refuses an HS256 token keyed with the provider's public key (algorithm confusion)", async () => {
    const pem = new TextEncoder().encode(await exportSPKI(idp.publicKey));
    const token = await new SignJWT({ iss: ISSUER, aud: AUDIENCE, ...(await viewer()) })
      .setProtectedHeader({ alg: 'HS256', kid: 'idp-1' })
      .setExpirationTime('10m')
      .sign(pem);
    expect((await list(token)).statusCode).toBe(401);
  });

  it('refuses an RS256 header over an ES256 signature', async () => {
    const good = await sign(await viewer());
    const [, payload, signature] = good.split('.');
    const header = Buffer.from(JSON.stringify({ alg: 'RS256', kid: 'idp-1' })).toString('base64url');
    expect((await list(`${header}.${payload}.${signature}`)).statusCode).toBe(401);
  });
});

describe('identity-provider configuration', () => {
  const base = { NODE_ENV: 'test', SESSION_SECRET, SESSION_JWKS_URL: 'https://idp.example.com/.well-known/jwks.json' };

  it('refuses to start with a key set but no issuer', () => {
    expect(() => loadConfig({ ...base, SESSION_JWT_AUDIENCE: AUDIENCE })).toThrow(/SESSION_JWT_ISSUER: required with SESSION_JWKS_URL/);
  });

  it('refuses to start with a key set but no audience', () => {
    expect(() => loadConfig({ ...base, SESSION_JWT_ISSUER: ISSUER })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, SESSION_JWT_ISSUER: ISSUER })).toThrow(/SESSION_JWT_AUDIENCE/);
  });

  it('reads a comma-separated list of issuers', () => {
    const c = loadConfig({ ...base, SESSION_JWT_ISSUER: `${ISSUER} , https://b.example.com/`, SESSION_JWT_AUDIENCE: AUDIENCE });
    expect(c.sessions.jwtIssuers).toEqual([ISSUER, 'https://b.example.com/']);
  });
});
