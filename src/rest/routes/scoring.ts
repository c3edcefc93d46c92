import type { FastifyInstance } from 'fastify';
import { COMPONENTS } from '../../contract/entities.ts';
import * as requests from '../../contract/requests.ts';
import { serialize } from '../../contract/serialize.ts';
import { type ContractTypeProvider, schemaOf } from '../../contract/wire.ts';
import { problemResponses } from '../../http/openapi.ts';
import {
  ChurnModelDocument,
  type ChurnModelDetailFragment,
  HealthWeightsDocument,
  RecordChurnOutcomeDocument,
  ResetChurnModelDocument,
  ResetHealthWeightsDocument,
  SetHealthWeightsDocument,
  ChurnTrainingDocument,
  type ChurnTrainingRunDetailFragment,
  StartChurnTrainingDocument,
} from '../generated/operations.ts';
import { notFound, storedError } from '../../errors.ts';
import type { RestDeps } from '../deps.ts';

// GraphQL lists the baseline's numbers beside the model's; REST groups them under `baseline`.
const baselineOf = (m: { baselineModelVersion: string; baselineAuc: number; baselineBrier: number }) => ({
  modelVersion: m.baselineModelVersion,
  auc: m.baselineAuc,
  brier: m.baselineBrier,
});
const churnModel = (m: ChurnModelDetailFragment) =>
  serialize(COMPONENTS.churnModel.shape, { ...m, metrics: m.metrics && { ...m.metrics, baseline: baselineOf(m.metrics) } });

const trainingResult = (r: NonNullable<ChurnTrainingRunDetailFragment['result']>) =>
  serialize(COMPONENTS.churnTraining.shape, { ...r, baseline: baselineOf(r) });
const trainingRun = (t: ChurnTrainingRunDetailFragment) =>
  serialize(COMPONENTS.churnTrainingRun.shape, { ...t, result: t.result && { ...t.result, baseline: baselineOf(t.result) } });
const trainingLocation = (id: string) => `/api/v1/churn-model/trainings/${id}`;
/** How long a client is asked to wait before reading a running training again. */
const TRAINING_RETRY_AFTER_S = 10;

