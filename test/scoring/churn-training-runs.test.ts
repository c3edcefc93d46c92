import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operator } from '../../src/services/audit.ts';
import { createChurnService } from '../../src/services/churn.ts';
import { fitHere } from '../../src/scoring/fit-runner.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { inactivityLabelledCustomers, tenantWithKey } from '../support/factories.ts';

// `patient` waits for a training as long as a request may, as the service does; `hurried` may wait 100 ms
// (its requests' time limit is 5.1 s), so every training outlives the request that started it.
let patient: TestApp;
let hurried: TestApp;
beforeAll(async () => {
  [patient, hurried] = await Promise.all([createTestApp(), createTestApp({ env: { REQUEST_TIMEOUT_MS: '5100' } })]);
});
afterAll(() => Promise.all([patient.close(), hurried.close()]));

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const train = (t: TestApp, key: string, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'POST', url: '/api/v1/churn-model/train', headers: { 'x-api-key': key, ...headers } });
const read = (t: TestApp, key: string, url: string) => t.app.inject({ method: 'GET', url, headers: { 'x-api-key': key } });

/** Reads the training at `url` until it has ended. */
async function ended(t: TestApp, key: string, url: string) {
  for (const until = Date.now() + 120_000; Date.now() < until; await new Promise((r) => setTimeout(r, 100))) {
    const res = await read(t, key, url);
    expect(res.statusCode).toBe(200);
    if (res.json().status !== 'running') return res.json();
    expect(res.headers['retry-after']).toBe('10');
  }
  throw new Error(`the training at ${url} did not end`);
}

/** A training as another process would have left it: running, last marked alive `aliveAgoS` seconds ago. */
async function runningElsewhere(t: TestApp, tenantId: string, aliveAgoS: number): Promise<string> {
  const { rows } = await t.pool.query<{ id: string }>(
    `INSERT INTO churn_trainings (id, tenant_id, activate, started_at, alive_at)
     VALUES (gen_random_uuid(), $1, true, now() - make_interval(secs => $2 + 5), now() - make_interval(secs => $2)) RETURNING id`,
    [tenantId, aliveAgoS],
  );
  return rows[0]!.id;
}

