// The scale bench's "many tenants" stage: 10, 100 and 1,000 tenants (BENCH_SCALE_TENANTS) each with a
// Stripe inbound secret, sending signed events to their own inbound route at once, spread evenly; the API
// accepts them (stored and confirmed on RabbitMQ), then one worker drains the backlog. As bench/inbound.ts
// measures one tenant, with its signed events (lib.ts signedStripeInvoices) and its drain (lib.ts drainInbox).
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { Request } from 'autocannon';
import pg from 'pg';
import { createSecretBox, parseEncryptionKeys } from '../src/crypto/secret-box.ts';
import { createPrisma } from '../src/db/prisma.ts';
import { operator } from '../src/services/audit.ts';
import { createInboundSecretStore } from '../src/services/integrations.ts';
import {
  BENCH_ENCRYPTION_KEY,
  drainInbox,
  freshDatabase,
  load,
  type Measured,
  rssMiB,
  serviceEnv,
  signedStripeInvoices,
  startProcess,
} from './lib.ts';

const SECRET = 'whsec_bench_secret_0123456789';

export interface TenantsRow {
  tenants: number;
  accept: Measured;
  drain: Measured;
  apiRss: number;
  workerRss: number;
}

/** One run per count of tenants, each on a fresh database at `url`. */
export async function manyTenants(
  url: string,
  counts: number[],
  opts: { durationS: number; connections: number; customersPerTenant: number },
): Promise<TenantsRow[]> {
  const amqp = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
  const rows: TenantsRow[] = [];
  for (const n of counts) {
    await freshDatabase(url);
    const db = new pg.Client(url);
    await db.connect();
    const tenants = (
      await db.query<{ id: string }>(
        `INSERT INTO tenants (id, name, plan, updated_at) SELECT gen_random_uuid(), 'Bench ' || g, 'scale', now() FROM generate_series(1, $1::int) g RETURNING id`,
        [n],
      )
    ).rows.map((r) => r.id);
    await db.end();
    // Set as the admin CLI's `inbound:secret` sets it (sealed, audited), one tenant after another. Every
    // tenant gets the same value: what is measured is each event finding its own tenant's secret.
    const prisma = createPrisma({ url, poolSize: 2 });
    const secrets = createInboundSecretStore(prisma, createSecretBox(parseEncryptionKeys(BENCH_ENCRYPTION_KEY)), { cacheMs: 0 });
    for (const tenantId of tenants) await secrets.put({ tenantId, provider: 'stripe', secret: SECRET }, operator(tenantId));
    await prisma.$disconnect();

    const prefix = `chs-bench-scale-${randomUUID().slice(0, 6)}`;
    const env = serviceEnv(url, { AMQP_URL: amqp, AMQP_PREFIX: prefix });
    const port = 3900 + Math.floor(Math.random() * 50);
    const api = await startProcess(['src/main.ts', 'api'], { ...env, PORT: String(port) }, /listening on/);
    // Event i goes to tenant i mod n, for one of its customers: every tenant sends all the time.
    let sequence = 0;
    let tenantOfEvent = 0;
    const signed = signedStripeInvoices('/', SECRET, () => `cus_bench_${Math.floor(sequence++ / n) % opts.customersPerTenant}`);
    const requests: Request[] = [
      {
        method: 'POST',
        setupRequest: (req, context) => ({
          ...(signed.setupRequest as (r: Request, c: object) => Request)(req, context),
          path: `/api/v1/webhooks/in/stripe/${tenants[tenantOfEvent++ % n]}`,
        }),
      },
    ];
    const url0 = `http://127.0.0.1:${port}`;
    await load('warm-up', { url: url0, requests, durationS: 2, connections: opts.connections });
    const accept = await load(`${n} tenants sending signed Stripe events`, {
      url: url0,
      requests,
      durationS: opts.durationS,
      connections: opts.connections,
      pids: [api.child.pid!],
    });
    const apiRss = rssMiB(api.child.pid!);
    const { m: drain, rss: workerRss } = await drainInbox(
      url,
      { ...env, LOG_LEVEL: 'info', DATABASE_POOL_SIZE: process.env.BENCH_POOL ?? '24' },
      `one worker draining ${n} tenants' events`,
    );
    const exited = new Promise((r) => api.child.once('exit', r));
    api.child.kill('SIGTERM');
    await exited;
    for (const topic of ['inbound.events', 'outbound.deliveries'])
      for (const suffix of ['', '.retry', '.dead'])
        spawnSync('rabbitmqctl', ['-q', 'delete_queue', `${prefix}.${topic}${suffix}`], { stdio: 'ignore' });
    console.log(
      `${n} tenants: accepted ${accept.rps}/s (p50 ${accept.p50}, p99 ${accept.p99} ms, ${accept.cpuUs} µs CPU/req, non-2xx ${accept.non2xx}); drained ${drain.rps}/s (${drain.cpuUs} µs CPU/event)`,
    );
    rows.push({ tenants: n, accept, drain, apiRss, workerRss });
  }
  return rows;
}
