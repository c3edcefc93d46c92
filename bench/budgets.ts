// Shared set-up of the two budget scenarios (slow-body.ts, tenant-burst.ts): a fresh database, two
// tenants with API keys, and one API process (in-process queue) on 127.0.0.1.
import { issueApiKey } from '../src/services/api-keys.ts';
import { createPrisma } from '../src/db/prisma.ts';
import { freshDatabase, type Measured, serviceEnv, startProcess } from './lib.ts';

export const url = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/chs_bench';
export const durationS = Number(process.env.BENCH_DURATION_S ?? 10);

export async function twoTenants() {
  await freshDatabase(url);
  const prisma = createPrisma({ url, poolSize: 2 });
  const make = async (name: string, plan: 'growth' | 'scale') => {
    const tenant = await prisma.tenant.create({ data: { name, plan } });
    const { secret } = await issueApiKey(prisma, { tenantId: tenant.id, name: 'bench' });
    await prisma.customer.createMany({
      data: Array.from({ length: 100 }, (_, i) => ({ tenantId: tenant.id, name: `${name} customer ${i}` })),
    });
    const first = await prisma.customer.findFirstOrThrow({ where: { tenantId: tenant.id } });
    return { tenantId: tenant.id, apiKey: secret, customerId: first.id };
  };
  const a = await make('Tenant A', 'scale');
  const b = await make('Tenant B', 'growth');
  await prisma.$disconnect();
  return { a, b };
}

/** An API process of this build, or of the checkout at `root` (another build measured beside it). */
export async function startApi(env: Record<string, string> = {}, opts: { root?: string } = {}) {
  const port = 4000 + Math.floor(Math.random() * 500);
  const service = await startProcess(
    ['src/main.ts', 'api'],
    serviceEnv(url, {
      PORT: String(port),
      LOG_LEVEL: 'error',
      // The plans' rate limits out of the way: the budgets are what is measured.
      RATE_LIMIT_SCALE: '100000000',
      RATE_LIMIT_GROWTH: '100000000',
      ...env,
    }),
    /listening on/,
    { root: opts.root },
  );
  return { port, pid: service.child.pid!, base: `http://127.0.0.1:${port}`, stop: () => service.child.kill('SIGTERM') };
}

/** Share of answers that were 2xx, in per cent. */
export const successRate = (m: Measured) => {
  const total = Object.values(m.statuses ?? {}).reduce((x, y) => x + y, 0) + m.errors;
  const ok = Object.entries(m.statuses ?? {}).reduce((x, [k, v]) => x + (k.startsWith('2') ? v : 0), 0);
  return total ? Math.round((ok / total) * 1000) / 10 : 0;
};

export const statusList = (m: Measured) =>
  Object.entries(m.statuses ?? {})
    .map(([k, v]) => `${v} × ${k}`)
    .join(', ') + (m.errors ? `, ${m.errors} errors/timeouts` : '');
