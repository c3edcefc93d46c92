import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPg } from '../../src/db/sql.ts';
import { operator } from '../../src/services/audit.ts';
import { eraseCustomer } from '../../src/services/customer-erasure.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { lockWaiters } from '../support/inbox.ts';
import { customer, daysAgo, inactivityLabelledCustomers, type SignalSpec, tenantWithKey, userWithSession } from '../support/factories.ts';
import { emptyBodiesAbout } from '../../src/ingest/inbox.ts';
import { trainToEnd } from '../support/training.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const send = (key: string, method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) =>
  t.app.inject({ method, url, headers: { 'x-api-key': key }, payload });
const label = (key: string, id: string, body: object) => send(key, 'POST', `/api/v1/customers/${id}/churn-outcome`, body);

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

/** A small deterministic generator (mulberry32), so the dataset is the same on every run. */
function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

async function predictions(tenantId: string) {
  const rows = await t.prisma.churnPrediction.findMany({
    where: { tenantId },
    select: { customerId: true, probability: true, modelVersion: true },
  });
  return new Map(rows.map((r) => [r.customerId, { probability: r.probability, version: r.modelVersion }]));
}

/** The share of pairs two scorings put in the same order (a tie in either counts half). */
function concordance(a: number[], b: number[]): number {
  let agree = 0;
  let pairs = 0;
  for (let i = 0; i < a.length; i++) {
    for (let j = i + 1; j < a.length; j++) {
      const s = Math.sign(a[i]! - a[j]!) * Math.sign(b[i]! - b[j]!);
      agree += s > 0 ? 1 : s === 0 ? 0.5 : 0;
      pairs++;
    }
  }
  return agree / pairs;
}

