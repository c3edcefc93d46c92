import underPressure, { type FastifyUnderPressureOptions } from '@fastify/under-pressure';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { problemFor } from '../errors.ts';

// Probes and metrics must answer under load: a liveness probe that fails then gets the process restarted.
const EXEMPT = new Set(['/healthz', '/readyz', '/metrics']);

export interface LoadSheddingOptions {
  /** Requests one process works on at once; beyond it, new ones get 503 at once instead of queueing. */
  maxInFlight: number;
  /** Event-loop delay (ms) above which new requests get 503; 0 is off. */
  maxEventLoopDelayMs: number;
}

/**
 * Overload answers fast: 503 `service_unavailable` with Retry-After, in well under a second, rather than
 * requests queueing until clients time out. Two signals: a blocked event loop (@fastify/under-pressure),
 * and more requests in flight than the database pool can serve promptly.
 */
export async function registerLoadShedding(app: FastifyInstance, opts: LoadSheddingOptions) {
  const shed = (detail: string) => problemFor('service_unavailable', detail);
  await app.register(underPressure, {
    maxEventLoopDelay: opts.maxEventLoopDelayMs,
    // A sample window with no tick at all counts as an infinite delay, so it must be long enough for
    // ordinary bursts of synchronous work to leave ticks in it.
    sampleInterval: 500,
    retryAfter: 1,
    // Returning nothing lets the request through; returning a body makes under-pressure send it (its
    // typings only admit the first).
    pressureHandler: ((req: FastifyRequest, reply: FastifyReply) => {
      if (EXEMPT.has(req.routeOptions.url ?? '')) return undefined;
      reply.code(503).header('retry-after', '1').type('application/problem+json');
      return shed('The service is overloaded; retry in a second.');
    }) as unknown as FastifyUnderPressureOptions['pressureHandler'],
  });

  let inFlight = 0;
  app.addHook('onRequest', async (req, reply) => {
    if (EXEMPT.has(req.routeOptions.url ?? '')) return;
    if (inFlight >= opts.maxInFlight) {
      return reply
        .code(503)
        .header('retry-after', '1')
        .type('application/problem+json')
        .send(shed('The service is at capacity; retry in a second.'));
    }
    inFlight++;
    let released = false;
    const release = () => {
      if (!released) {
        released = true;
        inFlight--;
      }
    };
    reply.raw.once('finish', release);
    reply.raw.once('close', release);
  });
}
