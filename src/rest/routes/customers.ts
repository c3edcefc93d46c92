import type { FastifyInstance } from 'fastify';
import type { RestDeps } from '../plugin.ts';
import {
  CreateCustomerDocument,
  CustomerChurnPredictionDocument,
  CustomerHealthDocument,
  CustomerHealthHistoryDocument,
  DeleteCustomerDocument,
  GetCustomerDocument,
  ListCustomersDocument,
  UpdateCustomerDocument,
} from '../generated/operations.ts';
import * as map from '../mappers.ts';
import { problemResponses } from '../../http/openapi.ts';
import * as s from '../schemas.ts';
import { HEALTH_STATUS_VALUES, RISK_LEVEL_VALUES } from '../../schema/enums.ts';

const PAGE_FIELDS = { first: 'limit', after: 'cursor' };
const idParams = {
  type: 'object',
  properties: { customer_id: { type: 'string', format: 'uuid' } },
  required: ['customer_id'],
} as const;

type ListQuery = {
  limit: number;
  cursor?: string;
  risk_level?: (typeof RISK_LEVEL_VALUES)[number];
  health_status?: (typeof HEALTH_STATUS_VALUES)[number];
};
type IdParams = { customer_id: string };
type CustomerBody = {
  name?: string;
  external_id?: string | null;
  email?: string | null;
  domain?: string | null;
  identities?: { provider: 'stripe' | 'github' | 'slack' | 'discord' | 'intercom' | 'meta_ads'; external_id: string }[];
};

const tags = ['Customers'];