describe('a churn training that outlives its request', () => {
  it('is answered 202 with the training running, where to read it and when; its result is read there', async () => {
    const w = await tenantWithKey(hurried.prisma);
    await inactivityLabelledCustomers(hurried.prisma, w.tenantId);
    const res = await train(hurried, w.apiKey);
    expect(res.statusCode).toBe(202);
    const body = res.json();
    expect(body).toMatchObject({ status: 'running', activate: true, finished_at: null, result: null, error: null });
    expect(body.id).toMatch(UUID);
    expect(res.headers.location).toBe(`/api/v1/churn-model/trainings/${body.id}`);
    expect(res.headers['retry-after']).toBe('10');

    const done = await ended(hurried, w.apiKey, res.headers.location as string);
    expect(done).toMatchObject({ id: body.id, status: 'succeeded', started_at: body.started_at, error: null });
    expect(Date.parse(done.finished_at)).toBeGreaterThanOrEqual(Date.parse(done.started_at));
    expect(done.result).toMatchObject({ samples: 60, activated: true });
    // The model it stored is in use, and its training was audited once.
    expect((await read(hurried, w.apiKey, '/api/v1/churn-model')).json().model_version).toBe(done.result.model_version);
    expect(await hurried.prisma.auditEvent.count({ where: { tenantId: w.tenantId, action: 'churn_model.trained' } })).toBe(1);
  });

  it('with Prefer: respond-async is answered 202 at once, saying the preference was applied', async () => {
    const w = await tenantWithKey(patient.prisma);
    await inactivityLabelledCustomers(patient.prisma, w.tenantId);
    const res = await train(patient, w.apiKey, { prefer: 'respond-async' });
    expect(res.statusCode).toBe(202);
    expect(res.headers['preference-applied']).toBe('respond-async');
    expect((await ended(patient, w.apiKey, res.headers.location as string)).status).toBe('succeeded');
  });

  it('waits for a training that ends in time and answers its result', async () => {
    const w = await tenantWithKey(patient.prisma);
    await inactivityLabelledCustomers(patient.prisma, w.tenantId);
    const res = await train(patient, w.apiKey);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ samples: 60, activated: true });
  });

  it('refuses a second training while one runs in any process, naming the one running', async () => {
    const w = await tenantWithKey(hurried.prisma);
    await inactivityLabelledCustomers(hurried.prisma, w.tenantId);
    const id = await runningElsewhere(hurried, w.tenantId, 1);
    const res = await train(hurried, w.apiKey);
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ code: 'conflict', status: 409 });
    expect(res.json().detail).toContain(id);
  });

  it('takes a training whose process stopped as failed, and lets the next one start', async () => {
    const w = await tenantWithKey(hurried.prisma);
    await inactivityLabelledCustomers(hurried.prisma, w.tenantId);
    const id = await runningElsewhere(hurried, w.tenantId, 120);
    const stale = (await read(hurried, w.apiKey, `/api/v1/churn-model/trainings/${id}`)).json();
    expect(stale).toMatchObject({ status: 'failed', result: null, error: { code: 'service_unavailable' } });
    expect(stale.error.message).toContain('interrupted');
    expect(stale.finished_at).not.toBeNull();

    const res = await train(hurried, w.apiKey);
    expect(res.statusCode).toBe(202);
    expect(res.json().id).not.toBe(id);
    expect((await ended(hurried, w.apiKey, res.headers.location as string)).status).toBe('succeeded');
    const { rows } = await hurried.pool.query('SELECT status, error_code FROM churn_trainings WHERE id = $1', [id]);
    expect(rows[0]).toEqual({ status: 'failed', error_code: 'service_unavailable' });
  });

  it('refuses too few labels at once, starting nothing', async () => {
    const w = await tenantWithKey(hurried.prisma);
    await inactivityLabelledCustomers(hurried.prisma, w.tenantId, 30);
    const res = await train(hurried, w.apiKey, { prefer: 'respond-async' });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({ code: 'not_enough_data' });
    const { rows } = await hurried.pool.query('SELECT count(*)::int AS n FROM churn_trainings WHERE tenant_id = $1', [w.tenantId]);
    expect(rows[0].n).toBe(0);
  });

  it('is not found by another tenant, nor by an id it does not have', async () => {
    const a = await tenantWithKey(hurried.prisma);
    const b = await tenantWithKey(hurried.prisma);
    const id = await runningElsewhere(hurried, a.tenantId, 1);
    expect((await read(hurried, a.apiKey, `/api/v1/churn-model/trainings/${id}`)).statusCode).toBe(200);
    const foreign = await read(hurried, b.apiKey, `/api/v1/churn-model/trainings/${id}`);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toMatchObject({ code: 'not_found' });
    expect((await read(hurried, a.apiKey, `/api/v1/churn-model/trainings/${crypto.randomUUID()}`)).statusCode).toBe(404);
    expect((await read(hurried, a.apiKey, '/api/v1/churn-model/trainings/not-an-id')).statusCode).toBe(400);
  });
});

describe('churn trainings over GraphQL', () => {
  const gql = async (t: TestApp, key: string, query: string, variables: object = {}) =>
    (
      await t.app.inject({
        method: 'POST',
        url: '/graphql',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        payload: { query, variables },
      })
    ).json();

  it('starts a training, reads it by id and as the latest, until it has its result', async () => {
    const w = await tenantWithKey(hurried.prisma);
    await inactivityLabelledCustomers(hurried.prisma, w.tenantId);
    expect((await gql(hurried, w.apiKey, '{ latestChurnTraining { id } }')).data.latestChurnTraining).toBeNull();
    const started = (await gql(hurried, w.apiKey, 'mutation { startChurnTraining(activate: false) { id status activate } }')).data
      .startChurnTraining;
    expect(started).toMatchObject({ status: 'running', activate: false });
    expect((await gql(hurried, w.apiKey, '{ latestChurnTraining { id } }')).data.latestChurnTraining.id).toBe(started.id);
    const q = 'query($id: UUID!) { churnTraining(id: $id) { status finishedAt result { modelVersion activated } error { code } } }';
    let run = (await gql(hurried, w.apiKey, q, { id: started.id })).data.churnTraining;
    for (const until = Date.now() + 120_000; run.status === 'running' && Date.now() < until;) {
      await new Promise((r) => setTimeout(r, 100));
      run = (await gql(hurried, w.apiKey, q, { id: started.id })).data.churnTraining;
    }
    expect(run).toMatchObject({ status: 'succeeded', result: { modelVersion: 'trained-v1', activated: false }, error: null });
  });

  it('answers the deprecated trainChurnModel with a conflict naming the training when it outlives the request', async () => {
    const w = await tenantWithKey(hurried.prisma);
    await inactivityLabelledCustomers(hurried.prisma, w.tenantId);
    const res = await gql(hurried, w.apiKey, 'mutation { trainChurnModel { modelVersion } }');
    expect(res.errors[0].extensions.code).toBe('conflict');
    const id = (await gql(hurried, w.apiKey, '{ latestChurnTraining { id } }')).data.latestChurnTraining.id;
    expect(res.errors[0].message).toContain(id);
    await ended(hurried, w.apiKey, `/api/v1/churn-model/trainings/${id}`);
  });
});

