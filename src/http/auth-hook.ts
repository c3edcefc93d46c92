import type { FastifyRequest } from 'fastify';
import type { Authenticator } from '../auth/authenticator.ts';
import { extractCredential } from '../auth/credentials.ts';
import type { Principal } from '../auth/principal.ts';
import { missingCredentials } from '../errors.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
}

/**
 * onRequest hook: conflicting headers are refused first (SEED: 400 before anything else), then the
 * credential is resolved. `optional` lets anonymous calls through (login, GraphQL's own errors).
 */
export function authHook(authenticator: Authenticator, mode: 'required' | 'optional') {
  return async (request: FastifyRequest) => {
    const credential = extractCredential(request.headers);
    if (!credential) {
      if (mode === 'required') {
        throw missingCredentials();
      }
      request.principal = null;
      return;
    }
    request.principal = await authenticator.authenticate(credential);
  };
}
