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

const claimsSchema = z.object({
  sub: z.string().uuid(),
  tid: z.string().uuid(),
  role: z.enum(ROLES),
  exp: z.number(),
});

export interface Sessions {
  issue(claims: SessionClaims): Promise<{ token: string; expiresAt: Date }>;
  verify(token: string): Promise<SessionClaims>;
}

const ISSUER = 'customer-health-service';

/** Browser sessions: HS256 tokens we sign, or RS256/ES256 tokens checked against a configured JWKS. */
export function createSessions(opts: { secret: string; ttlSeconds: number; jwksUrl?: string }): Sessions {
  const key = new TextEncoder().encode(opts.secret);
  const jwks = opts.jwksUrl ? createRemoteJWKSet(new URL(opts.jwksUrl)) : undefined;
  const invalid = () => new DomainError('invalid_credentials', 'The session token is invalid or has expired.');

  return {
    async issue({ userId, tenantId, role }) {
      const expiresAt = new Date(Date.now() + opts.ttlSeconds * 1000);
      const token = await new SignJWT({ tid: tenantId, role })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(userId)
        .setIssuer(ISSUER)
        .setIssuedAt()
        .setExpirationTime(Math.floor(expiresAt.getTime() / 1000))
        .sign(key);
      return { token, expiresAt };
    },
    async verify(token) {
      let payload: JWTPayload;
      try {
        const header = JSON.parse(Buffer.from(token.split('.')[0] ?? '', 'base64url').toString('utf8')) as { alg?: string };
        if (header.alg === 'HS256') {
          ({ payload } = await jwtVerify(token, key, { algorithms: ['HS256'], issuer: ISSUER }));
        } else if (jwks && (header.alg === 'RS256' || header.alg === 'ES256')) {
          ({ payload } = await jwtVerify(token, jwks, { algorithms: ['RS256', 'ES256'] }));
        } else {
          throw invalid();
        }
      } catch {
        throw invalid();
      }
      const parsed = claimsSchema.safeParse(payload);
      if (!parsed.success) throw invalid();
      return { userId: parsed.data.sub, tenantId: parsed.data.tid, role: parsed.data.role };
    },
  };
}
