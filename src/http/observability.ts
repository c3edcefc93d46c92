import { createHash, timingSafeEqual } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { collectDefaultMetrics, Histogram, Registry } from 'prom-client';
import { operationsRegistry } from '../runtime/metrics.ts';
import { sendProblem } from './problem.ts';

export interface ReadinessCheck {
  name: string;
  check: () => Promise<unknown>;
}

export interface MetricsExposure {
  /** Bearer token a scraper must send; without it /metrics is refused with 401. */
  token?: string;
  /** Serve /metrics on the API port (false when a separate metrics port serves it). */
  onApiPort: boolean;
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/** Compares the bearer token in constant time (over digests, so the lengths do not leak either). */
function metricsRoute(registry: Registry, token: string | undefined) {
  const expected = token ? digest(token) : undefined;
  return async (req: FastifyRequest, reply: FastifyReply) => {
    if (expected) {
      const given = /^Bearer[ \t]+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
      if (!given || !timingSafeEqual(digest(given), expected)) {
        return sendProblem(reply, 'missing_credentials', 'Send the metrics token as Authorization: Bearer.');
      }
    }
    reply.type(registry.contentType);
    // The process's own series (request durations, backlog) and the operations' counters (runtime/metrics.ts).
    const [own, operations] = await Promise.all([registry.metrics(), operationsRegistry.metrics()]);
    return `${own}${operations}`;
  };
}

/**
 * A listener of its own for /metrics (METRICS_PORT), so the API port need not serve it at all;
 * still token-protected when a token is configured.
 */
export async function startMetricsServer(registry: Registry, opts: { host: string; port: number; token?: string }) {
  const server = Fastify({ logger: false });
  server.get('/metrics', metricsRoute(registry, opts.token));
  await server.listen({ host: opts.host, port: opts.port });
  return server;
}

/**
 * /healthz (the process is up), /readyz (its dependencies answer) and, when configured to,
 * Prometheus metrics at /metrics behind a bearer token: they name routes, queues and volumes, which
 * is not for anyone who can reach the API.
 */
export function registerObservability(
  app: FastifyInstance,
  opts: { registry: Registry; checks: ReadinessCheck[]; metrics: MetricsExposure },
) {
  const { registry } = opts;
  collectDefaultMetrics({ register: registry });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration by route and status',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });

  // Each series' child is looked up once: observing through labels hashes the label set on every request.
  // Routes are the registered patterns, so the series stay few.
  const series = new Map<string, ReturnType<typeof duration.labels>>();
  app.addHook('onResponse', (req, reply, done) => {
    const route = req.routeOptions.url ?? 'unmatched';
    const key = `${req.method} ${reply.statusCode} ${route}`;
    let child = series.get(key);
    if (!child) series.set(key, (child = duration.labels({ method: req.method, route, status: String(reply.statusCode) })));
    child.observe(reply.elapsedTime / 1000);
    done();
  });

  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));

  // Probes skip the admission budgets, so concurrent probes share one round of checks: a flood of
  // /readyz costs one database connection, not one each.
  let round: Promise<(readonly [string, 'ok' | 'failing'])[]> | null = null;
  const checkAll = () =>
    (round ??= Promise.all(
      opts.checks.map(async (c) => {
        try {
          await c.check();
          return [c.name, 'ok'] as const;
        } catch {
          return [c.name, 'failing'] as const;
        }
      }),
    ).finally(() => {
      round = null;
    }));
  app.get('/readyz', { schema: { hide: true } }, async (_req, reply) => {
    const results = await checkAll();
    const ready = results.every(([, r]) => r === 'ok');
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not_ready', checks: Object.fromEntries(results) });
  });

  if (opts.metrics.onApiPort) app.get('/metrics', { schema: { hide: true } }, metricsRoute(registry, opts.metrics.token));
}