describe('churn outcomes', () => {
  it('records a label for a customer, at now by default', async () => {
    const w = await tenantWithKey(t.prisma);
    const c = await customer(t.prisma, w.tenantId);
    const res = await label(w.apiKey, c.id, { churned: true });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ customer_id: c.id, churned: true, source: 'api' });
    expect(Math.abs(Date.parse(res.json().at) - Date.now())).toBeLessThan(10_000);
  });

  it.each([
    [{ churned: 'yes' }, 'churned'],
    [{}, 'churned'],
    [{ churned: true, at: 'yesterday' }, 'at'],
    [{ churned: true, at: new Date(Date.now() + 86_400_000).toISOString() }, 'at'],
  ])('refuses %j with 400 and records nothing', async (body, path) => {
    const w = await tenantWithKey(t.prisma);
    const c = await customer(t.prisma, w.tenantId);
    const res = await label(w.apiKey, c.id, body);
    expect(res.statusCode).toBe(400);
    expect(res.json().errors[0].path).toBe(path);
    expect(await t.prisma.churnOutcome.count({ where: { customerId: c.id } })).toBe(0);
  });

  it('answers 404 for an unknown customer or another tenant’s', async () => {
    const w = await tenantWithKey(t.prisma);
    const other = await tenantWithKey(t.prisma);
    const theirs = await customer(t.prisma, other.tenantId);
    expect((await label(w.apiKey, theirs.id, { churned: true })).statusCode).toBe(404);
    expect((await label(w.apiKey, '00000000-0000-4000-8000-000000000000', { churned: true })).statusCode).toBe(404);
    expect(await t.prisma.churnOutcome.count({ where: { customerId: theirs.id } })).toBe(0);
  });

  it('answers 404 for a customer erased while its label is recorded, and stores nothing', async () => {
    const w = await tenantWithKey(t.prisma);
    const c = await customer(t.prisma, w.tenantId);
    // The erasure is under way, not committed: the request finds the customer, then waits on its row.
    const erasing = await t.pool.connect();
    try {
      await erasing.query('BEGIN');
      await eraseCustomer(onPg(erasing), operator(w.tenantId), c.id, emptyBodiesAbout);
      const labelled = label(w.apiKey, c.id, { churned: true });
      await expect.poll(() => lockWaiters(t.pool), { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
      await erasing.query('COMMIT');
      const res = await labelled;
      expect(res.statusCode).toBe(404);
      expect(res.json().code).toBe('not_found');
    } finally {
      erasing.release();
    }
    expect(await t.prisma.churnOutcome.count({ where: { customerId: c.id } })).toBe(0);
  });

  it('is not allowed to a viewer', async () => {
    const w = await tenantWithKey(t.prisma);
    const c = await customer(t.prisma, w.tenantId);
    const { token } = await userWithSession(t.prisma, t.sessions, w.tenantId, 'viewer');
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/v1/customers/${c.id}/churn-outcome`,
      headers: { authorization: `Bearer ${token}` },
      payload: { churned: true },
    });
    expect(res.statusCode).toBe(403);
  });
});

describe('the churn model', () => {
  it('is the documented default until the tenant trains one', async () => {
    const w = await tenantWithKey(t.prisma);
    const m = (await send(w.apiKey, 'GET', '/api/v1/churn-model')).json();
    expect(m).toMatchObject({ model_version: 'default-v2', kind: 'default', trained_at: null, metrics: null });
    // −3.2 at every input's neutral value: 0.25 × ln 9 for a first reply within a working day, −0.8 × 0.5 for half the seats in use.
    expect(m.intercept).toBeCloseTo(-3.2 - 0.25 * Math.log(9) + 0.8 * 0.5, 6);
    // The twelve shortfalls, eight graded inputs, and the graded inputs it leaves to a trained model (coefficient 0).
    expect(m.features).toHaveLength(31);
    const feature = (code: string) => m.features.find((f: { code: string }) => f.code === code);
    expect(feature('inactivity')).toMatchObject({ coefficient: 1.8, baseline: 0 });
    expect(feature('usage_trend')).toMatchObject({ coefficient: -0.8, baseline: 0 });
    expect(feature('first_response_time').baseline).toBeCloseTo(Math.log(9), 6);
    expect(feature('usage_volume')).toMatchObject({ coefficient: 0, baseline: 0 });
    expect(m.features.filter((f: { coefficient: number }) => f.coefficient !== 0)).toHaveLength(20);
  });

  it('refuses to train with fewer than 20 labelled customers of each class', async () => {
    const w = await tenantWithKey(t.prisma);
    for (let i = 0; i < 25; i++) {
      const c = await customer(t.prisma, w.tenantId);
      await t.prisma.churnOutcome.create({
        data: { tenantId: w.tenantId, customerId: c.id, churned: i < 5, at: new Date(), source: 'api' },
      });
    }
    const res = await send(w.apiKey, 'POST', '/api/v1/churn-model/train');
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({ code: 'not_enough_data', status: 422 });
    expect(res.json().detail).toContain('5 and 20');
  });

  // Six sign-constrained cross-validated fits of 300 customers: more than the default 30 s on a busy machine.
  it('trained on outcomes driven by support backlog and tone, recovers them and beats the default', { timeout: 120_000 }, async () => {
    const w = await tenantWithKey(t.prisma);
    const rand = random(42);
    const specs: { id: string; churned: boolean; logit: number; signals: SignalSpec[] }[] = [];
    const labelAt = daysAgo(1);
    for (let i = 0; i < 300; i++) {
      const c = await customer(t.prisma, w.tenantId);
      // The generating process: backlog and negative tone drive churn; usage is noise the default model trusts.
      const backlog = Math.floor(rand() * 7);
      const tone = rand() * 2 - 1;
      const logit = -3 + 1.2 * backlog - 3.5 * tone;
      const churned = rand() < 1 / (1 + Math.exp(-logit));
      const usageDaysAgo = 2 + rand() * 40;
      const usageEvents = Math.floor(rand() * 30);
      specs.push({
        id: c.id,
        churned,
        logit,
        signals: [
          ...Array.from({ length: backlog }, (_, k) => ({
            kind: 'support.conversation_opened',
            daysAgo: 3 + k,
            sentiment: tone,
            attributes: { conversation_id: `conv-${i}-${k}` },
          })),
          { kind: 'chat.message', daysAgo: 4, sentiment: tone, attributes: { actor: `u${i}` } },
          { kind: 'chat.message', daysAgo: 6, sentiment: tone, attributes: { actor: `u${i}` } },
          ...Array.from({ length: usageEvents }, (_, k) => ({ kind: 'usage.event', daysAgo: usageDaysAgo + k * 0.5 })),
        ],
      });
    }
    await t.prisma.signal.createMany({
      data: specs.flatMap((s) =>
        s.signals.map((g) => ({
          tenantId: w.tenantId,
          customerId: s.id,
          source: 'test',
          kind: g.kind,
          occurredAt: daysAgo(g.daysAgo ?? 0),
          sentiment: g.sentiment ?? null,
          attributes: (g.attributes ?? {}) as object,
        })),
      ),
    });
    // Labelled in one statement: 300 API calls would exceed the plan's rate limit (the route has its own tests).
    await t.prisma.churnOutcome.createMany({
      data: specs.map((s) => ({ tenantId: w.tenantId, customerId: s.id, churned: s.churned, at: labelAt, source: 'api' })),
    });

    const res = await trainToEnd(t.app, w.apiKey);
    expect(res.status).toBe(200);
    const r = res.body;
    expect(r).toMatchObject({
      model_version: 'trained-v1',
      kind: 'trained',
      samples: 300,
      activated: true,
      baseline: { model_version: 'default-v2' },
    });
    // The split follows customer ids, which differ every run; 300 customers keep the held-out AUC steady.
    expect(r.holdout).toBeGreaterThanOrEqual(70);
    expect(r.auc).toBeGreaterThan(0.8);
    expect(r.auc).toBeGreaterThan(r.baseline.auc);
    expect(r.brier).toBeLessThan(r.baseline.brier);

    const model = (await send(w.apiKey, 'GET', '/api/v1/churn-model')).json();
    expect(model).toMatchObject({
      model_version: 'trained-v1',
      kind: 'trained',
      metrics: { auc: r.auc, samples: 300, holdout: r.holdout },
    });
    // The dashboard's view: the held-out calibration (every labelled customer, in five groups) and the chosen strength.
    const gql = await t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'x-api-key': w.apiKey, 'content-type': 'application/json' },
      payload: { query: '{ churnModel { metrics { logLoss lambda reliability { predicted observed count } } } }' },
    });
    const metrics = gql.json().data.churnModel.metrics;
    expect(metrics.reliability).toHaveLength(5);
    expect(metrics.reliability.reduce((n: number, b: { count: number }) => n + b.count, 0)).toBe(300);
    expect(metrics.reliability[0].predicted).toBeLessThan(metrics.reliability[4].predicted);
    expect(metrics.logLoss).toBeGreaterThan(0);
    expect([0.3, 1, 3, 10, 30, 100, 300, 1000, 3000]).toContain(metrics.lambda);

    // Every prediction of the tenant is refreshed with the new model, and ranks customers the way the
    // generating process does far better than the default coefficients.
    await t.score();
    const trained = await predictions(w.tenantId);
    expect(new Set([...trained.values()].map((p) => p.version))).toEqual(new Set(['trained-v1']));
    expect((await send(w.apiKey, 'DELETE', '/api/v1/churn-model')).json().model_version).toBe('default-v2');
    await t.score();
    const defaults = await predictions(w.tenantId);
    expect(new Set([...defaults.values()].map((p) => p.version))).toEqual(new Set(['default-v2']));
    const truth = specs.map((s) => s.logit);
    const agreement = (p: Map<string, { probability: number }>) =>
      concordance(
        specs.map((s) => p.get(s.id)!.probability),
        truth,
      );
    expect(agreement(trained)).toBeGreaterThan(0.8);
    expect(agreement(trained)).toBeGreaterThan(agreement(defaults) + 0.1);
  });

  it('asked not to activate, stores the model beside the default until it is put in use, and refuses one that did worse', async () => {
    const w = await tenantWithKey(t.prisma);
    await inactivityLabelledCustomers(t.prisma, w.tenantId);
    const { token } = await userWithSession(t.prisma, t.sessions, w.tenantId, 'admin');
    const gql = async (query: string, variables: object = {}) =>
      (
        await t.app.inject({
          method: 'POST',
          url: '/graphql',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          payload: { query, variables },
        })
      ).json();
    let run = (await gql('mutation { startChurnTraining(activate: false, wait: true) { id status } }')).data.startChurnTraining;
    while (run.status === 'running') {
      await new Promise((r) => setTimeout(r, 100));
      run = (await gql('query($id: UUID!) { churnTraining(id: $id) { id status } }', { id: run.id })).data.churnTraining;
    }
    const trained = (
      await gql('query($id: UUID!) { churnTraining(id: $id) { result { modelVersion eligible activated auc baselineAuc } } }', {
        id: run.id,
      })
    ).data.churnTraining.result;
    expect(trained).toMatchObject({ modelVersion: 'trained-v1', eligible: true, activated: false });
    expect((await gql('{ churnModel { kind } }')).data.churnModel.kind).toBe('default');
    expect((await send(w.apiKey, 'GET', '/api/v1/churn-model')).json().model_version).toBe('default-v2');

    const used = await gql('mutation($v: String!) { activateChurnModel(modelVersion: $v) { modelVersion } }', { v: 'trained-v1' });
    expect(used.data.activateChurnModel.modelVersion).toBe('trained-v1');
    expect((await gql('{ churnModel { kind } }')).data.churnModel.kind).toBe('trained');
    expect((await send(w.apiKey, 'GET', '/api/v1/churn-model')).json().model_version).toBe('trained-v1');
    expect(
      await t.prisma.auditEvent.count({ where: { tenantId: w.tenantId, action: 'churn_model.activated', targetId: 'trained-v1' } }),
    ).toBe(1);

    // A stored model whose held-out AUC fell short of the default's cannot be put in use.
    await t.pool.query(`UPDATE churn_models SET metrics = jsonb_set(metrics, '{auc}', '0.1') WHERE tenant_id = $1`, [w.tenantId]);
    await send(w.apiKey, 'DELETE', '/api/v1/churn-model');
    const refused = await gql('mutation($v: String!) { activateChurnModel(modelVersion: $v) { modelVersion } }', { v: 'trained-v1' });
    expect(refused.errors[0].extensions.code).toBe('conflict');
    expect((await send(w.apiKey, 'GET', '/api/v1/churn-model')).json().model_version).toBe('default-v2');
    const unknown = await gql('mutation($v: String!) { activateChurnModel(modelVersion: $v) { modelVersion } }', { v: 'trained-v9' });
    expect(unknown.errors[0].extensions.code).toBe('not_found');
  });

  it('keeps a trained model that ranks worse than the default out of use and calibrates the default instead', async () => {
    const w = await tenantWithKey(t.prisma);
    const ids: { id: string; churned: boolean }[] = [];
    for (let i = 0; i < 60; i++) ids.push({ id: (await customer(t.prisma, w.tenantId)).id, churned: i % 2 === 0 });
    // The documented folds: within each class, in id-hash order, customers are dealt into five folds in turn.
    // In folds 0 and 1 the churned are the inactive ones, in folds 2-4 the active ones: a model fitted on
    // the other folds always learns the relation its own fold does not have, so every customer is judged by
    // a model that gets it backwards, while the default model is right on two folds in five.
    const fold = new Map<string, number>();
    for (const churned of [true, false]) {
      const sorted = ids.filter((x) => x.churned === churned).sort((a, b) => sha(a.id).localeCompare(sha(b.id)));
      sorted.forEach((x, k) => fold.set(x.id, k % 5));
    }
    for (const { id, churned } of ids) {
      const inactive = fold.get(id)! < 2 ? churned : !churned;
      await t.prisma.signal.create({
        data: { tenantId: w.tenantId, customerId: id, source: 'api', kind: 'usage.event', occurredAt: daysAgo(inactive ? 60 : 2) },
      });
      await t.prisma.churnOutcome.create({ data: { tenantId: w.tenantId, customerId: id, churned, at: daysAgo(1), source: 'api' } });
    }
    const r = (await trainToEnd(t.app, w.apiKey)).body;
    const [stored] = (
      await t.pool.query<{ metrics: { kind: string; trained: { auc: number } } }>('SELECT metrics FROM churn_models WHERE tenant_id = $1', [
        w.tenantId,
      ])
    ).rows;
    expect(stored!.metrics.kind).toBe('calibrated_default');
    expect(stored!.metrics.trained.auc).toBeLessThan(r.baseline.auc);
    // Same ranking as the default, probabilities fitted to this tenant's churn rate (half its customers).
    expect(r).toMatchObject({ model_version: 'calibrated-default-v1', kind: 'calibrated_default', auc: r.baseline.auc, activated: true });
    expect(r.brier).toBeLessThan(r.baseline.brier);
    const inUse = (await send(w.apiKey, 'GET', '/api/v1/churn-model')).json();
    expect(inUse).toMatchObject({ model_version: 'calibrated-default-v1', kind: 'calibrated_default' });
    const slope = inUse.features.find((f: { code: string }) => f.code === 'inactivity').coefficient / 1.8;
    expect(slope).toBeGreaterThan(0);
    expect(inUse.features.find((f: { code: string }) => f.code === 'low_usage').coefficient).toBeCloseTo(1.6 * slope, 6);
    const { token } = await userWithSession(t.prisma, t.sessions, w.tenantId, 'viewer');
    const kind = (
      await t.app.inject({
        method: 'POST',
        url: '/graphql',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        payload: { query: '{ churnModel { modelVersion kind } }' },
      })
    ).json().data.churnModel;
    expect(kind).toEqual({ modelVersion: 'calibrated-default-v1', kind: 'calibrated_default' });
  });
});
