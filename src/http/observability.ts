import type { FastifyInstance } from 'fastify';
import { collectDefaultMetrics, Histogram, Registry } from 'prom-client';

export interface ReadinessCheck {
  name: string;
  check: () => Promise<unknown>;
}

/** /healthz (the process is up), /readyz (its dependencies answer) and Prometheus metrics at /metrics. */
export function registerObservability(app: FastifyInstance, opts: { registry: Registry; checks: ReadinessCheck[] }) {
  const { registry } = opts;
  collectDefaultMetrics({ register: registry });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration by route and status',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });

  app.addHook('onResponse', async (req, reply) => {
    duration.observe(
      { method: req.method, route: req.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
  });

  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));

  app.get('/readyz', { schema: { hide: true } }, async (_req, reply) => {
    const results = await Promise.all(
      opts.checks.map(async (c) => {
        try {
          await c.check();
          return [c.name, 'ok'] as const;
        } catch {
          return [c.name, 'failing'] as const;
        }
      }),
    );
    const ready = results.every(([, r]) => r === 'ok');
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not_ready', checks: Object.fromEntries(results) });
  });

  app.get('/metrics', { schema: { hide: true } }, async (_req, reply) => {
    reply.type(registry.contentType);
    return registry.metrics();
  });
}
