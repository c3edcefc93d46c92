// The churn evaluation (`npm run eval:churn`): every scenario of scenarios.ts is sent to an in-process
// service on the test database through the public API, the tenant trains its model, and the predictions
// the API then serves for the unlabelled customers are measured against their outcomes.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../test/support/app.ts';
import { tenantWithKey, userWithSession } from '../../test/support/factories.ts';
import { generateCohort, random, type Scenario } from './cohort.ts';
import { feedCohort, label, model, scored, train, type Tenant } from './feed.ts';
import { auc, expectedAuc, metricsOf, type Metrics, reliability } from './metrics.ts';
import { DEFAULT_MODEL, FEATURE_CODES } from '../../src/scoring/churn-model.ts';
import { tenantWeights } from '../../src/scoring/dimensions.ts';
import { vectors } from '../../src/scoring/training.ts';
import { reliabilitySvg } from './reliability-svg.ts';
import { SCENARIOS, SMALL } from './scenarios.ts';

const small = process.env.EVAL_SMALL === '1';
const only = process.env.EVAL_SCENARIOS ? process.env.EVAL_SCENARIOS.split(',').filter(Boolean) : undefined;
const out = process.env.EVAL_OUT ?? 'test-output/churn-eval';
const docs = process.env.EVAL_DOCS === '1';
const FLOORS = 'eval/churn/floors.json';
const DIMENSIONS = ['usage', 'engagement', 'support', 'billing', 'growth'] as const;

const scenarios = SCENARIOS.filter((s) => (only ? only.includes(s.name) : small ? SMALL.includes(s.name) : true));
const splits: ('random' | 'time')[] = small ? ['random'] : ['random', 'time'];

export interface Row {
  scenario: string;
  split: 'random' | 'time';
  customers: number;
  labels: number;
  test: number;
  churnRate: number;
  default: Metrics;
  trained: Metrics;
  truth: Metrics;
  /** ROC AUC expected under the true probabilities (metrics.ts expectedAuc): default, model in use, truth. */
  expected: { default: number; trained: number; truth: number };
  training: { modelVersion: string; activated: boolean; auc: number; brier: number; baselineAuc: number };
  healthAuc: number;
  dimensionAuc: Record<string, { auc: number | null; coverage: number }>;
}

let t: TestApp;
let worker: { close(): Promise<void> };
const rows: Row[] = [];

beforeAll(async () => {
  // Every request here is the harness's own: the plan's per-minute limit would only slow it down.
  t = await createTestApp({ env: { RATE_LIMIT_SCALE: '10000000' } });
  worker = t.startWorker();
});
afterAll(async () => {
  await worker?.close();
  await t?.close();
});

async function tenant(): Promise<Tenant> {
  const w = await tenantWithKey(t.prisma, 'scale');
  const { token } = await userWithSession(t.prisma, t.sessions, w.tenantId, 'owner');
  return { tenantId: w.tenantId, apiKey: w.apiKey, token };
}

