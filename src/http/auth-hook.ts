import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { LRUCache } from 'lru-cache';
import type { FailureBudget } from '../auth/attempt-counter.ts';
import { tooManyAttempts } from '../auth/attempt-counter.ts';
import type { Authenticator } from '../auth/authenticator.ts';
import { extractCredential } from '../auth/credentials.ts';
import type { Principal } from '../auth/principal.ts';
import { DomainError, missingCredentials } from '../errors.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
    /**
     * The request's credential resolved again, as it stands now: a response that streams for long (an
     * export) asks before each part whether its caller still may, since a key revoked or a user removed
     * meanwhile must not go on reading.
     */
    reauthenticate: (() => Promise<Principal>) | null;
  }
}

/**
 * onRequest hook: conflicting headers are refused first (400 before anything else), then the
 * credential is resolved. `optional` lets anonymous calls through (login, GraphQL's own errors).
 * A client address that keeps presenting bad credentials is refused with 429 for the rest of the
 * minute, before its guesses cost a database lookup, except with a credential that worked within the
 * hour: one address is often many clients (an integration platform's or an office's shared egress), and
 * one of them sending bad keys must not cut off the others' working ones, which no guess can present.
 */
export function authHook(authenticator: Authenticator, mode: 'required' | 'optional', failures: FailureBudget) {
  // Digests of credentials that authenticated lately; a credential that then fails is dropped.
  const vouched = new LRUCache<string, true>({ max: 100_000, ttl: 3_600_000 });
  return async (request: FastifyRequest) => {
    const credential = extractCredential(request.headers, request.raw.rawHeaders);
    if (!credential) {
      if (mode === 'required') {
        throw missingCredentials();
      }
      request.principal = null;
      return;
    }
    const digest = createHash('sha256').update(credential).digest('base64url');
    const wait = vouched.has(digest) ? 0 : failures.waitFor(request.ip);
    if (wait > 0) throw tooManyAttempts('Too many failed authentications from this address.', wait);
    try {
      request.principal = await authenticator.authenticate(credential);
      request.reauthenticate = () => authenticator.authenticate(credential);
      vouched.set(digest, true);
    } catch (e) {
      if (e instanceof DomainError && e.code === 'invalid_credentials') {
        vouched.delete(digest);
        await failures.fail(request.ip);
      }
      throw e;
    }
  };
}