describe('a churn training that fails', () => {
  it('stores that it failed, without the service’s own reason, and tells the operator', async () => {
    const w = await tenantWithKey(patient.prisma);
    await inactivityLabelledCustomers(patient.prisma, w.tenantId);
    const told: unknown[] = [];
    const churn = createChurnService({
      pool: patient.pool,
      prisma: patient.prisma,
      fitter: async () => {
        throw new Error('connection to the fitting thread lost at 0x7f');
      },
      onError: (err) => told.push(err),
    });
    const run = await churn.startTraining(operator(w.tenantId), { wait: true });
    expect(run).toMatchObject({
      status: 'failed',
      result: null,
      error: { code: 'internal_error', message: 'The training failed; start it again.' },
    });
    expect(told).toHaveLength(1);
    // Its turn is given back: the next one starts.
    const next = await churn.startTraining(operator(w.tenantId));
    expect(next.status).toBe('running');
    await churn.stopTrainings();
  });

  /** A churn service whose fits take `ms` each, and a promise of the first fit's start. */
  function slowFits(ms: number) {
    let fitting!: () => void;
    const fitStarted = new Promise<void>((r) => (fitting = r));
    const churn = createChurnService({
      pool: patient.pool,
      prisma: patient.prisma,
      fitter: (tenantId, input) => {
        fitting();
        return new Promise((r) => setTimeout(r, ms)).then(() => fitHere(tenantId, input));
      },
    });
    return { churn, fitStarted };
  }
  const models = async (tenantId: string) =>
    (await patient.pool.query('SELECT count(*)::int AS n FROM churn_models WHERE tenant_id = $1', [tenantId])).rows[0].n;

  it('stops with the service: the waiting request answered at once, the training stored as interrupted, no model', async () => {
    const w = await tenantWithKey(patient.prisma);
    await inactivityLabelledCustomers(patient.prisma, w.tenantId);
    const { churn, fitStarted } = slowFits(500);
    const waiting = churn.startTraining(operator(w.tenantId), { wait: true });
    await fitStarted;
    const stopped = churn.stopTrainings();
    // Answered before the fit ended: as it stood, running.
    expect((await waiting).status).toBe('running');
    await expect(churn.startTraining(operator(w.tenantId))).rejects.toMatchObject({ code: 'service_unavailable' });
    await stopped;
    const ended = await churn.training(w.tenantId, (await waiting).id);
    expect(ended).toMatchObject({ status: 'failed', error: { code: 'service_unavailable' } });
    expect(ended!.error!.message).toContain('the service stopped');
    expect(await models(w.tenantId)).toBe(0);
  });

  it('does not succeed once it was read as interrupted, and stores no model', async () => {
    const w = await tenantWithKey(patient.prisma);
    await inactivityLabelledCustomers(patient.prisma, w.tenantId);
    const { churn, fitStarted } = slowFits(300);
    const run = await churn.startTraining(operator(w.tenantId));
    await fitStarted;
    // Its process stopped marking it alive a while ago, as far as anyone reading it can tell.
    await patient.pool.query(`UPDATE churn_trainings SET alive_at = now() - interval '2 minutes' WHERE id = $1`, [run.id]);
    expect((await churn.training(w.tenantId, run.id))!.status).toBe('failed');
    // Its row, as the training leaves it once its fit is done.
    const row = async () =>
      (await patient.pool.query('SELECT status, error_code, error_message FROM churn_trainings WHERE id = $1', [run.id])).rows[0];
    for (const until = Date.now() + 30_000; (await row()).status === 'running' && Date.now() < until;)
      await new Promise((r) => setTimeout(r, 50));
    expect(await row()).toMatchObject({ status: 'failed', error_code: 'service_unavailable' });
    expect((await row()).error_message).toContain('the process running it stopped');
    expect(await models(w.tenantId)).toBe(0);
    await churn.stopTrainings();
  });
});
