import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, loadConfig } from './config.ts';
import { startTracing } from './runtime/tracing.ts';

type Role = 'all' | 'api' | 'worker';

async function main(role: Role) {
  const config = loadConfig();
  // Before anything that loads http, pg or graphql: the instrumentations patch them as they load
  // (runtime/tracing.ts). The rest of the service is therefore imported only after this.
  const tracing = await startTracing(config.tracing);
  const [{ Redis }, { collectDefaultMetrics, Registry }, { startMetricsServer }, { createLogger }, { compose }] = await Promise.all([
    import('ioredis'),
    import('prom-client'),
    import('./http/observability.ts'),
    import('./runtime/logger.ts'),
    import('./composition.ts'),
  ]);
  const log = createLogger(config, role === 'worker' ? 'chs-worker' : 'chs');
  // A worker signs nobody in and seeds nothing: it loads neither.
  const c = await compose(config, { log, migrate: true, ...(role === 'worker' ? { sessions: null } : {}) });
  // Closed last (closers run in reverse): spans of the shutdown itself are exported too.
  const closers: (() => Promise<unknown>)[] = [...(tracing ? [() => tracing.shutdown()] : []), () => c.close()];
  let banner: string[] = [];

  if (role !== 'worker') {
    if (config.seedDemo && (await c.db.prisma.tenant.count()) === 0) {
      const password = cryptoPassword();
      const { seedDemoTenant } = await import('./seed/demo.ts');
      const demo = await seedDemoTenant(c.db.prisma, c.db.pool, password);
      if (c.embedded) writeFileSync(join(config.dataDir, 'demo-credentials.json'), JSON.stringify(demo, null, 2), { mode: 0o600 });
      banner = demoBanner(demo, false);
    } else if (c.embedded) {
      try {
        banner = demoBanner(JSON.parse(readFileSync(join(config.dataDir, 'demo-credentials.json'), 'utf8')), true);
      } catch {
        banner = [];
      }
    }

    const redis = config.redisUrl
      ? new Redis(config.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false })
      : undefined;
    redis?.on('error', (e) => log.warn({ err: e }, 'redis error'));
    const registry = new Registry();
    const app = await c.app({ registry, redis });
    await app.listen({ host: config.http.host, port: config.http.port });
    closers.push(() => app.close());
    if (config.metrics.port !== undefined) {
      const metrics = await startMetricsServer(registry, {
        host: config.metrics.host,
        port: config.metrics.port,
        token: config.metrics.token,
      });
      closers.push(() => metrics.close());
    }
    if (redis) closers.push(() => redis.quit());

    const base = config.http.publicBaseUrl ?? `http://127.0.0.1:${config.http.port}`;
    console.log(
      [
        '',
        `  Customer Health Service is listening on ${base}`,
        `  Dashboard:                  ${base}/app/`,
        `  API reference (Swagger UI): ${base}/docs`,
        `  GraphQL:                    ${base}/graphql`,
        ...banner.map((l) => `  ${l}`),
        '',
      ].join('\n'),
    );
  }
  // A worker serves its counters (deliveries, applied events, scoring) on the metrics port when one is set.
  if (role === 'worker' && config.metrics.port !== undefined) {
    const registry = new Registry();
    collectDefaultMetrics({ register: registry });
    const metrics = await startMetricsServer(registry, {
      host: config.metrics.host,
      port: config.metrics.port,
      token: config.metrics.token,
    });
    closers.push(() => metrics.close());
  }
  // The in-process queue only reaches consumers in the same process, so the API runs them itself.
  if (role !== 'api' || c.queue.kind === 'memory') {
    const worker = c.startWorker();
    closers.push(() => worker.close());
    log.info({ queue: c.queue.kind }, 'worker started');
  }

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    const timer = setTimeout(() => process.exit(1), 15_000).unref();
    for (const close of closers.reverse()) await close().catch((e) => log.error({ err: e }, 'close failed'));
    clearTimeout(timer);
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

function demoBanner(demo: { apiKey: string; email: string; password: string; tenantId: string }, again: boolean): string[] {
  return [
    '',
    `Demo tenant (Scale plan)${again ? '' : ', just created'}: ${demo.tenantId}`,
    `  API key:   ${demo.apiKey}`,
    `  Sign in:   ${demo.email} / ${demo.password} (the dashboard, or POST /api/v1/auth/login)`,
    `  Try: curl -H "Authorization: Bearer ${demo.apiKey}" http://127.0.0.1:${process.env.PORT ?? 3000}/api/v1/customers`,
  ];
}

function cryptoPassword(): string {
  return globalThis.crypto.randomUUID().replaceAll('-', '').slice(0, 20);
}

const role = (process.argv[2] ?? 'all') as Role;
if (!['all', 'api', 'worker'].includes(role)) {
  console.error(`unknown role ${role}; use all, api or worker`);
  process.exit(2);
}
main(role).catch((e) => {
  console.error(e instanceof ConfigError ? e.message : e);
  process.exit(1);
});
