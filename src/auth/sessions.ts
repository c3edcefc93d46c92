import { createHash, randomUUID } from 'node:crypto';
import { createRemoteJWKSet, jwtVerify, SignJWT, type JWTPayload } from 'jose';
import { z } from 'zod';
import { DomainError } from '../errors.ts';

export const ROLES = ['owner', 'admin', 'member', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

export interface SessionClaims {
  userId: string;
  tenantId: string;
  role: Role;
}

/** A verified token's claims, with what revocation compares: when it was issued and when it ends. */
export interface VerifiedSession extends SessionClaims {
  /** Milliseconds since the epoch; null when the token does not say (then a revocation refuses it). */
  issuedAtMs: number | null;
  expiresAt: Date;
}

const claimsSchema = z.object({
  sub: z.string().uuid(),
  tid: z.string().uuid(),
  role: z.enum(ROLES),
  exp: z.number(),
  iat: z.number().optional(),
});

export interface Sessions {
  issue(claims: SessionClaims): Promise<{ token: string; expiresAt: Date }>;
  verify(token: string): Promise<VerifiedSession>;
}

/** A session's id on the server: the SHA-256 of its token, so any token, ours or an identity provider's, has one. */
export const sessionIdOf = (token: string) => createHash('sha256').update(token).digest('hex');

const ISSUER = 'customer-health-service';
/** Leeway for the identity provider's clock against ours on exp and nbf; more would stretch every token's life. */
export const CLOCK_TOLERANCE_SECONDS = 30;

export interface IdentityProvider {
  jwksUrl: string;
  issuers: string[];
  audiences: string[];
}

/** The identity provider the configuration names, if any (the configuration has checked it is complete). */
export function identityProvider(s: { jwksUrl?: string; jwtIssuers: string[]; jwtAudiences: string[] }): IdentityProvider | undefined {
  return s.jwksUrl ? { jwksUrl: s.jwksUrl, issuers: s.jwtIssuers, audiences: s.jwtAudiences } : undefined;
}

/**
 * Browser sessions: HS256 tokens we sign, or RS256/ES256 tokens checked against a configured JWKS.
 * The algorithm picks the path and each path accepts only its own algorithms, so a token signed
 * with the provider's public key as an HMAC secret, or with `alg: none`, is refused. Tokens from
 * the provider must name one of its configured issuers and our audience, and carry an expiry.
 */
export function createSessions(opts: { secret: string; ttlSeconds: number; idp?: IdentityProvider }): Sessions {
  const key = new TextEncoder().encode(opts.secret);
  const idp = opts.idp;
  if (idp && (!idp.issuers.length || !idp.audiences.length)) throw new Error('An identity provider needs its issuers and audience.');
  const jwks = idp ? createRemoteJWKSet(new URL(idp.jwksUrl)) : undefined;
  const invalid = () => new DomainError('invalid_credentials', 'The session token is invalid or has expired.');

  return {
    async issue({ userId, tenantId, role }) {
      const now = Date.now();
      const expiresAt = new Date(now + opts.ttlSeconds * 1000);
      const token = await new SignJWT({ tid: tenantId, role })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(userId)
        // Two sign-ins in the same millisecond are still two sessions, one signed out without the other.
        .setJti(randomUUID())
        .setIssuer(ISSUER)
        // In milliseconds (a NumericDate may have a fraction): a session begun just after a revocation, in
        // the same second, is not mistaken for one from before it.
        .setIssuedAt(now / 1000)
        .setExpirationTime(Math.floor(expiresAt.getTime() / 1000))
        .sign(key);
      return { token, expiresAt };
    },
    async verify(token) {
      let payload: JWTPayload;
      try {
        const header = JSON.parse(Buffer.from(token.split('.')[0] ?? '', 'base64url').toString('utf8')) as { alg?: string };
        if (header.alg === 'HS256') {
          ({ payload } = await jwtVerify(token, key, { algorithms: ['HS256'], issuer: ISSUER, requiredClaims: ['exp'] }));
        } else if (jwks && idp && (header.alg === 'RS256' || header.alg === 'ES256')) {
          ({ payload } = await jwtVerify(token, jwks, {
            algorithms: ['RS256', 'ES256'],
            issuer: idp.issuers,
            audience: idp.audiences,
            requiredClaims: ['exp'],
            clockTolerance: CLOCK_TOLERANCE_SECONDS,
          }));
        } else {
          throw invalid();
        }
      } catch {
        throw invalid();
      }
      const parsed = claimsSchema.safeParse(payload);
      if (!parsed.success) throw invalid();
      const { sub, tid, role, exp, iat } = parsed.data;
      return {
        userId: sub,
        tenantId: tid,
        role,
        issuedAtMs: iat === undefined ? null : Math.round(iat * 1000),
        expiresAt: new Date(exp * 1000),
      };
    },
  };
}
