// One worker pass over the scale bench's database (DATABASE_URL), in a process of its own so that the
// resident memory sampled is the pass's alone (lib.ts withRss), as a worker process would hold it:
// - `scoring`: the daily pass as a worker runs it (queue every customer not computed for a day, then drain
//   in batches of SCORING_BATCH_SIZE with SCORING_CONCURRENCY lanes), as bench/scoring.ts measures it;
// - `training`: churn training on the labels of TENANT_ID, not put in use (as `trainChurnModel(activate:
//   false)` trains it);
// - `retention`: the retention pass as the worker runs it (batches of 1,000, 100 batches a kind and pass,
//   passes repeated while behind), its clock RETENTION_AHEAD_DAYS ahead, so that what is older than the
//   window minus those days is due at once; stopped after RETENTION_MAX_S seconds.
// Prints `RESULT <json>` when done.
import pg from 'pg';
import { createPool } from '../src/db/prisma.ts';
import { runRetention } from '../src/lifecycle/retention.ts';
import { trainChurnModel } from '../src/scoring/training.ts';
import { createScoringLoop } from '../src/scoring/drain.ts';
import { createScorer } from '../src/scoring/recompute.ts';
import { customerRows } from '../src/services/customer-rows.ts';
import { setActiveChurnModel } from '../src/services/workspace.ts';
import { emptyBodiesBefore } from '../src/ingest/inbox.ts';
import { withRss } from './lib.ts';

const url = process.env.DATABASE_URL!;
const mode = process.argv[2];
const quiet = { error: (o: object, m: string) => console.error(m, o), warn: (o: object, m: string) => console.error(m, o), info: () => {} };

if (mode === 'scoring') {
  const pool = createPool(url, 8);
  const loop = createScoringLoop(pool, createScorer(pool, customerRows.saveScores), {
    batchSize: Number(process.env.SCORING_BATCH_SIZE ?? 500),
    leaseSeconds: 120,
    concurrency: Number(process.env.SCORING_CONCURRENCY ?? 2),
    log: quiet,
  });
  const r = await withRss(async () => {
    const { queued } = await loop.daily();
    return { queued, computed: await loop.drain() };
  });
  console.log(`RESULT ${JSON.stringify({ ...r.result, seconds: r.seconds, rssStart: r.rssStart, rssMax: r.rssMax, rssEnd: r.rssEnd })}`);
  await pool.end();
} else if (mode === 'training') {
  const pool = createPool(url, 4);
  const r = await withRss(async () => {
    const t = await trainChurnModel(pool, process.env.TENANT_ID!, setActiveChurnModel, { activate: false });
    return { samples: t.samples, outcome: t.kind };
  });
  console.log(`RESULT ${JSON.stringify({ ...r.result, seconds: r.seconds, rssStart: r.rssStart, rssMax: r.rssMax, rssEnd: r.rssEnd })}`);
  await pool.end();
} else if (mode === 'retention') {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  const ahead = Number(process.env.RETENTION_AHEAD_DAYS ?? 0) * 86_400_000;
  const maxMs = Number(process.env.RETENTION_MAX_S ?? 600) * 1000;
  const r = await withRss(async () => {
    const processed: Record<string, number> = {};
    const started = Date.now();
    let behind = true;
    let passes = 0;
    while (behind && Date.now() - started < maxMs) {
      const reports = await runRetention(pool, {
        batchSize: 1000,
        maxBatches: 100,
        now: () => new Date(Date.now() + ahead),
        emptyInboundBodies: emptyBodiesBefore,
      });
      passes++;
      for (const x of reports) processed[x.kind] = (processed[x.kind] ?? 0) + x.processed;
      behind = reports.some((x) => x.behind);
    }
    return { processed, passes, finished: !behind };
  });
  console.log(`RESULT ${JSON.stringify({ ...r.result, seconds: r.seconds, rssStart: r.rssStart, rssMax: r.rssMax, rssEnd: r.rssEnd })}`);
  await pool.end();
} else {
  throw new Error(`scale-pass: no mode ${mode} (scoring, training, retention)`);
}
process.exit(0);
