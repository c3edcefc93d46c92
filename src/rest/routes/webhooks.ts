import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { COMPONENTS } from '../../contract/entities.ts';
import * as requests from '../../contract/requests.ts';
import { camelKeys, serialize } from '../../contract/serialize.ts';
import { type ContractTypeProvider, jsonObject, pageOf, pageRef, schemaOf, type Typed } from '../../contract/wire.ts';
import { problemResponses } from '../../http/openapi.ts';
import { EVENT_NAMES } from '../../outbox/events/registry.ts';
import {
  CreateWebhookEndpointDocument,
  DeleteWebhookEndpointDocument,
  GetWebhookEndpointDocument,
  ListWebhookDeliveriesDocument,
  ListWebhookEndpointsDocument,
  ListWebhookEventsDocument,
  ReplayWebhookDeliveriesDocument,
  ResendWebhookDeliveryDocument,
  RotateWebhookEndpointSecretDocument,
  TestWebhookEndpointDocument,
  UpdateWebhookEndpointDocument,
  WebhookEndpointStatsDocument,
  WebhookEventTypesDocument,
} from '../generated/operations.ts';
import { page } from '../page.ts';
import type { RestDeps } from '../deps.ts';

const tags = ['Webhook endpoints'];
const params = schemaOf(requests.idParams);
const eventType = z.object({
  name: z.string(),
  description: z.string(),
  schema: jsonObject.describe('The payload’s JSON Schema (2020-12).'),
  example: jsonObject.describe('An example payload.'),
});
const secret = z.object({ secret: z.string().describe('Shown this once.') });
const withSecret = { allOf: [COMPONENTS.webhookEndpoint.ref, schemaOf(secret)] } as ReturnType<
  typeof schemaOf<ReturnType<typeof COMPONENTS.webhookEndpoint.shape.extend<typeof secret.shape>>>
>;
const testResult = z.object({
  delivery_id: z.string(),
  event: z.string(),
  success: z.boolean(),
  status_code: z.number().int().nullable(),
  error: z.string().nullable(),
  duration_ms: z.number().int().nullable(),
});
/** Where the subject's numbering stands, beside the page of its events. */
const numbering = z.object({
  first_available_sequence: z
    .number()
    .int()
    .nullable()
    .describe(
      'The lowest number among the subject’s events still kept (older ones are removed by retention); null when none is. When it is above `after_sequence` + 1, the events between were removed and cannot be read again.',
    ),
  last_sequence: z.number().int().nullable().describe('The last number given under the subject; null when none was.'),
});
const eventPage = (() => {
  const page = pageRef(COMPONENTS.webhookEvent);
  const extra = schemaOf(numbering);
  return {
    type: 'object',
    properties: { ...page.properties, ...extra.properties },
    required: [...page.required, ...extra.required],
  } as Typed<z.output<ReturnType<typeof pageOf<typeof COMPONENTS.webhookEvent.shape>>> & z.output<typeof numbering>>;
})();

/** The endpoint and the secret that only this answer shows. */
const endpointWithSecret = (r: { endpoint: Parameters<typeof serialize<typeof COMPONENTS.webhookEndpoint.shape>>[1]; secret: string }) => ({
  ...serialize(COMPONENTS.webhookEndpoint.shape, r.endpoint),
  secret: r.secret,
});

