import type { FastifyInstance } from 'fastify';
import {
  ChurnModelDocument,
  HealthWeightsDocument,
  RecordChurnOutcomeDocument,
  ResetChurnModelDocument,
  ResetHealthWeightsDocument,
  SetHealthWeightsDocument,
  TrainChurnModelDocument,
} from '../generated/operations.ts';
import * as map from '../mappers.ts';
import type { RestDeps } from '../plugin.ts';
import * as s from '../schemas.ts';

type WeightsBody = { usage: number; engagement: number; support: number; billing: number; growth: number };

export async function scoringRoutes(app: FastifyInstance, { run, context }: RestDeps) {
  const weights = { 200: { $ref: 'HealthWeights#' } };
  app.get(
    '/health-weights',
    {
      schema: {
        tags: ['Scoring'],
        summary: 'The dimension weights of the tenant’s health scores',
        response: { ...weights, ...s.problemResponses(401, 403, 429) },
      },
    },
    async (req) => map.weights((await run(HealthWeightsDocument, {}, context(req))).healthWeights),
  );

  app.put<{ Body: WeightsBody }>(
    '/health-weights',
    {
      schema: {
        tags: ['Scoring'],
        summary: 'Set the dimension weights (each 0-1, summing to 1); every customer is recomputed',
        body: s.healthWeightsInput,
        response: { ...weights, ...s.problemResponses(400, 401, 403, 413, 415, 429) },
      },
    },
    async (req) => map.weights((await run(SetHealthWeightsDocument, { input: req.body }, context(req))).setHealthWeights),
  );

  app.delete(
    '/health-weights',
    {
      schema: {
        tags: ['Scoring'],
        summary: 'Go back to the default weights; every customer is recomputed',
        response: { ...weights, ...s.problemResponses(401, 403, 429) },
      },
    },
    async (req) => map.weights((await run(ResetHealthWeightsDocument, {}, context(req))).resetHealthWeights),
  );

  app.get(
    '/churn-model',
    {
      schema: {
        tags: ['Scoring'],
        summary: 'The churn model in use, with its coefficients (and, when trained, its held-out metrics)',
        response: { 200: { $ref: 'ChurnModel#' }, ...s.problemResponses(401, 403, 429) },
      },
    },
    async (req) => map.churnModel((await run(ChurnModelDocument, {}, context(req))).churnModel),
  );

  app.delete(
    '/churn-model',
    {
      schema: {
        tags: ['Scoring'],
        summary: 'Put the default coefficients back in use (trained models are kept); predictions refresh',
        response: { 200: { $ref: 'ChurnModel#' }, ...s.problemResponses(401, 403, 429) },
      },
    },
    async (req) => map.churnModel((await run(ResetChurnModelDocument, {}, context(req))).resetChurnModel),
  );

  app.post(
    '/churn-model/train',
    {
      schema: {
        tags: ['Scoring'],
        summary: 'Fit the churn model on the tenant’s labelled customers',
        description:
          'Uses the latest label of each customer (`POST /customers/{id}/churn-outcome`, or a cancelled subscription). Needs 20 churned and 20 retained customers (else 422 `not_enough_data`). A quarter of each class is held out to measure AUC and Brier score, beside the default model on the same customers; the new model is put in use only when its AUC is at least the default’s, and every prediction is refreshed within a minute.',
        response: { 200: { $ref: 'ChurnTraining#' }, ...s.problemResponses(401, 403, 422, 429) },
      },
    },
    async (req) => map.training((await run(TrainChurnModelDocument, {}, context(req))).trainChurnModel),
  );

  app.post<{ Params: { customer_id: string }; Body: { churned: boolean; at?: string } }>(
    '/customers/:customer_id/churn-outcome',
    {
      schema: {
        tags: ['Scoring'],
        summary: 'Label a customer as churned (or retained) for churn training',
        params: { type: 'object', properties: { customer_id: { type: 'string', format: 'uuid' } }, required: ['customer_id'] },
        body: {
          type: 'object',
          properties: { churned: { type: 'boolean' }, at: { type: 'string', format: 'date-time', description: 'Default now.' } },
          required: ['churned'],
          additionalProperties: false,
        },
        response: { 201: { $ref: 'ChurnOutcome#' }, ...s.problemResponses(400, 401, 403, 404, 413, 415, 429) },
      },
    },
    async (req, reply) => {
      const data = await run(
        RecordChurnOutcomeDocument,
        { customerId: req.params.customer_id, churned: req.body.churned, at: req.body.at },
        context(req),
      );
      return reply.code(201).send(map.churnOutcome(data.recordChurnOutcome));
    },
  );
}
