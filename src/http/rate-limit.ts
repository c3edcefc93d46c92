import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { clientKey } from '../auth/attempt-counter.ts';
import type { Principal } from '../auth/principal.ts';
import type { Config } from '../config.ts';
import { DomainError } from '../errors.ts';

const ANONYMOUS_PER_WINDOW = 30;

/** Requests per window for a caller: the plan's limit (docs/decisions.md §2); plans without one get Growth's on the session path. */
export function limitFor(principal: Principal | null, cfg: Config['rateLimit']): number {
  if (!principal) return ANONYMOUS_PER_WINDOW;
  return principal.plan === 'scale' ? cfg.perMinute.scale : cfg.perMinute.growth;
}

/**
 * Per-tenant limits, all of a tenant's keys and sessions together. Counters live in Redis when it
 * is configured, so every API process enforces one shared limit. It runs after authentication.
 */
export async function registerRateLimit(scope: FastifyInstance, cfg: Config['rateLimit'], redis?: Redis) {
  await scope.register(rateLimit, {
    global: true,
    hook: 'preParsing',
    timeWindow: cfg.windowMs,
    max: (request: FastifyRequest) => limitFor(request.principal, cfg),
    // Callers without a credential by address, an IPv6 one by its /64 as everywhere else: a subscriber holds a
    // whole /64 and would otherwise get a fresh limit with every address of it.
    keyGenerator: (request: FastifyRequest) => (request.principal ? `tenant:${request.principal.tenantId}` : `ip:${clientKey(request.ip)}`),
    ...(redis ? { redis, nameSpace: 'chs:rl:' } : {}),
    // If Redis fails, serve rather than refuse: the limit protects capacity, it is not a security boundary.
    skipOnError: true,
    enableDraftSpec: true,
    errorResponseBuilder: (_request, context) =>
      new DomainError('rate_limited', `Rate limit of ${context.max} requests per minute exceeded; retry in ${context.after}.`),
  });
}
