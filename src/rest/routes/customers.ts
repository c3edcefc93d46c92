import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { COMPONENTS } from '../../contract/entities.ts';
import * as requests from '../../contract/requests.ts';
import { camelKeys, serialize } from '../../contract/serialize.ts';
import { type ContractTypeProvider, pageRef, schemaOf } from '../../contract/wire.ts';
import { problemResponses } from '../../http/openapi.ts';
import {
  CreateCustomerDocument,
  CustomerChurnPredictionDocument,
  CustomerHealthDocument,
  CustomerHealthChangesDocument,
  CustomerHealthHistoryDocument,
  DeleteCustomerDocument,
  GetCustomerDocument,
  ListCustomersDocument,
  UpdateCustomerDocument,
} from '../generated/operations.ts';
import { page } from '../page.ts';
import type { RestDeps } from '../deps.ts';

const PAGE_FIELDS = { first: 'limit', after: 'cursor' };
const params = schemaOf(requests.customerParams);
const erased = z
  .strictObject({ id: z.uuid(), external_id: z.string().nullable(), deleted: z.literal(true) })
  .describe('The erased customer’s ids, to match it in your own systems.');

const tags = ['Customers'];

export async function customerRoutes(fastify: FastifyInstance, { run, context }: RestDeps) {
  const app = fastify.withTypeProvider<ContractTypeProvider>();
  app.get(
    '/customers',
    {
      schema: {
        tags,
        operationId: 'listCustomers',
        summary: 'List customers',
        description:
          'Customers with their current health score and churn risk level, filtered by `risk_level` and `health_status`, one page at a time.',
        querystring: schemaOf(requests.customerQuery),
        response: { 200: pageRef(COMPONENTS.customerListItem), ...problemResponses(400, 401, 403, 429) },
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
      return page(COMPONENTS.customerListItem.shape, data.customers);
    },
  );

  app.post(
    '/customers',
    {
      schema: {
        tags,
        operationId: 'createCustomer',
        summary: 'Create a customer',
        description:
          'Creates a customer, optionally with its identities at providers (so inbound webhooks attribute to it). `external_id` and identities are unique per tenant (409 otherwise). The answer carries `Location`.',
        body: schemaOf(requests.customerCreate, {
          examples: [
            {
              name: 'Acme Corp',
              external_id: 'acme-42',
              email: 'ops@acme.example',
              domain: 'acme.example',
              identities: [{ provider: 'stripe', external_id: 'cus_123' }],
            },
          ],
        }),
        response: { 201: COMPONENTS.customer.ref, ...problemResponses(400, 401, 403, 409, 413, 415, 429) },
      },
    },
    async (req, reply) => {
      const data = await run(CreateCustomerDocument, { input: camelKeys(req.body) }, context(req), { externalId: 'external_id' });
      reply.code(201).header('location', `/api/v1/customers/${data.createCustomer.id}`);
      return serialize(COMPONENTS.customer.shape, data.createCustomer);
    },
  );

  app.delete(
    '/customers/:customer_id',
    {
      schema: {
        tags,
        operationId: 'deleteCustomer',
        summary: 'Erase a customer',
        description:
          'Erases the customer for good, in one transaction: its identities, signals, health history, churn prediction, labels and alerts, the raw inbound events that name it (their metadata stays), and the outbound events about it; invoices and subscriptions stay as revenue facts without the link. A `customer.deleted` event announces it. Owners, admins and API keys. Cannot be undone.',
        params,
        response: {
          200: schemaOf(erased),
          ...problemResponses(400, 401, 403, 404, 429),
        },
      },
    },
    async (req) => {
      const data = await run(DeleteCustomerDocument, { id: req.params.customer_id }, context(req));
      return serialize(erased, { ...data.deleteCustomer, deleted: true });
    },
  );

  app.get(
    '/customers/:customer_id',
    {
      schema: {
        tags,
        operationId: 'getCustomer',
        summary: 'Get a customer',
        description: 'One customer with its current score, churn risk and provider identities.',
        params,
        response: { 200: COMPONENTS.customer.ref, ...problemResponses(400, 401, 403, 404, 429) },
      },
    },
    async (req) => {
      const data = await run(GetCustomerDocument, { id: req.params.customer_id }, context(req));
      return serialize(COMPONENTS.customer.shape, data.customer);
    },
  );

  app.patch(
    '/customers/:customer_id',
    {
      schema: {
        tags,
        operationId: 'updateCustomer',
        summary: 'Update a customer',
        description: 'Changes the fields sent (at least one); `null` clears a nullable field.',
        params,
        body: schemaOf(requests.customerUpdate, { examples: [{ email: 'billing@acme.example', domain: null }] }),
        response: { 200: COMPONENTS.customer.ref, ...problemResponses(400, 401, 403, 404, 409, 413, 415, 429) },
      },
    },
    async (req) => {
      const data = await run(UpdateCustomerDocument, { id: req.params.customer_id, input: camelKeys(req.body) }, context(req), {
        externalId: 'external_id',
      });
      return serialize(COMPONENTS.customer.shape, data.updateCustomer);
    },
  );

  app.get(
    '/customers/:customer_id/health',
    {
      schema: {
        tags,
        operationId: 'getCustomerHealth',
        summary: 'Get a customer’s health',
        description:
          'The full health score breakdown across the five dimensions: each dimension’s score, weight, contribution, trend and the signals it came from. Scores are null until the first computation.',
        params,
        response: { 200: COMPONENTS.health.ref, ...problemResponses(400, 401, 403, 404, 429) },
      },
    },
    async (req) => {
      const data = await run(CustomerHealthDocument, { id: req.params.customer_id }, context(req));
      return serialize(COMPONENTS.health.shape, data.customerHealth);
    },
  );

  app.get(
    '/customers/:customer_id/churn-prediction',
    {
      schema: {
        tags,
        operationId: 'getCustomerChurnPrediction',
        summary: 'Get a customer’s churn prediction',
        description: 'The latest churn probability, risk level, risk factors and recommended interventions.',
        params,
        response: { 200: COMPONENTS.churnPrediction.ref, ...problemResponses(400, 401, 403, 404, 429) },
      },
    },
    async (req) => {
      const data = await run(CustomerChurnPredictionDocument, { id: req.params.customer_id }, context(req));
      return serialize(COMPONENTS.churnPrediction.shape, data.customer.churnPrediction);
    },
  );

  app.get(
    '/customers/:customer_id/health/history',
    {
      schema: {
        tags,
        operationId: 'listCustomerHealthHistory',
        summary: 'List a customer’s health history',
        description: 'The health score’s history: one point per day, newest first.',
        params,
        querystring: schemaOf(requests.pageQuery),
        response: { 200: pageRef(COMPONENTS.healthPoint), ...problemResponses(400, 401, 403, 404, 429) },
      },
    },
    async (req) => {
      const data = await run(
        CustomerHealthHistoryDocument,
        { id: req.params.customer_id, first: req.query.limit, after: req.query.cursor },
        context(req),
        PAGE_FIELDS,
      );
      const history = data.customer.healthHistory;
      // GraphQL lists a point's dimensions beside its score; REST groups them.
      return page(COMPONENTS.healthPoint.shape, { ...history, nodes: history.nodes.map((p) => ({ ...p, dimensions: p })) });
    },
  );

  app.get(
    '/customers/:customer_id/health/changes',
    {
      schema: {
        tags,
        operationId: 'listCustomerHealthChanges',
        summary: 'List why a customer’s health changed',
        description:
          'Each computation that moved the customer’s health score, a dimension or its churn probability, newest first, with the inputs that moved it (drivers): each driver’s share of the score, of each dimension and of the churn probability, which add up exactly to the change, and the sources behind it: provider events (provider, type, the provider’s event id, when received, whether the body is still stored), usage events and changes made over the API. Example: `since=2026-11-01T00:00:00Z`.',
        params,
        querystring: schemaOf(requests.healthChangeQuery),
        response: { 200: pageRef(COMPONENTS.healthChange), ...problemResponses(400, 401, 403, 404, 429) },
      },
    },
    async (req) => {
      const data = await run(
        CustomerHealthChangesDocument,
        { id: req.params.customer_id, since: req.query.since, first: req.query.limit, after: req.query.cursor },
        context(req),
        PAGE_FIELDS,
      );
      return page(COMPONENTS.healthChange.shape, data.customer.healthChanges);
    },
  );
}