export async function customerRoutes(app: FastifyInstance, { run, context }: RestDeps) {
  app.get<{ Querystring: ListQuery }>(
    '/customers',
    {
      schema: {
        tags,
        operationId: 'listCustomers',
        summary: 'List customers',
        description:
          'Customers with their current health score and churn risk level, filtered by `risk_level` and `health_status`, one page at a time.',
        querystring: {
          type: 'object',
          properties: {
            ...s.pageQuery,
            risk_level: { type: 'string', enum: RISK_LEVEL_VALUES },
            health_status: { type: 'string', enum: HEALTH_STATUS_VALUES },
          },
        },
        response: { 200: s.listOf({ $ref: 'CustomerListItem#' }), ...problemResponses(400, 401, 403, 429) },
      },
    },
    async (req) => {
      const q = req.query;
      const data = await run(
        ListCustomersDocument,
        { first: q.limit, after: q.cursor, riskLevel: q.risk_level, healthStatus: q.health_status },
        context(req),
        PAGE_FIELDS,
      );
      return map.page(data.customers, map.customerItem);
    },
  );

  app.post<{ Body: CustomerBody }>(
    '/customers',
    {
      schema: {
        tags,
        operationId: 'createCustomer',
        summary: 'Create a customer',
        description:
          'Creates a customer, optionally with its identities at providers (so inbound webhooks attribute to it). `external_id` and identities are unique per tenant (409 otherwise). The answer carries `Location`.',
        body: {
          ...s.customerCreate,
          examples: [
            {
              name: 'Acme Corp',
              external_id: 'acme-42',
              email: 'ops@acme.example',
              domain: 'acme.example',
              identities: [{ provider: 'stripe', external_id: 'cus_123' }],
            },
          ],
        },
        response: { 201: { $ref: 'Customer#' }, ...problemResponses(400, 401, 403, 409, 413, 415, 429) },
      },
    },
    async (req, reply) => {
      const b = req.body;
      const data = await run(
        CreateCustomerDocument,
        {
          input: {
            name: b.name ?? '',
            externalId: b.external_id,
            email: b.email,
            domain: b.domain,
            identities: b.identities?.map((i) => ({ provider: i.provider, externalId: i.external_id })),
          },
        },
        context(req),
        { externalId: 'external_id' },
      );
      reply.code(201).header('location', `/api/v1/customers/${data.createCustomer.id}`);
      return map.customerDetail(data.createCustomer);
    },
  );

  app.delete<{ Params: IdParams }>(
    '/customers/:customer_id',
    {
      schema: {
        tags,
        operationId: 'deleteCustomer',
        summary: 'Erase a customer',
        description:
          'Erases the customer for good, in one transaction: its identities, signals, health history, churn prediction, labels and alerts, the raw inbound events that name it (their metadata stays), and the outbound events about it; invoices and subscriptions stay as revenue facts without the link. A `customer.deleted` event announces it. Owners, admins and API keys. Cannot be undone.',
        params: idParams,
        response: {
          200: {
            type: 'object',
            description: 'The erased customer’s ids, to match it in your own systems.',
            properties: {
              id: { type: 'string', format: 'uuid' },
              external_id: { type: ['string', 'null'] },
              deleted: { type: 'boolean', const: true },
            },
            required: ['id', 'external_id', 'deleted'],
            additionalProperties: false,
          },
          ...problemResponses(400, 401, 403, 404, 429),
        },
      },
    },
    async (req) => {
      const data = await run(DeleteCustomerDocument, { id: req.params.customer_id }, context(req));
      return { id: data.deleteCustomer.id, external_id: data.deleteCustomer.externalId ?? null, deleted: true as const };
    },
  );

  app.get<{ Params: IdParams }>(
    '/customers/:customer_id',
    {
      schema: {
        tags,
        operationId: 'getCustomer',
        summary: 'Get a customer',
        description: 'One customer with its current score, churn risk and provider identities.',
        params: idParams,
        response: { 200: { $ref: 'Customer#' }, ...problemResponses(400, 401, 403, 404, 429) },
      },
    },
    async (req) => {
      const data = await run(GetCustomerDocument, { id: req.params.customer_id }, context(req));
      return map.customerDetail(data.customer);
    },
  );

  app.patch<{ Params: IdParams; Body: CustomerBody }>(
    '/customers/:customer_id',
    {
      schema: {
        tags,
        operationId: 'updateCustomer',
        summary: 'Update a customer',
        description: 'Changes the fields sent (at least one); `null` clears a nullable field.',
        params: idParams,
        body: { ...s.customerUpdate, examples: [{ email: 'billing@acme.example', domain: null }] },
        response: { 200: { $ref: 'Customer#' }, ...problemResponses(400, 401, 403, 404, 409, 413, 415, 429) },
      },
    },
    async (req) => {
      const b = req.body;
      const input = Object.fromEntries(
        Object.entries({ name: b.name, externalId: b.external_id, email: b.email, domain: b.domain }).filter(([, v]) => v !== undefined),
      );
      const data = await run(UpdateCustomerDocument, { id: req.params.customer_id, input }, context(req), { externalId: 'external_id' });
      return map.customerDetail(data.updateCustomer);
    },
  );

  app.get<{ Params: IdParams }>(
    '/customers/:customer_id/health',
    {
      schema: {
        tags,
        operationId: 'getCustomerHealth',
        summary: 'Get a customer’s health',
        description:
          'The full health score breakdown across the five dimensions: each dimension’s score, weight, contribution, trend and the signals it came from. Scores are null until the first computation.',
        params: idParams,
        response: { 200: { $ref: 'CustomerHealth#' }, ...problemResponses(400, 401, 403, 404, 429) },
      },
    },
    async (req) => {
      const data = await run(CustomerHealthDocument, { id: req.params.customer_id }, context(req));
      return map.health(data.customer.health);
    },
  );

  app.get<{ Params: IdParams }>(
    '/customers/:customer_id/churn-prediction',
    {
      schema: {
        tags,
        operationId: 'getCustomerChurnPrediction',
        summary: 'Get a customer’s churn prediction',
        description: 'The latest churn probability, risk level, risk factors and recommended interventions.',
        params: idParams,
        response: { 200: { $ref: 'ChurnPrediction#' }, ...problemResponses(400, 401, 403, 404, 429) },
      },
    },
    async (req) => {
      const data = await run(CustomerChurnPredictionDocument, { id: req.params.customer_id }, context(req));
      return map.churn(data.customer.churnPrediction);
    },
  );

  app.get<{ Params: IdParams; Querystring: { limit: number; cursor?: string } }>(
    '/customers/:customer_id/health/history',
    {
      schema: {
        tags,
        operationId: 'listCustomerHealthHistory',
        summary: 'List a customer’s health history',
        description: 'The health score’s history: one point per day, newest first.',
        params: idParams,
        querystring: { type: 'object', properties: s.pageQuery },
        response: { 200: s.listOf({ $ref: 'HealthHistoryPoint#' }), ...problemResponses(400, 401, 403, 404, 429) },
      },
    },
    async (req) => {
      const data = await run(
        CustomerHealthHistoryDocument,
        { id: req.params.customer_id, first: req.query.limit, after: req.query.cursor },
        context(req),
        PAGE_FIELDS,
      );
      return map.page(data.customer.healthHistory, map.historyPoint);
    },
  );
}
