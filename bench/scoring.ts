// The daily scoring pass: 100,000 customers with a month of signals each (about 60: product events,
// code pushes, chat, support conversations, payments, seat changes), 30 days of history, a subscription
// and an invoice each. The pass runs as a worker runs it (queue everything stale, then drain in batches
// with two lanes) in this process, with its resident memory sampled throughout.
import pg from 'pg';
import { createPool } from '../src/db/prisma.ts';
import { createScoringLoop } from '../src/scoring/drain.ts';
import { createScorer } from '../src/scoring/recompute.ts';
import { customerRows } from '../src/services/customer-rows.ts';
import { freshDatabase, withRss, writeResult } from './lib.ts';

const url = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/chs_bench';
const CUSTOMERS = Number(process.env.BENCH_CUSTOMERS ?? 100_000);
const TENANTS = 10;
const batchSize = Number(process.env.SCORING_BATCH_SIZE ?? 500);
const concurrency = Number(process.env.SCORING_CONCURRENCY ?? 2);

await freshDatabase(url);
const admin = new pg.Client({ connectionString: url });
await admin.connect();
const seedStarted = Date.now();
const step = async (what: string, sql: string) => {
  const t = Date.now();
  await admin.query(sql);
  console.log(`seed: ${what} (${((Date.now() - t) / 1000).toFixed(1)} s)`);
};
// Seeding is not what is measured: the recompute triggers stay off until the pass.
await step(
  'triggers off',
  'ALTER TABLE signals DISABLE TRIGGER USER; ALTER TABLE invoices DISABLE TRIGGER USER; ALTER TABLE subscriptions DISABLE TRIGGER USER',
);
await step(
  'tenants and customers',
  `INSERT INTO tenants (id, name, plan, updated_at) SELECT gen_random_uuid(), 'Bench ' || g, 'scale', now() FROM generate_series(1, ${TENANTS}) g;
   INSERT INTO customers (id, tenant_id, name, created_at, updated_at)
   SELECT gen_random_uuid(), t.id, 'Customer ' || g, now() - interval '200 days', now()
   FROM tenants t, generate_series(1, ${CUSTOMERS / TENANTS}) g`,
);
// Per customer an activity level a in 0..1 shapes how much of everything it does.
await step(
  'signals (a month each)',
  `CREATE TEMP TABLE c AS SELECT id, tenant_id, random() AS a FROM customers;
   INSERT INTO signals (id, tenant_id, customer_id, source, kind, occurred_at, value, sentiment, attributes)
   SELECT gen_random_uuid(), c.tenant_id, c.id, 'api', 'usage.event', now() - random() * (interval '30 days') * (2 - c.a), 1, NULL,
     jsonb_build_object('user_id', 'u' || floor(random() * 8))
   FROM c, generate_series(1, 35) g WHERE random() < 0.3 + c.a;
   INSERT INTO signals (id, tenant_id, customer_id, source, kind, occurred_at, value, attributes)
   SELECT gen_random_uuid(), c.tenant_id, c.id, 'github', 'code.push', now() - random() * interval '30 days', 1 + floor(random() * 5), jsonb_build_object('actor', 'dev' || floor(random() * 4))
   FROM c, generate_series(1, 6) g;
   INSERT INTO signals (id, tenant_id, customer_id, source, kind, occurred_at, sentiment, attributes)
   SELECT gen_random_uuid(), c.tenant_id, c.id, 'slack', 'chat.message', now() - random() * interval '30 days', random() * 1.4 - 0.6, jsonb_build_object('actor', 'm' || floor(random() * 6))
   FROM c, generate_series(1, 10) g;
   INSERT INTO signals (id, tenant_id, customer_id, source, kind, occurred_at, sentiment, attributes)
   SELECT gen_random_uuid(), c.tenant_id, c.id, 'intercom', k.kind, now() - (k.n + g) * interval '1 day', random() - 0.5, jsonb_build_object('conversation_id', c.id || '-' || g)
   FROM c, generate_series(1, 3) g, (VALUES ('support.conversation_opened', 5), ('support.customer_replied', 4), ('support.conversation_closed', 3)) AS k(kind, n)
   WHERE k.kind <> 'support.conversation_closed' OR g < 3;
   INSERT INTO signals (id, tenant_id, customer_id, source, kind, occurred_at, value)
   SELECT gen_random_uuid(), c.tenant_id, c.id, 'stripe', 'billing.invoice_paid', now() - interval '12 days', 4900 FROM c;
   INSERT INTO signals (id, tenant_id, customer_id, source, kind, occurred_at, value)
   SELECT gen_random_uuid(), c.tenant_id, c.id, 'stripe', 'billing.payment_failed', now() - random() * interval '10 days', 4900 FROM c WHERE random() < 0.1;
   INSERT INTO signals (id, tenant_id, customer_id, source, kind, occurred_at, value, attributes)
   SELECT gen_random_uuid(), c.tenant_id, c.id, 'stripe', 'growth.seats', now() - interval '20 days', 10 + floor(c.a * 6), jsonb_build_object('previous', 12)
   FROM c WHERE random() < 0.2`,
);
await step(
  'subscriptions and invoices',
  `INSERT INTO subscriptions (id, tenant_id, customer_id, provider, external_id, status, seats, mrr_minor, currency, last_event_at, created_at, updated_at)
   SELECT gen_random_uuid(), c.tenant_id, c.id, 'stripe', 'sub_' || c.id, CASE WHEN random() < 0.05 THEN 'past_due' ELSE 'active' END, 12, 34800, 'usd', now(), now() - interval '100 days', now() FROM c;
   INSERT INTO invoices (id, tenant_id, customer_id, provider, external_id, status, total_minor, currency, due_at, overdue_at, created_at, updated_at)
   SELECT gen_random_uuid(), c.tenant_id, c.id, 'stripe', 'in_' || c.id, s.status::"InvoiceStatus", 34800, 'usd', now() - interval '9 days',
     CASE WHEN s.status = 'overdue' THEN now() - interval '8 days' END, now() - interval '40 days', now()
   FROM c, LATERAL (SELECT CASE WHEN random() < 0.05 THEN 'overdue' ELSE 'paid' END AS status OFFSET 0) s`,
);
await step(
  'a month of daily history',
  `INSERT INTO health_history (customer_id, day, tenant_id, score, status, usage, engagement, support, billing, growth, churn_probability, computed_at)
   SELECT c.id, current_date - d, c.tenant_id, 50 + floor(c.a * 45), 'neutral', 50 + c.a * 45, 70, 80, 100, 70, 0.2, now() - d * interval '1 day'
   FROM c, generate_series(1, 30) d`,
);
await step('analyze', 'ANALYZE');
const { rows: counted } = await admin.query<{ n: number }>('SELECT count(*)::int AS n FROM signals');
await step(
  'triggers on',
  'ALTER TABLE signals ENABLE TRIGGER USER; ALTER TABLE invoices ENABLE TRIGGER USER; ALTER TABLE subscriptions ENABLE TRIGGER USER',
);
const seedSeconds = (Date.now() - seedStarted) / 1000;
console.log(`seeded ${CUSTOMERS} customers, ${counted[0]!.n} signals in ${seedSeconds.toFixed(0)} s`);

