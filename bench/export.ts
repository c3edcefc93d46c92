// A workspace export of 100,000 customers (with identities, health snapshots and churn predictions),
// streamed over HTTP as NDJSON and as CSV by the API process, beside a bare server streaming the same rows
// as JSON lines; then a workspace three times as large through the same process, to show that the peak does
// not grow with the export. The client reads each stream as it arrives and keeps nothing; the servers'
// resident memory and CPU are sampled from /proc throughout. Whole-table buffering would need at least the
// export's size on top of the idle process.
import pg from 'pg';
import { createPrisma } from '../src/db/prisma.ts';
import { issueApiKey } from '../src/services/api-keys.ts';
import { freshDatabase, insertCustomers, measureStream as measure, serviceEnv, startProcess, writeResult } from './lib.ts';

const url = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/chs_bench_export';
const CUSTOMERS = Number(process.env.BENCH_CUSTOMERS ?? 100_000);

await freshDatabase(url);
const admin = new pg.Client({ connectionString: url });
await admin.connect();

/** A tenant with `n` customers, each with an identity, a health snapshot and a churn prediction. */
async function seed(n: number): Promise<string> {
  const [{ id: tenantId }] = (
    await admin.query<{ id: string }>(
      `INSERT INTO tenants (id, name, plan, updated_at) VALUES (gen_random_uuid(), 'Bench', 'scale', now()) RETURNING id`,
    )
  ).rows;
  await insertCustomers(admin, tenantId, n);
  await admin.query(
    `INSERT INTO customer_identities (id, tenant_id, customer_id, provider, external_id)
   SELECT gen_random_uuid(), tenant_id, id, 'stripe', 'cus_' || external_id FROM customers WHERE tenant_id = '${tenantId}';
   INSERT INTO health_snapshots (id, tenant_id, customer_id, score, status, dimensions, trend_7d, trend_30d, weakest_dimension)
   SELECT gen_random_uuid(), tenant_id, id, health_score, health_status,
          jsonb_build_array(jsonb_build_object('key', 'usage', 'score', health_score), jsonb_build_object('key', 'engagement', 'score', 60),
                            jsonb_build_object('key', 'support', 'score', 70), jsonb_build_object('key', 'billing', 'score', 80),
                            jsonb_build_object('key', 'growth', 'score', 50)), 1, -2, 'growth'
   FROM customers WHERE tenant_id = '${tenantId}';
   INSERT INTO churn_predictions (id, tenant_id, customer_id, probability, risk_level, risk_factors, recommended_interventions, model_version)
   SELECT gen_random_uuid(), tenant_id, id, churn_probability, churn_risk_level, '[]', '[]', 'default-v2' FROM customers WHERE tenant_id = '${tenantId}';
   ANALYZE`,
  );
  return tenantId;
}
const tenantId = await seed(CUSTOMERS);
const prisma = createPrisma({ url, poolSize: 2 });
const { secret } = await issueApiKey(prisma, { tenantId, name: 'bench' });

const port = 3950 + Math.floor(Math.random() * 40);
const service = await startProcess(['src/main.ts', 'api'], serviceEnv(url, { PORT: String(port) }), /listening on/);
const bare = await startProcess(['bench/bare-export.ts'], { DATABASE_URL: url }, /bare listening on (\d+)/);
const barePort = /bare listening on (\d+)/.exec(bare.output)![1];
const auth = { authorization: `Bearer ${secret}` };
// A first small run of each warms the code paths, so the peak is the stream's, not the first load's.
await fetch(`http://127.0.0.1:${port}/api/v1/exports/alerts`, { headers: auth }).then((r) => r.text());
await fetch(`http://127.0.0.1:${barePort}/?tenant=00000000-0000-0000-0000-000000000000`).then((r) => r.text());

const rows = [
  await measure('bare server, JSON lines', bare.child.pid!, `http://127.0.0.1:${barePort}/?tenant=${tenantId}`),
  await measure('GET /api/v1/exports/customers (NDJSON)', service.child.pid!, `http://127.0.0.1:${port}/api/v1/exports/customers`, auth),
  await measure(
    'GET /api/v1/exports/customers?format=csv',
    service.child.pid!,
    `http://127.0.0.1:${port}/api/v1/exports/customers?format=csv`,
    auth,
  ),
];
// The same process, a workspace three times as large.
const large = await seed(CUSTOMERS * 3);
const { secret: largeKey } = await issueApiKey(prisma, { tenantId: large, name: 'bench' });
const largeAuth = { authorization: `Bearer ${largeKey}` };
rows.push(
  await measure(
    `the same, ${(CUSTOMERS * 3).toLocaleString('en')} customers (NDJSON)`,
    service.child.pid!,
    `http://127.0.0.1:${port}/api/v1/exports/customers`,
    largeAuth,
  ),
  await measure(
    `the same, ${(CUSTOMERS * 3).toLocaleString('en')} customers (CSV)`,
    service.child.pid!,
    `http://127.0.0.1:${port}/api/v1/exports/customers?format=csv`,
    largeAuth,
  ),
);
await prisma.$disconnect();
await admin.end();
service.child.kill('SIGTERM');
bare.child.kill('SIGTERM');

const [baseline] = rows;
writeResult('Streamed export', [
  `${CUSTOMERS.toLocaleString('en')} customers with identities, health snapshots and churn predictions, one tenant; PostgreSQL on the same machine.`,
  'The client reads each stream as it arrives and keeps nothing. RSS sampled every 20 ms from /proc.',
  '',
  '| export | lines | MiB sent | seconds | rows/s | CPU s | RSS MiB idle → peak (growth) | growth vs bare |',
  '|---|---|---|---|---|---|---|---|',
  ...rows.map(
    (r) =>
      `| ${r.name} | ${r.lines.toLocaleString('en')} | ${r.mib.toFixed(1)} | ${r.seconds.toFixed(1)} | ${Math.round(r.lines / r.seconds).toLocaleString('en')} | ${r.cpu.toFixed(1)} | ${r.idle} → ${r.peak} (+${r.peak - r.idle}) | ${r === baseline ? '–' : `${r.peak - r.idle - (baseline!.peak - baseline!.idle) >= 0 ? '+' : ''}${r.peak - r.idle - (baseline!.peak - baseline!.idle)} MiB`} |`,
  ),
  '',
  `Target: a peak that does not grow with the export's size (the ${(CUSTOMERS * 3).toLocaleString('en')}-customer rows against the first two),`,
  `below what buffering the NDJSON file alone would add (${rows[1]!.mib.toFixed(0)} MiB, ${rows[3]!.mib.toFixed(0)} MiB). The growth above idle is the V8 heap's`,
  'garbage between collections, not rows held: rows are read and written a page (1,000) at a time.',
]);
process.exit(0);
