import { hash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
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
export function authHook(
  authenticator: Authenticator,
  mode: 'required' | 'optional',
  failures: FailureBudget,
  /** Holds a place while a credential is looked up (admission.ts); null when the request was refused. */
  enterLookup: (request: FastifyRequest, reply: FastifyReply) => (() => void) | null = () => () => {},
) {
  // Digests of credentials that authenticated lately; a credential that then fails is dropped.
  const vouched = new LRUCache<string, true>({ max: 100_000, ttl: 3_600_000 });
  // Synchronous when the key is known in memory (most requests); Fastify passes on what it throws.
  return (request: FastifyRequest, reply: FastifyReply, done: (e?: Error) => void) => {
    const credential = extractCredential(request.headers, request.raw.rawHeaders);
    if (!credential) {
      if (mode === 'required') {
        throw missingCredentials();
      }
      request.principal = null;
      return done();
    }
    request.reauthenticate = () => authenticator.authenticate(credential);
    // A key known in memory authenticated moments ago (the cache lives seconds, `vouched` an hour), so it
    // is let in without the failure budget's check or a lookup.
    const known = authenticator.known(credential);
    if (known) {
      request.principal = known;
      return done();
    }
    const digest = hash('sha256', credential, 'base64url');
    const wait = vouched.has(digest) ? 0 : failures.waitFor(request.ip);
    if (wait > 0) throw tooManyAttempts('Too many failed authentications from this address.', wait);
    const release = enterLookup(request, reply);
    if (!release) return done();
    authenticator.authenticate(credential).then(
      (principal) => {
        release();
        request.principal = principal;
        vouched.set(digest, true);
        done();
      },
      (e: Error) => {
        release();
        if (!(e instanceof DomainError && e.code === 'invalid_credentials')) return done(e);
        vouched.delete(digest);
        failures.fail(request.ip).then(() => done(e), done);
      },
    );
  };
}
