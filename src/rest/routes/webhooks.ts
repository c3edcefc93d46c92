import type { FastifyInstance } from 'fastify';
import { EVENT_NAMES } from '../../outbox/events.ts';
import {
  CreateWebhookEndpointDocument,
  DeleteWebhookEndpointDocument,
  GetWebhookEndpointDocument,
  ListWebhookDeliveriesDocument,
  ListWebhookEndpointsDocument,
  ReplayWebhookDeliveriesDocument,
  ResendWebhookDeliveryDocument,
  RotateWebhookEndpointSecretDocument,
  TestWebhookEndpointDocument,
  UpdateWebhookEndpointDocument,
  WebhookEventTypesDocument,
} from '../generated/operations.ts';
import * as map from '../mappers.ts';
import type { RestDeps } from '../plugin.ts';
import { problemResponses } from '../../http/openapi.ts';
import * as s from '../schemas.ts';

const tags = ['Webhook endpoints'];
const idParams = { type: 'object', properties: { id: { type: 'string', format: 'uuid' } }, required: ['id'] } as const;
const endpointBody = (required: string[]) =>
  ({
    type: 'object',
    properties: {
      url: { type: 'string', maxLength: 2048, description: 'An https:// URL.' },
      events: { type: 'array', maxItems: 50, items: { type: 'string' }, description: `Any of: ${EVENT_NAMES.join(', ')}.` },
      description: { type: 'string', maxLength: 500, nullable: true },
      ...(required.length ? {} : { enabled: { type: 'boolean' } }),
    },
    // OpenAPI 3.0 refuses an empty `required`.
    ...(required.length ? { required } : {}),
    minProperties: 1,
    additionalProperties: false,
  }) as const;
const withSecret = {
  allOf: [
    { $ref: 'WebhookEndpoint#' },
    { type: 'object', properties: { secret: { type: 'string', description: 'Shown this once.' } }, required: ['secret'] },
  ],
};
type Body = { url?: string; events?: string[]; description?: string | null; enabled?: boolean };

