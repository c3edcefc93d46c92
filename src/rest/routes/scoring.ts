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
import { problemResponses } from '../../http/openapi.ts';
import * as s from '../schemas.ts';

type WeightsBody = { usage: number; engagement: number; support: number; billing: number; growth: number };

export async function scoringRoutes(app: FastifyInstance, { run, context }: RestDeps) {
  const weights = { 200: { $ref: 'HealthWeights#' } };
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
    async (req) => map.weights((await run(HealthWeightsDocument, {}, context(req))).healthWeights),
  );

  app.put<{ Body: WeightsBody }>(
    '/health-weights',
    {
      schema: {
        tags: ['Scoring'],
        operationId: 'setHealthWeights',
        summary: 'Set the health weights',
        description: 'Sets the dimension weights (each 0-1, summing to 1); every customer is recomputed.',
        body: { ...s.healthWeightsInput, examples: [{ usage: 0.3, engagement: 0.25, support: 0.15, billing: 0.2, growth: 0.1 }] },
        response: { ...weights, ...problemResponses(400, 401, 403, 413, 415, 429) },
      },
    },
    async (req) => map.weights((await run(SetHealthWeightsDocument, { input: req.body }, context(req))).setHealthWeights),
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
    async (req) => map.weights((await run(ResetHealthWeightsDocument, {}, context(req))).resetHealthWeights),
  );

  app.get(
    '/churn-model',
    {
      schema: {
        tags: ['Scoring'],
        operationId: 'getChurnModel',
        summary: 'Get the churn model',
        description: 'The churn model in use, with its coefficients and, when trained, its held-out metrics.',
        response: { 200: { $ref: 'ChurnModel#' }, ...problemResponses(401, 403, 429) },
      },
    },
    async (req) => map.churnModel((await run(ChurnModelDocument, {}, context(req))).churnModel),
  );

  app.delete(
    '/churn-model',
    {
      schema: {
        tags: ['Scoring'],
        operationId: 'resetChurnModel',
        summary: 'Reset the churn model',
        description: 'Puts the default coefficients back in use (trained models are kept); predictions refresh.',
        response: { 200: { $ref: 'ChurnModel#' }, ...problemResponses(401, 403, 429) },
      },
    },
    async (req) => map.churnModel((await run(ResetChurnModelDocument, {}, context(req))).resetChurnModel),
  );

  app.post(
    '/churn-model/train',
    {
      schema: {
        tags: ['Scoring'],
        operationId: 'trainChurnModel',
        summary: 'Train the churn model',
        description:
          'Uses the latest label of each customer (`POST /customers/{id}/churn-outcome`, or a cancelled subscription). Needs 20 churned and 20 retained customers (else 422 `not_enough_data`). A quarter of each class is held out to measure AUC and Brier score, beside the default model on the same customers; the new model is put in use only when its AUC is at least the default’s, and every prediction is refreshed within a minute.',
        response: { 200: { $ref: 'ChurnTraining#' }, ...problemResponses(401, 403, 422, 429) },
      },
    },
    async (req) => map.training((await run(TrainChurnModelDocument, {}, context(req))).trainChurnModel),
  );

  app.post<{ Params: { customer_id: string }; Body: { churned: boolean; at?: string } }>(
    '/customers/:customer_id/churn-outcome',
    {
      schema: {
        tags: ['Scoring'],
        operationId: 'recordChurnOutcome',
        summary: 'Record a churn outcome',
        description: 'Labels a customer as churned (or retained) at a time, for churn training.',
        params: { type: 'object', properties: { customer_id: { type: 'string', format: 'uuid' } }, required: ['customer_id'] },
        body: {
          type: 'object',
          properties: { churned: { type: 'boolean' }, at: { type: 'string', format: 'date-time', description: 'Default now.' } },
          required: ['churned'],
          additionalProperties: false,
          examples: [{ churned: true, at: '2026-11-01T00:00:00Z' }],
        },
        response: { 201: { $ref: 'ChurnOutcome#' }, ...problemResponses(400, 401, 403, 404, 413, 415, 429) },
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