async function settled(tenantId: string) {
  for (let i = 0; i < 1200; i++) {
    const [{ n }] = (
      await t.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM inbox_events WHERE tenant_id = $1 AND status = 'received'`, [
        tenantId,
      ])
    ).rows as [{ n: number }];
    if (n === 0) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the worker did not process the webhooks within two minutes');
}

/**
 * Scores the tenant until its scoring queue is empty: the worker scores beside `t.score()`, and customers it
 * holds are written when it finishes, so a read straight after the drain could mix old and new predictions.
 */
async function scoredAll(tenantId: string) {
  for (let i = 0; i < 600; i++) {
    await t.score();
    const [{ n }] = (await t.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM scoring_queue WHERE tenant_id = $1', [tenantId]))
      .rows as [{ n: number }];
    if (n === 0) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('the scoring queue did not empty within two minutes');
}

const r4 = (x: number) => Math.round(x * 1e4) / 1e4;
const round = (m: Metrics): Metrics => Object.fromEntries(Object.entries(m).map(([k, v]) => [k, r4(v)])) as unknown as Metrics;

async function run(s: Scenario, split: 'random' | 'time'): Promise<Row> {
  const cohort = generateCohort(s);
  const w = await tenant();
  const ids = await feedCohort(t.app, w, cohort, () => settled(w.tenantId));
  await scoredAll(w.tenantId);
  // Outcomes arrive in the cohort's order; a random split labels a random share, a time split the earliest.
  const order = cohort.map((c) => c.index);
  const nLabels = Math.round(s.customers * s.labelled);
  const labelled = new Set(
    split === 'time'
      ? order.slice(0, nLabels)
      : (() => {
          const r = random(s.seed * 7 + 1);
          return order
            .map((i) => ({ i, k: r() }))
            .sort((a, b) => a.k - b.k)
            .slice(0, nLabels)
            .map((x) => x.i);
        })(),
  );
  const test = order.filter((i) => !labelled.has(i));
  const y = test.map((i): number => (cohort[i]!.churned ? 1 : 0));
  const testIds = test.map((i) => ids[i]!);
  const truths = test.map((i) => cohort[i]!.truth);

  const before = await scored(t.app, w, testIds);
  await label(
    t.app,
    w,
    order.filter((i) => labelled.has(i)).map((i) => ({ id: ids[i]!, churned: cohort[i]!.churned })),
  );
  const trained = await train(t.app, w);
  await scoredAll(w.tenantId);
  const after = await scored(t.app, w, testIds);
  // Measured only when every prediction comes from the model in use.
  const inUse = trained.activated ? trained.model_version : DEFAULT_MODEL.version;
  expect(after.filter((x) => x.probability !== null && x.modelVersion !== inUse)).toEqual([]);
  const probabilities = (xs: { probability: number | null }[]) => xs.map((x) => x.probability ?? 0);

  const dimensionAuc = Object.fromEntries(
    DIMENSIONS.map((d) => {
      const known = before.map((b, k) => ({ v: b.dimensions[d], y: y[k]! })).filter((x) => x.v !== null && x.v !== undefined);
      const a = known.length
        ? auc(
            known.map((x) => 100 - x.v!),
            known.map((x) => x.y),
          )
        : Number.NaN;
      return [d, { auc: Number.isNaN(a) ? null : r4(a), coverage: r4(known.length / before.length) }];
    }),
  );
  const row: Row = {
    scenario: s.name,
    split,
    customers: s.customers,
    labels: nLabels,
    test: test.length,
    churnRate: r4(y.reduce((a, b) => a + b, 0) / y.length),
    default: round(metricsOf(probabilities(before), y)),
    trained: round(metricsOf(probabilities(after), y)),
    truth: round(
      metricsOf(
        test.map((i) => cohort[i]!.truth),
        y,
      ),
    ),
    expected: {
      default: r4(expectedAuc(probabilities(before), truths)),
      trained: r4(expectedAuc(probabilities(after), truths)),
      truth: r4(expectedAuc(truths, truths)),
    },
    training: {
      modelVersion: trained.model_version,
      activated: trained.activated,
      auc: trained.auc,
      brier: trained.brier,
      baselineAuc: trained.baseline.auc,
    },
    healthAuc: r4(
      auc(
        before.map((b) => 100 - (b.health ?? 50)),
        y,
      ),
    ),
    dimensionAuc,
  };
  mkdirSync(out, { recursive: true });
  const svg = reliabilitySvg(`${s.name}, ${split} split (${test.length} unlabelled customers)`, [
    {
      name: `before training: ${DEFAULT_MODEL.version} (Brier ${row.default.brier.toFixed(3)})`,
      bins: reliability(probabilities(before), y),
    },
    { name: `in use after training: ${inUse} (Brier ${row.trained.brier.toFixed(3)})`, bins: reliability(probabilities(after), y) },
    {
      name: `true probabilities (Brier ${row.truth.brier.toFixed(3)})`,
      bins: reliability(
        test.map((i) => cohort[i]!.truth),
        y,
      ),
    },
  ]);
  writeFileSync(`${out}/${s.name}-${split}.svg`, svg);
  if (docs && s.name === 'mixture' && split === 'random') writeFileSync('docs/churn-calibration.svg', svg);
  if (process.env.EVAL_DUMP === '1') {
    // The inputs the service computed for every customer, beside what generated them: for studying features offline.
    const { rows: stored } = await t.pool.query<{ customer_id: string; features: Record<string, number | null> }>(
      'SELECT customer_id, features FROM churn_predictions WHERE tenant_id = $1',
      [w.tenantId],
    );
    const byId = new Map(stored.map((r) => [r.customer_id, r.features]));
    // And the inputs as training computes them (its health 30 days back rebuilt from the signals).
    const asTrained = await vectors(
      t.pool,
      cohort.map((c) => ({ customer_id: ids[c.index]!, churned: c.churned, at: new Date() })),
      tenantWeights(null),
    );
    const dump = cohort.map((c) => ({
      ...c.drivers,
      truth: c.truth,
      churned: c.churned,
      labelled: labelled.has(c.index),
      features: byId.get(ids[c.index]!),
      trainingInputs: Object.fromEntries(FEATURE_CODES.map((code, j) => [code, asTrained[c.index]![j]])),
    }));
    writeFileSync(`${out}/${s.name}-${split}-features.json`, JSON.stringify(dump));
  }
  const current = await model(t.app, w);
  expect(current.model_version).toBe(inUse);
  return row;
}

/** A difference with its sign, 0.000 when it rounds to nothing. */
const signed = (x: number) => (Math.abs(x) < 0.0005 ? '0.000' : `${x > 0 ? '+' : '−'}${Math.abs(x).toFixed(3)}`);
const f = (x: number | null | undefined, d = 3) => (x === null || x === undefined || Number.isNaN(x) ? 'n/a' : x.toFixed(d));

function table(rs: Row[]): string {
  const lines = [
    '| scenario | split | labels / test | churn | AUC default / in use / truth | PR AUC default / in use / truth | Brier default / in use / truth | log loss in use / truth | lift@10 in use / truth | in use |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...rs.map(
      (r) =>
        `| ${r.scenario} | ${r.split} | ${r.labels} / ${r.test} | ${f(r.churnRate, 2)} | ${f(r.default.auc)} / **${f(r.trained.auc)}** / ${f(r.truth.auc)} | ${f(r.default.prAuc)} / ${f(r.trained.prAuc)} / ${f(r.truth.prAuc)} | ${f(r.default.brier)} / ${f(r.trained.brier)} / ${f(r.truth.brier)} | ${f(r.trained.logLoss)} / ${f(r.truth.logLoss)} | ${f(r.trained.lift10, 2)} / ${f(r.truth.lift10, 2)} | ${r.training.activated ? r.training.modelVersion : DEFAULT_MODEL.version} |`,
    ),
    '',
    '| scenario | split | expected ROC AUC default / in use / truth | in use − default |',
    '|---|---|---|---|',
    ...rs.map(
      (r) =>
        `| ${r.scenario} | ${r.split} | ${f(r.expected.default)} / **${f(r.expected.trained)}** / ${f(r.expected.truth)} | ${signed(r.expected.trained - r.expected.default)} |`,
    ),
    '',
    '| scenario | split | AUC of 100 − health | usage | engagement | support | billing | growth |',
    '|---|---|---|---|---|---|---|---|',
    ...rs.map(
      (r) =>
        `| ${r.scenario} | ${r.split} | ${f(r.healthAuc)} | ${DIMENSIONS.map((d) => `${f(r.dimensionAuc[d]!.auc)}${r.dimensionAuc[d]!.coverage < 1 ? ` (${Math.round(r.dimensionAuc[d]!.coverage * 100)} %)` : ''}`).join(' | ')} |`,
    ),
  ];
  return lines.join('\n') + '\n';
}

describe('churn evaluation', () => {
  for (const s of scenarios) {
    for (const split of splits) {
      it(`${s.name} (${split} split)`, { timeout: 900_000 }, async () => {
        const row = await run(s, split);
        rows.push(row);
        console.log(table([row]));
      });
    }
  }

  it('writes the report and holds the committed floors', () => {
    mkdirSync(out, { recursive: true });
    writeFileSync(`${out}/report.json`, JSON.stringify(rows, null, 2));
    writeFileSync(`${out}/report.md`, table(rows));
    console.log(`\n${table(rows)}\nreport: ${out}/report.md, plots: ${out}/*.svg`);
    const floors = JSON.parse(readFileSync(FLOORS, 'utf8')) as Record<string, Record<string, number>>;
    const below = rows.flatMap((r) => {
      const floor = floors[r.scenario]?.[r.split];
      return floor !== undefined && r.trained.auc < floor
        ? [`${r.scenario} (${r.split}): AUC of the model in use ${r.trained.auc} < floor ${floor}`]
        : [];
    });
    expect(below).toEqual([]);
  });
});