export async function webhookRoutes(app: FastifyInstance, { run, context }: RestDeps) {
  app.get(
    '/webhook-event-types',
    {
      schema: {
        tags,
        operationId: 'listWebhookEventTypes',
        summary: 'List webhook event types',
        description:
          'The events an endpoint can subscribe to, with what each means, the JSON Schema of its payload (generate receiver types from it) and an example. The same schemas describe the deliveries in the `webhooks` section of this document.',
        response: {
          200: s.listOf({
            type: 'object',
            properties: {
              name: { type: 'string' },
              description: { type: 'string' },
              schema: { type: 'object', additionalProperties: true, description: 'The payload’s JSON Schema (2020-12).' },
              example: { type: 'object', additionalProperties: true, description: 'An example payload.' },
            },
            required: ['name', 'description', 'schema', 'example'],
          }),
        },
      },
    },
    async (req) => {
      const data = await run(WebhookEventTypesDocument, {}, context(req));
      return { data: data.webhookEventTypes, has_more: false, next_cursor: null };
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
        response: { 200: s.listOf({ $ref: 'WebhookEndpoint#' }), ...problemResponses(401, 403, 429) },
      },
    },
    async (req) => {
      const data = await run(ListWebhookEndpointsDocument, {}, context(req));
      return { data: data.webhookEndpoints.map(map.endpoint), has_more: false, next_cursor: null };
    },
  );

  app.post<{ Body: Body }>(
    '/webhook-endpoints',
    {
      schema: {
        tags,
        operationId: 'createWebhookEndpoint',
        summary: 'Create a webhook endpoint',
        description:
          'Creates an endpoint subscribed to `events`. The answer alone carries its signing secret: store it to verify deliveries.',
        body: {
          ...endpointBody(['url', 'events']),
          examples: [
            { url: 'https://hooks.acme.example/chs', events: ['alert.created', 'customer.health_changed'], description: 'Ops channel' },
          ],
        },
        response: { 201: withSecret, ...problemResponses(400, 401, 403, 409, 413, 415, 429) },
      },
    },
    async (req, reply) => {
      const data = await run(CreateWebhookEndpointDocument, { input: req.body }, context(req));
      reply.code(201).header('location', `/api/v1/webhook-endpoints/${data.createWebhookEndpoint.endpoint.id}`);
      return { ...map.endpoint(data.createWebhookEndpoint.endpoint), secret: data.createWebhookEndpoint.secret };
    },
  );

  app.get<{ Params: { id: string } }>(
    '/webhook-endpoints/:id',
    {
      schema: {
        tags,
        operationId: 'getWebhookEndpoint',
        summary: 'Get a webhook endpoint',
        description: 'One webhook endpoint (never its secret).',
        params: idParams,
        response: { 200: { $ref: 'WebhookEndpoint#' }, ...problemResponses(400, 401, 403, 404, 429) },
      },
    },
    async (req) => {
      const data = await run(GetWebhookEndpointDocument, { id: req.params.id }, context(req));
      return map.endpoint(data.webhookEndpoint);
    },
  );

  app.patch<{ Params: { id: string }; Body: Body }>(
    '/webhook-endpoints/:id',
    {
      schema: {
        tags,
        operationId: 'updateWebhookEndpoint',
        summary: 'Update a webhook endpoint',
        description: 'Changes the fields sent; `enabled: false` disables the endpoint and `enabled: true` re-enables it.',
        params: idParams,
        body: { ...endpointBody([]), examples: [{ enabled: false }] },
        response: { 200: { $ref: 'WebhookEndpoint#' }, ...problemResponses(400, 401, 403, 404, 413, 415, 429) },
      },
    },
    async (req) => {
      const data = await run(UpdateWebhookEndpointDocument, { id: req.params.id, input: req.body }, context(req));
      return map.endpoint(data.updateWebhookEndpoint);
    },
  );

  app.delete<{ Params: { id: string } }>(
    '/webhook-endpoints/:id',
    {
      schema: {
        tags,
        operationId: 'deleteWebhookEndpoint',
        summary: 'Delete a webhook endpoint',
        description: 'Deletes the endpoint; pending deliveries to it are dropped.',
        params: idParams,
        response: { 204: { type: 'null' }, ...problemResponses(400, 401, 403, 404, 429) },
      },
    },
    async (req, reply) => {
      await run(DeleteWebhookEndpointDocument, { id: req.params.id }, context(req));
      return reply.code(204).send();
    },
  );

  app.post<{ Params: { id: string } }>(
    '/webhook-endpoints/:id/rotate-secret',
    {
      schema: {
        tags,
        operationId: 'rotateWebhookEndpointSecret',
        summary: 'Rotate a webhook endpoint’s secret',
        description: 'Issues a new signing secret, shown in this answer only; the old one keeps signing beside it for 24 h.',
        params: idParams,
        response: { 200: withSecret, ...problemResponses(400, 401, 403, 404, 429) },
      },
    },
    async (req) => {
      const data = await run(RotateWebhookEndpointSecretDocument, { id: req.params.id }, context(req));
      return { ...map.endpoint(data.rotateWebhookEndpointSecret.endpoint), secret: data.rotateWebhookEndpointSecret.secret };
    },
  );

  app.post<{ Params: { id: string }; Body: { event?: string } | undefined }>(
    '/webhook-endpoints/:id/test',
    {
      schema: {
        tags,
        operationId: 'testWebhookEndpoint',
        summary: 'Send a test delivery',
        description: 'Sends a signed sample of a subscribed event (default: the first) now and records the attempt. The body is optional.',
        params: idParams,
        body: {
          type: 'object',
          properties: { event: { type: 'string' } },
          additionalProperties: false,
          nullable: true,
          examples: [{ event: 'alert.created' }],
        },
        response: {
          200: {
            type: 'object',
            properties: {
              delivery_id: { type: 'string' },
              event: { type: 'string' },
              success: { type: 'boolean' },
              status_code: { type: 'integer', nullable: true },
              error: { type: 'string', nullable: true },
              duration_ms: { type: 'integer', nullable: true },
            },
            required: ['delivery_id', 'event', 'success', 'status_code', 'error', 'duration_ms'],
          },
          ...problemResponses(400, 401, 403, 404, 429),
        },
      },
    },
    async (req) => {
      const r = (await run(TestWebhookEndpointDocument, { id: req.params.id, event: req.body?.event }, context(req))).testWebhookEndpoint;
      return {
        delivery_id: r.deliveryId,
        event: r.event,
        success: r.success,
        status_code: r.statusCode,
        error: r.error,
        duration_ms: r.durationMs,
      };
    },
  );

  app.get<{ Params: { id: string }; Querystring: { limit: number; cursor?: string } }>(
    '/webhook-endpoints/:id/deliveries',
    {
      schema: {
        tags,
        operationId: 'listWebhookDeliveries',
        summary: 'List an endpoint’s deliveries',
        description: 'The endpoint’s deliveries, newest first, with each attempt.',
        params: idParams,
        querystring: { type: 'object', properties: s.pageQuery },
        response: { 200: s.listOf({ $ref: 'WebhookDelivery#' }), ...problemResponses(400, 401, 403, 404, 429) },
      },
    },
    async (req) => {
      const data = await run(
        ListWebhookDeliveriesDocument,
        { endpointId: req.params.id, first: req.query.limit, after: req.query.cursor },
        context(req),
        { first: 'limit', after: 'cursor' },
      );
      return map.page(data.webhookDeliveries, map.delivery);
    },
  );

  app.post<{ Params: { id: string }; Body: { since: string } }>(
    '/webhook-endpoints/:id/replay',
    {
      schema: {
        tags,
        operationId: 'replayWebhookDeliveries',
        summary: 'Replay failed deliveries',
        description: 'Queues the endpoint’s failed deliveries created since a time for another attempt; answers how many.',
        params: idParams,
        body: {
          type: 'object',
          properties: { since: { type: 'string', format: 'date-time' } },
          required: ['since'],
          additionalProperties: false,
          examples: [{ since: '2026-11-20T00:00:00Z' }],
        },
        response: {
          202: { type: 'object', properties: { replayed: { type: 'integer' } }, required: ['replayed'] },
          ...problemResponses(400, 401, 403, 404, 429),
        },
      },
    },
    async (req, reply) => {
      const data = await run(ReplayWebhookDeliveriesDocument, { endpointId: req.params.id, since: req.body.since }, context(req));
      return reply.code(202).send({ replayed: data.replayWebhookDeliveries });
    },
  );

  app.post<{ Params: { id: string } }>(
    '/webhook-deliveries/:id/resend',
    {
      schema: {
        tags,
        operationId: 'resendWebhookDelivery',
        summary: 'Resend a delivery',
        description: 'Queues one more attempt at a delivery now.',
        params: idParams,
        response: {
          202: { type: 'object', properties: { resent: { type: 'boolean' } }, required: ['resent'] },
          ...problemResponses(400, 401, 403, 404, 429),
        },
      },
    },
    async (req, reply) => {
      await run(ResendWebhookDeliveryDocument, { id: req.params.id }, context(req));
      return reply.code(202).send({ resent: true });
    },
  );
}