export async function scoringRoutes(fastify: FastifyInstance, { run, context }: RestDeps) {
  const app = fastify.withTypeProvider<ContractTypeProvider>();
  const weights = { 200: COMPONENTS.healthWeights.ref };
  app.get(
    '/health-weights',
    {
      schema: {
        tags: ['Scoring'],
        operationId: 'getHealthWeights',
        summary: 'Get the health weights',
        description: 'The dimension weights of the tenant’s health scores; `is_default` tells whether they are the defaults.',
        response: { ...weights, ...problemResponses(401, 403, 429) },
      },
    },
    async (req) => serialize(COMPONENTS.healthWeights.shape, (await run(HealthWeightsDocument, {}, context(req))).healthWeights),
  );

  app.put(
    '/health-weights',
    {
      schema: {
        tags: ['Scoring'],
        operationId: 'setHealthWeights',
        summary: 'Set the health weights',
        description: 'Sets the dimension weights (each 0-1, summing to 1); every customer is recomputed.',
        body: schemaOf(requests.weightsInput, { examples: [{ usage: 0.3, engagement: 0.25, support: 0.15, billing: 0.2, growth: 0.1 }] }),
        response: { ...weights, ...problemResponses(400, 401, 403, 413, 415, 429) },
      },
    },
    async (req) =>
      serialize(COMPONENTS.healthWeights.shape, (await run(SetHealthWeightsDocument, { input: req.body }, context(req))).setHealthWeights),
  );

  app.delete(
    '/health-weights',
    {
      schema: {
        tags: ['Scoring'],
        operationId: 'resetHealthWeights',
        summary: 'Reset the health weights',
        description: 'Goes back to the default weights; every customer is recomputed.',
        response: { ...weights, ...problemResponses(401, 403, 429) },
      },
    },
    async (req) => serialize(COMPONENTS.healthWeights.shape, (await run(ResetHealthWeightsDocument, {}, context(req))).resetHealthWeights),
  );

  app.get(
    '/churn-model',
    {
      schema: {
        tags: ['Scoring'],
        operationId: 'getChurnModel',
        summary: 'Get the churn model',
        description: 'The churn model in use, with its coefficients and, when trained, its held-out metrics.',
        response: { 200: COMPONENTS.churnModel.ref, ...problemResponses(401, 403, 429) },
      },
    },
    async (req) => churnModel((await run(ChurnModelDocument, {}, context(req))).churnModel),
  );

  app.delete(
    '/churn-model',
    {
      schema: {
        tags: ['Scoring'],
        operationId: 'resetChurnModel',
        summary: 'Reset the churn model',
        description: 'Puts the default coefficients back in use (trained models are kept); predictions refresh.',
        response: { 200: COMPONENTS.churnModel.ref, ...problemResponses(401, 403, 429) },
      },
    },
    async (req) => churnModel((await run(ResetChurnModelDocument, {}, context(req))).resetChurnModel),
  );

  app.post(
    '/churn-model/train',
    {
      schema: {
        tags: ['Scoring'],
        operationId: 'trainChurnModel',
        summary: 'Train the churn model',
        description:
          'Uses the latest label of each customer (`POST /customers/{id}/churn-outcome`, or a cancelled subscription). Needs 20 churned and 20 retained customers (else 422 `not_enough_data`). Every labelled customer is held out once (five-fold cross-validation) to measure AUC and Brier score, beside the default model on the same customers; the new model is put in use only when it does at least as well as the default, and every prediction is refreshed within a minute. One training of a workspace runs at a time (another meanwhile is a 409 `conflict`).\n\nThe answer waits for the training to end for about 20 seconds and is then its result (200). Training on thousands of labels takes longer: the training goes on, and the answer is a 202 with the training (`status: running`), its address in `Location` and `Retry-After`; read it there until it has succeeded or failed. Send `Prefer: respond-async` to have the 202 at once.',
        headers: schemaOf(requests.preferHeaders),
        response: {
          200: COMPONENTS.churnTraining.ref,
          202: {
            ...COMPONENTS.churnTrainingRun.ref,
            description: 'The training goes on: read it at `Location`.',
            headers: {
              Location: { type: 'string', description: 'The training: `/api/v1/churn-model/trainings/{training_id}`.' },
              'Retry-After': { type: 'integer', description: 'Seconds to wait before reading it.' },
              'Preference-Applied': { type: 'string', description: '`respond-async` when the request asked for it.' },
            },
          },
          ...problemResponses(401, 403, 409, 422, 429, 503),
        },
      },
    },
    async (req, reply) => {
      const respondAsync = /(^|[\s,;])respond-async(\s*($|[,;]))/i.test(req.headers.prefer ?? '');
      const t = (await run(StartChurnTrainingDocument, { wait: !respondAsync }, context(req))).startChurnTraining;
      if (t.result) return trainingResult(t.result);
      // A training that failed is answered as the request would have been refused, had it failed at once.
      if (t.error) throw storedError(t.error);
      if (respondAsync) reply.header('preference-applied', 'respond-async');
      return reply
        .code(202)
        .header('location', trainingLocation(t.id))
        .header('retry-after', String(TRAINING_RETRY_AFTER_S))
        .send(trainingRun(t));
    },
  );

  app.get(
    '/churn-model/trainings/:training_id',
    {
      schema: {
        tags: ['Scoring'],
        operationId: 'getChurnTraining',
        summary: 'Get a churn training',
        description:
          'A training started by `POST /churn-model/train`: `running`, `succeeded` with its `result` (the figures that call answers when it waits long enough), or `failed` with its `error`. Kept at least 90 days from its start. While it runs, the answer carries `Retry-After`.',
        params: schemaOf(requests.trainingParams),
        response: {
          200: {
            ...COMPONENTS.churnTrainingRun.ref,
            description: 'The training as it stands.',
            headers: { 'Retry-After': { type: 'integer', description: 'While it runs: seconds to wait before reading it again.' } },
          },
          ...problemResponses(400, 401, 403, 404, 429),
        },
      },
    },
    async (req, reply) => {
      const t = (await run(ChurnTrainingDocument, { id: req.params.training_id }, context(req))).churnTraining;
      if (!t) throw notFound(`Churn training ${req.params.training_id}`);
      if (t.status === 'running') reply.header('retry-after', String(TRAINING_RETRY_AFTER_S));
      return trainingRun(t);
    },
  );

  app.post(
    '/customers/:customer_id/churn-outcome',
    {
      schema: {
        tags: ['Scoring'],
        operationId: 'recordChurnOutcome',
        summary: 'Record a churn outcome',
        description: 'Labels a customer as churned (or retained) at a time, for churn training.',
        params: schemaOf(requests.customerParams),
        body: schemaOf(requests.churnOutcomeInput, { examples: [{ churned: true, at: '2026-11-01T00:00:00Z' }] }),
        response: { 201: COMPONENTS.churnOutcome.ref, ...problemResponses(400, 401, 403, 404, 413, 415, 429) },
      },
    },
    async (req, reply) => {
      const data = await run(
        RecordChurnOutcomeDocument,
        { customerId: req.params.customer_id, churned: req.body.churned, at: req.body.at },
        context(req),
      );
      return reply.code(201).send(serialize(COMPONENTS.churnOutcome.shape, data.recordChurnOutcome));
    },
  );
}
