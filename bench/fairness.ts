// One tenant's heavy work against another tenant's ordinary reads, in one API process: tenant A streams
// CSV exports of its 20,000 customers, 16 at once, again and again (far inside its plan's rate limit),
// while tenant B reads pages of its customers at a steady pace. Reports B's success rate, p50 and p99
// alone and beside A's exports, with the process's CPU share for heavy work (TENANT_CPU_SHARE) at its
// default and with no bound (1), in the same run; and how many export rows A got out meanwhile.
import { durationS, startApi, statusList, successRate, twoTenants, url } from './budgets.ts';
import { insertCustomers, load, type Measured, writeResult } from './lib.ts';
import pg from 'pg';
import { DEFAULT_CPU_SHARE } from '../src/runtime/cpu-share.ts';

const EXPORTS = Number(process.env.BENCH_FAIRNESS_EXPORTS ?? 16);
const A_CUSTOMERS = Number(process.env.BENCH_FAIRNESS_CUSTOMERS ?? 20_000);
const { a, b } = await twoTenants();

const admin = new pg.Client({ connectionString: url });
await admin.connect();
await insertCustomers(admin, a.tenantId, A_CUSTOMERS);
await admin.query('ANALYZE');
await admin.end();

/** A's exports, EXPORTS at once, each started again as soon as it ends, until `stop` says so; answers the rows read. */
async function exportsOf(base: string, stop: () => boolean): Promise<{ rows: number; failed: number }> {
  let rows = 0;
  let failed = 0;
  await Promise.all(
    Array.from({ length: EXPORTS }, async () => {
      while (!stop()) {
        const res = await fetch(`${base}/api/v1/exports/customers?format=csv`, { headers: { authorization: `Bearer ${a.apiKey}` } });
        if (!res.ok || !res.body) {
          failed++;
          await res.body?.cancel();
          await new Promise((r) => setTimeout(r, 200));
          continue;
        }
        const reader = res.body.getReader();
        for (let r = await reader.read(); !r.done; r = await reader.read())
          rows += r.value.reduce((n, byte) => n + (byte === 10 ? 1 : 0), 0);
      }
    }),
  );
  return { rows, failed };
}

const reads = (base: string, name: string) =>
  load(name, {
    url: `${base}/api/v1/customers?limit=50`,
    headers: { authorization: `Bearer ${b.apiKey}` },
    durationS,
    connections: 10,
    rate: 100,
  });

const rows: string[] = [];
const row = (m: Measured, share: string, exported = '–') =>
  `| ${m.name} | ${share} | ${m.rps} | ${successRate(m)} % (${statusList(m)}) | ${m.p50} | ${m.p99} | ${exported} |`;
for (const share of ['1', String(DEFAULT_CPU_SHARE.share)]) {
  const api = await startApi({ TENANT_CPU_SHARE: share, RATE_LIMIT_SCALE: '100000000' });
  await reads(api.base, 'warm-up');
  const alone = await reads(api.base, 'B alone');
  let done = false;
  const heavy = exportsOf(api.base, () => done);
  // A's exports get going before B's reads are measured.
  await new Promise((r) => setTimeout(r, 1000));
  const beside = await reads(api.base, `B beside ${EXPORTS} exports of A`);
  done = true;
  const exported = await heavy;
  api.stop();
  const label = share === '1' ? 'no bound (1)' : `${share} (default)`;
  rows.push(
    row(alone, label),
    row(beside, label, `${exported.rows.toLocaleString('en')} rows${exported.failed ? `, ${exported.failed} refused` : ''}`),
  );
}

writeResult('Fair share of CPU: exports beside reads', [
  `Tenant B: \`GET /api/v1/customers?limit=50\`, 10 connections paced at 100/s, ${durationS} s. Tenant A (Scale, ${A_CUSTOMERS.toLocaleString('en')} customers): ${EXPORTS} CSV exports of its customers at once, each started again when it ends, during B's measured run. One API process; rate limits out of the way. \`TENANT_CPU_SHARE\` is the part of the process one tenant's heavy work may take while others are served.`,
  '',
  '| load | TENANT_CPU_SHARE | req/s | success (answers) | p50 ms | p99 ms | A’s export rows meanwhile |',
  '|---|---|---|---|---|---|---|',
  ...rows,
]);
process.exit(0);
