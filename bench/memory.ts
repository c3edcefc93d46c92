// Resident memory of `npm start` (tsx, every role in one process) and `npm run start:prod` (the compiled
// build, `npm run build` first), each idle after start and after a load of reads and inbound events.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Request } from 'autocannon';
import { createPrisma } from '../src/db/prisma.ts';
import { issueApiKey } from '../src/services/api-keys.ts';
import { freshDatabase, load, load1, ROOT, rssMiB, serviceEnv, signedStripeInvoices, startProcess, writeResult } from './lib.ts';

const url = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/chs_bench';
const durationS = Number(process.env.BENCH_DURATION_S ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 20);
const SECRET = 'whsec_bench_secret_0123456789';

await freshDatabase(url);
const prisma = createPrisma({ url, poolSize: 2 });
const tenant = await prisma.tenant.create({ data: { name: 'Bench', plan: 'scale' } });
const { secret: apiKey } = await issueApiKey(prisma, { tenantId: tenant.id, name: 'bench' });
await prisma.customer.createMany({
  data: Array.from({ length: 1000 }, (_, i) => ({ tenantId: tenant.id, name: `Customer ${i}`, healthScore: i % 101 })),
});
await prisma.$disconnect();

const env = serviceEnv(url, { RATE_LIMIT_SCALE: '100000000' });
await startProcess(
  ['src/cli/admin.ts', 'inbound:secret', '--tenant', tenant.id, '--provider', 'stripe', '--secret', SECRET],
  env,
  /"secret"/,
);

const inbound: Request[] = [signedStripeInvoices(`/api/v1/webhooks/in/stripe/${tenant.id}`, SECRET, () => 'cus_mem')];

const runs: { name: string; args: string[]; node?: boolean }[] = [{ name: '`npm start` (tsx, all roles)', args: ['src/main.ts', 'all'] }];
if (existsSync(join(ROOT, 'dist', 'src', 'main.js')))
  runs.push({ name: '`npm run start:prod` (built, all roles)', args: ['dist/src/main.js', 'all'], node: true });
else console.log('no dist/: run `npm run build` to measure start:prod');

const rows: string[] = [];
for (const run of runs) {
  const port = 4100 + Math.floor(Math.random() * 50);
  const p = await startProcess(run.args, { ...env, PORT: String(port) }, /listening on/, { plainNode: run.node, fromSource: !run.node });
  await new Promise((r) => setTimeout(r, 5000));
  const idle = rssMiB(p.child.pid!);
  const base = `http://127.0.0.1:${port}`;
  const reads = await load('reads', {
    url: `${base}/api/v1/customers?limit=25`,
    headers: { authorization: `Bearer ${apiKey}` },
    durationS,
    connections,
  });
  const events = await load('inbound', { url: base, requests: inbound, durationS, connections });
  const after = rssMiB(p.child.pid!);
  await new Promise((r) => setTimeout(r, 5000));
  const settled = rssMiB(p.child.pid!);
  p.child.kill('SIGTERM');
  rows.push(`| ${run.name} | ${idle} | ${after} | ${settled} | ${reads.rps} req/s, ${events.rps} events/s | ${load1()} |`);
}
writeResult('Memory', [
  '| process | RSS idle after start, MiB | RSS right after the load, MiB | RSS 5 s later, MiB | load (10 s each, 20 connections) | load avg |',
  '|---|---|---|---|---|---|',
  ...rows,
]);
process.exit(0);