export async function webhookRoutes(fastify: FastifyInstance, { run, context }: RestDeps) {
  const app = fastify.withTypeProvider<ContractTypeProvider>();
  app.get(
    '/webhook-event-types',
    {
      schema: {
        tags,
        operationId: 'listWebhookEventTypes',
        summary: 'List webhook event types',
        description:
          'The events an endpoint can subscribe to, with what each means, the JSON Schema of its payload (generate receiver types from it) and an example. The same schemas describe the deliveries in the `webhooks` section of this document.',
        response: { 200: schemaOf(pageOf(eventType)) },
      },
    },
    async (req) => {
      const data = await run(WebhookEventTypesDocument, {}, context(req));
      return { data: data.webhookEventTypes.map((t) => serialize(eventType, t)), has_more: false, next_cursor: null };
    },
  );

  app.get(
    '/webhook-endpoints',
    {
      schema: {
        tags,
        operationId: 'listWebhookEndpoints',
        summary: 'List webhook endpoints',
        description: 'Every webhook endpoint of the tenant (one page).',
        response: { 200: pageRef(COMPONENTS.webhookEndpoint), ...problemResponses(401, 403, 429) },
      },
    },
    async (req) => {
      const data = await run(ListWebhookEndpointsDocument, {}, context(req));
      return { data: data.webhookEndpoints.map((e) => serialize(COMPONENTS.webhookEndpoint.shape, e)), has_more: false, next_cursor: null };
    },
  );

  app.post(
    '/webhook-endpoints',
    {
      schema: {
        tags,
        operationId: 'createWebhookEndpoint',
        summary: 'Create a webhook endpoint',
        description:
          'Creates an endpoint subscribed to `events`. The answer alone carries its signing secret: store it to verify deliveries.',
        body: schemaOf(requests.endpointCreate(EVENT_NAMES), {
          examples: [
            { url: 'https://hooks.acme.example/chs', events: ['alert.created', 'customer.health_changed'], description: 'Ops channel' },
          ],
        }),
        response: { 201: withSecret, ...problemResponses(400, 401, 403, 409, 413, 415, 429) },
      },
    },
    async (req, reply) => {
      const data = await run(CreateWebhookEndpointDocument, { input: camelKeys(req.body) }, context(req));
      reply.code(201).header('location', `/api/v1/webhook-endpoints/${data.createWebhookEndpoint.endpoint.id}`);
      return endpointWithSecret(data.createWebhookEndpoint);
    },
  );

  app.get(
    '/webhook-endpoints/:id',
    {
      schema: {
        tags,
        operationId: 'getWebhookEndpoint',
        summary: 'Get a webhook endpoint',
        description: 'One webhook endpoint (never its secret).',
        params,
        response: { 200: COMPONENTS.webhookEndpoint.ref, ...problemResponses(400, 401, 403, 404, 429) },
      },
    },
    async (req) => {
      const data = await run(GetWebhookEndpointDocument, { id: req.params.id }, context(req));
      return serialize(COMPONENTS.webhookEndpoint.shape, data.webhookEndpoint);
    },
  );

  app.patch(
    '/webhook-endpoints/:id',
    {
      schema: {
        tags,
        operationId: 'updateWebhookEndpoint',
        summary: 'Update a webhook endpoint',
        description: 'Changes the fields sent; `enabled: false` disables the endpoint and `enabled: true` re-enables it.',
        params,
        body: schemaOf(requests.endpointUpdate(EVENT_NAMES), { examples: [{ enabled: false }] }),
        response: { 200: COMPONENTS.webhookEndpoint.ref, ...problemResponses(400, 401, 403, 404, 413, 415, 429) },
      },
    },
    async (req) => {
      const data = await run(UpdateWebhookEndpointDocument, { id: req.params.id, input: camelKeys(req.body) }, context(req));
      return serialize(COMPONENTS.webhookEndpoint.shape, data.updateWebhookEndpoint);
    },
  );

  app.delete(
    '/webhook-endpoints/:id',
    {
      schema: {
        tags,
        operationId: 'deleteWebhookEndpoint',
        summary: 'Delete a webhook endpoint',
        description: 'Deletes the endpoint; pending deliveries to it are dropped.',
        params,
        response: { 204: { type: 'null' }, ...problemResponses(400, 401, 403, 404, 429) },
      },
    },
    async (req, reply) => {
      await run(DeleteWebhookEndpointDocument, { id: req.params.id }, context(req));
      return reply.code(204).send();
    },
  );

  app.post(
    '/webhook-endpoints/:id/rotate-secret',
    {
      schema: {
        tags,
        operationId: 'rotateWebhookEndpointSecret',
        summary: 'Rotate a webhook endpoint’s secret',
        description: 'Issues a new signing secret, shown in this answer only; the old one keeps signing beside it for 24 h.',
        params,
        response: { 200: withSecret, ...problemResponses(400, 401, 403, 404, 429) },
      },
    },
    async (req) => {
      const data = await run(RotateWebhookEndpointSecretDocument, { id: req.params.id }, context(req));
      return endpointWithSecret(data.rotateWebhookEndpointSecret);
    },
  );

  app.post(
    '/webhook-endpoints/:id/test',
    {
      schema: {
        tags,
        operationId: 'testWebhookEndpoint',
        summary: 'Send a test delivery',
        description:
          'Sends a sample of a subscribed event (default: the first), signed in the endpoint’s scheme, now and records the attempt, and the Test in the audit log. The body is optional. A Test is sent now or never: when the endpoint has no free slot the answer is `success: false` with an `error` saying it was not sent; `409 conflict` while the workspace’s deletion is scheduled, or when the endpoint’s filter for the event drops the sample.',
        params,
        body: schemaOf(requests.endpointTest, { examples: [{ event: 'alert.created' }] }),
        response: { 200: schemaOf(testResult), ...problemResponses(400, 401, 403, 404, 409, 429) },
      },
    },
    async (req) => {
      const r = (await run(TestWebhookEndpointDocument, { id: req.params.id, event: req.body?.event }, context(req))).testWebhookEndpoint;
      return serialize(testResult, r);
    },
  );

  app.get(
    '/webhook-endpoints/:id/deliveries',
    {
      schema: {
        tags,
        operationId: 'listWebhookDeliveries',
        summary: 'List an endpoint’s deliveries',
        description: 'The endpoint’s deliveries, newest first, with each attempt.',
        params,
        querystring: schemaOf(requests.pageQuery),
        response: { 200: pageRef(COMPONENTS.webhookDelivery), ...problemResponses(400, 401, 403, 404, 429) },
      },
    },
    async (req) => {
      const data = await run(
        ListWebhookDeliveriesDocument,
        { endpointId: req.params.id, first: req.query.limit, after: req.query.cursor },
        context(req),
        { first: 'limit', after: 'cursor' },
      );
      return page(COMPONENTS.webhookDelivery.shape, data.webhookDeliveries);
    },
  );

  app.get(
    '/webhook-endpoints/:id/stats',
    {
      schema: {
        tags,
        operationId: 'getWebhookEndpointStats',
        summary: 'Get an endpoint’s delivery figures',
        description:
          'How the endpoint’s deliveries have gone over the last hour or day: attempts, success rate and latency percentiles (p50, p95, p99), point by point too, and the deliveries pending now with the age of the oldest. Tests are not counted. The endpoint’s circuit breaker is on the endpoint itself (`circuit`).',
        params,
        querystring: schemaOf(requests.endpointStatsQuery),
        response: { 200: COMPONENTS.webhookEndpointStats.ref, ...problemResponses(400, 401, 403, 404, 429) },
      },
    },
    async (req) => {
      const data = await run(WebhookEndpointStatsDocument, { endpointId: req.params.id, window: req.query.window }, context(req));
      return serialize(COMPONENTS.webhookEndpointStats.shape, data.webhookEndpointStats);
    },
  );

  app.get(
    '/webhook-events',
    {
      schema: {
        tags,
        operationId: 'listWebhookEvents',
        summary: 'Catch up on a subject’s events',
        description:
          'The outbound events of one sequence subject (as `X-Webhook-Sequence-Subject` names it) numbered after `after_sequence`, in number order, whichever endpoints they went to: what a receiver that saw a gap, or was down, missed. Each item is the body its deliveries send, with its number. Events removed by retention are not returned: the read starts at the oldest kept one, and `first_available_sequence` tells which that is, so a receiver can tell whether it caught up fully. Example: `subject=customer:0b8e3f1a-5c2d-4e6f-8a9b-1c2d3e4f5a6b&after_sequence=41`.',
        querystring: schemaOf(requests.webhookEventQuery),
        response: { 200: eventPage, ...problemResponses(400, 401, 403, 429) },
      },
    },
    async (req) => {
      const { limit, cursor, subject, after_sequence } = req.query;
      const data = await run(
        ListWebhookEventsDocument,
        { subject, afterSequence: after_sequence, first: limit, after: cursor },
        context(req),
        { first: 'limit', after: 'cursor', afterSequence: 'after_sequence' },
      );
      const { firstAvailableSequence, lastSequence, ...connection } = data.webhookEvents;
      return {
        ...page(COMPONENTS.webhookEvent.shape, connection),
        first_available_sequence: firstAvailableSequence,
        last_sequence: lastSequence,
      };
    },
  );

  app.post(
    '/webhook-endpoints/:id/replay',
    {
      schema: {
        tags,
        operationId: 'replayWebhookDeliveries',
        summary: 'Replay failed deliveries',
        description:
          'Queues the endpoint’s failed deliveries created since a time for another attempt, to its current URL, those its filters now drop excepted; answers how many. Recorded in the audit log with the URL’s host and the count.',
        params,
        body: schemaOf(requests.replayInput, { examples: [{ since: '2026-11-20T00:00:00Z' }] }),
        response: {
          202: schemaOf(z.object({ replayed: z.number().int() })),
          ...problemResponses(400, 401, 403, 404, 429),
        },
      },
    },
    async (req, reply) => {
      const data = await run(ReplayWebhookDeliveriesDocument, { endpointId: req.params.id, since: req.body.since }, context(req));
      return reply.code(202).send({ replayed: data.replayWebhookDeliveries });
    },
  );

  app.post(
    '/webhook-deliveries/:id/resend',
    {
      schema: {
        tags,
        operationId: 'resendWebhookDelivery',
        summary: 'Resend a delivery',
        description:
          'Queues one more attempt at a delivery now, to its endpoint’s current URL; 409 when the endpoint’s filter for its event type now drops it. Recorded in the audit log with the URL’s host.',
        params,
        response: {
          202: schemaOf(z.object({ resent: z.boolean() })),
          ...problemResponses(400, 401, 403, 404, 409, 429),
        },
      },
    },
    async (req, reply) => {
      await run(ResendWebhookDeliveryDocument, { id: req.params.id }, context(req));
      return reply.code(202).send({ resent: true });
    },
  );
}
