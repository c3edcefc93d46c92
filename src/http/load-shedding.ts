import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { FastifyInstance } from 'fastify';
import { problemFor } from '../errors.ts';
import { admissionRefusals } from '../runtime/metrics.ts';

// Probes and metrics must answer under load: a liveness probe that fails then gets the process restarted.
export const PROBES = new Set(['/healthz', '/readyz', '/metrics']);

/** How often the event loop's delay is read; each reading is the mean delay since the previous one. */
export const SAMPLE_MS = 500;
/** The delay histogram's own timer: a reading subtracts it, so an idle loop reads about 0. */
const RESOLUTION_MS = 10;

/**
 * A blocked event loop answers fast: while the last reading of its mean delay is above
 * `maxEventLoopDelayMs`, new requests get 503 `service_unavailable` with Retry-After rather than queueing
 * until clients time out. Requests in flight are bounded by the budgets in admission.ts.
 *
 * Measuring starts once the app is ready: compiling the routes' schemas blocks the loop for a while at every
 * start (seconds on a busy machine), and taking that for load would refuse a new process's first requests.
 * A window with no tick at all (the loop blocked all along) reads as an infinite delay, so the window must be
 * long enough for ordinary bursts of synchronous work to leave ticks in it.
 */
export function registerLoadShedding(app: FastifyInstance, opts: { maxEventLoopDelayMs: number }) {
  if (opts.maxEventLoopDelayMs === 0) return;
  const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  let delayMs = 0;
  let timer: NodeJS.Timeout | undefined;
  const read = () => {
    const mean = histogram.mean / 1e6 - RESOLUTION_MS;
    delayMs = Number.isNaN(mean) ? Infinity : Math.max(0, mean);
    histogram.reset();
  };
  app.addHook('onReady', (done) => {
    histogram.enable();
    timer = setInterval(read, SAMPLE_MS).unref();
    done();
  });
  app.addHook('onClose', (_app, done) => {
    clearInterval(timer);
    histogram.disable();
    done();
  });
  app.addHook('onRequest', (req, reply, done) => {
    if (delayMs <= opts.maxEventLoopDelayMs || PROBES.has(req.routeOptions.url ?? '')) return done();
    admissionRefusals.inc({ reason: 'event_loop_delay' });
    reply
      .code(503)
      .header('retry-after', '1')
      .type('application/problem+json')
      .send(problemFor('service_unavailable', 'The service is overloaded; retry in a second.'));
    done();
  });
}
