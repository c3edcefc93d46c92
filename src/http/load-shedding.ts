import underPressure, { type FastifyUnderPressureOptions } from '@fastify/under-pressure';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { problemFor } from '../errors.ts';
import { admissionRefusals } from '../runtime/metrics.ts';

// Probes and metrics must answer under load: a liveness probe that fails then gets the process restarted.
export const PROBES = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * A blocked event loop answers fast: new requests get 503 `service_unavailable` with Retry-After rather
 * than queueing until clients time out (@fastify/under-pressure). Requests in flight are bounded by
 * the budgets in admission.ts.
 */
export async function registerLoadShedding(app: FastifyInstance, opts: { maxEventLoopDelayMs: number }) {
  await app.register(underPressure, {
    maxEventLoopDelay: opts.maxEventLoopDelayMs,
    // A sample window with no tick at all counts as an infinite delay, so it must be long enough for
    // ordinary bursts of synchronous work to leave ticks in it.
    sampleInterval: 500,
    retryAfter: 1,
    // Returning nothing lets the request through; returning a body makes under-pressure send it (its
    // typings only admit the first).
    pressureHandler: ((req: FastifyRequest, reply: FastifyReply) => {
      if (PROBES.has(req.routeOptions.url ?? '')) return undefined;
      admissionRefusals.inc({ reason: 'event_loop_delay' });
      reply.code(503).header('retry-after', '1').type('application/problem+json');
      return problemFor('service_unavailable', 'The service is overloaded; retry in a second.');
    }) as unknown as FastifyUnderPressureOptions['pressureHandler'],
  });
}
