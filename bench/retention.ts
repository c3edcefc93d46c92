// Retention of signals, the largest table: a tenant with a million signals spread over 800 days (about half
// past the default 400-day window), rolled up and deleted by the worker's retention pass in batches of
// 1,000, against the alternative of monthly range partitions whose old months are dropped whole. Measured
// for each: wall time, rows a second, the longest single statement (how long rows or the table are locked),
// and the WAL written (what replicas and backups must carry).
import pg from 'pg';
import { runRetention } from '../src/lifecycle/retention.ts';
import { freshDatabase, writeResult } from './lib.ts';
import { emptyBodiesBefore } from '../src/ingest/inbox.ts';

const url = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/chs_bench_retention';
const SIGNALS = Number(process.env.BENCH_SIGNALS ?? 1_000_000);
const CUSTOMERS = 2000;

await freshDatabase(url);
const pool = new pg.Pool({ connectionString: url, max: 2 });
const q = (sql: string, values: unknown[] = []) => pool.query(sql, values);
await q('ALTER TABLE signals DISABLE TRIGGER USER');
const {
  rows: [{ id: tenantId }],
} = await q(`INSERT INTO tenants (id, name, plan, updated_at) VALUES (gen_random_uuid(), 'Bench', 'scale', now()) RETURNING id`);
await q(
  `INSERT INTO customers (id, tenant_id, name, updated_at) SELECT gen_random_uuid(), $1, 'C' || g, now() FROM generate_series(1, $2) g`,
  [tenantId, CUSTOMERS],
);
const seed = `SELECT gen_random_uuid(), $1::uuid, c.id, 'api', (ARRAY['usage.event', 'chat.message', 'code.push'])[1 + g % 3],
                 now() - (g % 800) * interval '1 day' - random() * interval '1 day', 1 + g % 5,
                 CASE WHEN g % 3 = 1 THEN random() - 0.5 END, jsonb_build_object('user_id', 'u' || g % 9)
          FROM generate_series(1, $2) g, (SELECT array_agg(id) AS ids FROM customers WHERE tenant_id = $1) a,
               LATERAL (SELECT a.ids[1 + g % ${CUSTOMERS}] AS id) c`;
await q(`INSERT INTO signals (id, tenant_id, customer_id, source, kind, occurred_at, value, sentiment, attributes) ${seed}`, [
  tenantId,
  SIGNALS,
]);
await q('ANALYZE signals');
const due = Number(
  (await q(`SELECT count(*) FROM signals WHERE occurred_at < date_trunc('day', now(), 'UTC') - interval '400 days'`)).rows[0].count,
);
console.log(`seeded ${SIGNALS} signals, ${due} past the window`);

const wal = async () => (await q('SELECT pg_current_wal_lsn() AS l')).rows[0].l as string;
const walMiB = async (from: string) =>
  Number((await q('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1) AS d', [from])).rows[0].d) / 1048576;

// 1. The retention pass as the worker runs it, statement by statement (each one short transaction).
let longest = 0;
const timed = new pg.Pool({ connectionString: url, max: 1 });
const origQuery = timed.query.bind(timed);
(timed as unknown as { query: unknown }).query = async (...args: unknown[]) => {
  const t = performance.now();
  try {
    return await (origQuery as (...a: unknown[]) => Promise<unknown>)(...args);
  } finally {
    longest = Math.max(longest, performance.now() - t);
  }
};
let w = await wal();
let started = performance.now();
let processed = 0;
for (;;) {
  const r = (await runRetention(timed, { batchSize: 1000, maxBatches: 100, emptyInboundBodies: emptyBodiesBefore })).find(
    (x) => x.kind === 'signals',
  )!;
  processed += r.processed;
  if (!r.behind) break;
}
const batched = { seconds: (performance.now() - started) / 1000, rows: processed, longestMs: longest, walMiB: await walMiB(w) };
console.log('batched', batched);

// 2. The alternative: the same rows in a table partitioned by month; old months dropped whole.
await q(`CREATE TABLE signals_by_month (LIKE signals INCLUDING DEFAULTS) PARTITION BY RANGE (occurred_at)`);
const { rows: months } = await q(
  `SELECT generate_series(date_trunc('month', now() - interval '810 days'), date_trunc('month', now()), interval '1 month') AS m`,
);
for (const { m } of months) {
  await q(
    `CREATE TABLE "signals_m_${(m as Date).toISOString().slice(0, 7)}" PARTITION OF signals_by_month FOR VALUES FROM ('${(m as Date).toISOString()}') TO ('${(m as Date).toISOString()}'::timestamptz + interval '1 month')`,
  );
}
await q(`INSERT INTO signals_by_month (id, tenant_id, customer_id, source, kind, occurred_at, value, sentiment, attributes) ${seed}`, [
  tenantId,
  SIGNALS,
]);
await q(`CREATE INDEX ON signals_by_month (tenant_id, occurred_at)`);
w = await wal();
started = performance.now();
longest = 0;
let dropped = 0;
// Whole months that end before the cutoff: the month that straddles it has to stay.
const cutoff = Date.now() - 400 * 86_400_000;
const old = months
  .map(({ m }) => m as Date)
  .filter((m) => new Date(Date.UTC(m.getUTCFullYear(), m.getUTCMonth() + 1, 1)).getTime() <= cutoff)
  .map((m) => ({ relname: `signals_m_${m.toISOString().slice(0, 7)}` }));
for (const { relname } of old) {
  const n = Number((await q(`SELECT count(*) FROM "${relname}"`)).rows[0].count);
  const t = performance.now();
  await q(`DROP TABLE "${relname}"`);
  longest = Math.max(longest, performance.now() - t);
  dropped += n;
}
const partitioned = { seconds: (performance.now() - started) / 1000, rows: dropped, longestMs: longest, walMiB: await walMiB(w) };
console.log('partitions', partitioned);
await timed.end();
await pool.end();

const row = (name: string, r: typeof batched) =>
  `| ${name} | ${r.rows.toLocaleString('en')} | ${r.seconds.toFixed(1)} | ${Math.round(r.rows / r.seconds).toLocaleString('en')} | ${r.longestMs.toFixed(0)} | ${r.walMiB.toFixed(0)} |`;
writeResult('Signal retention', [
  `${SIGNALS.toLocaleString('en')} signals of one tenant over 800 days, ${due.toLocaleString('en')} of them past the 400-day window; PostgreSQL on the same machine.`,
  '',
  '| how | rows removed | seconds | rows/s | longest statement ms | WAL MiB |',
  '|---|---|---|---|---|---|',
  row('retention pass: roll up and delete, batches of 1,000', batched),
  row('monthly partitions: DROP the months past the window (no rollup)', partitioned),
  '',
  'Partitions drop whole months only: the month that straddles the cutoff stays until it has passed entirely, and no aggregates are kept.',
]);
process.exit(0);