const pool = createPool(url, 8);
const quiet = { error: (o: object, m: string) => console.error(m, o), warn: (o: object, m: string) => console.error(m, o), info: () => {} };
const loop = createScoringLoop(pool, createScorer(pool, customerRows.saveScores), {
  batchSize,
  leaseSeconds: 120,
  concurrency,
  log: quiet,
});

async function pass(label: string) {
  const { result, seconds, rssStart, rssMax, rssEnd } = await withRss(async () => {
    const { queued } = await loop.daily();
    return { queued, computed: await loop.drain() };
  });
  const r = { label, ...result, seconds, perSecond: Math.round(result.computed / seconds), rssStart, rssMax, rssEnd };
  console.log(r);
  return r;
}

// First pass: every customer is new to scoring (inserts). Then, a day later, the steady daily pass
// (updates of yesterday's rows), which is what runs every day.
const cold = await pass('first pass (no snapshots yet)');
await admin.query(`UPDATE health_snapshots SET computed_at = computed_at - interval '1 day'`);
await admin.query('VACUUM ANALYZE health_snapshots, churn_predictions, customers');
const steady = await pass('daily pass (yesterday computed)');
const { rows: alerts } = await admin.query<{ n: number }>(`SELECT count(*)::int AS n FROM alerts WHERE status = 'open'`);
await admin.end();
await pool.end();

const row = (r: typeof cold) =>
  `| ${r.label} | ${r.computed} | ${r.seconds.toFixed(1)} | ${r.perSecond} | ${r.rssStart} → ${r.rssEnd} (max ${r.rssMax}) | < 60 s, steady memory |`;
writeResult('Scoring pass', [
  `${CUSTOMERS.toLocaleString('en')} customers in ${TENANTS} tenants, ${Number(counted[0]!.n).toLocaleString('en')} signals (a month each), 30 days of history;`,
  `batch ${batchSize}, ${concurrency} lanes in one process, PostgreSQL on the same machine. Open alerts after the passes: ${alerts[0]!.n}.`,
  '',
  '| pass | customers | seconds | customers/s | RSS MiB start → end (max) | target (2 cores) |',
  '|---|---|---|---|---|---|',
  row(cold),
  row(steady),
]);
process.exit(0);
