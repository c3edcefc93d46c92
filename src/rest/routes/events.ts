import type { FastifyInstance } from 'fastify';
import { MAX_BATCH } from '../../services/usage-events.ts';
import { RecordUsageEventsDocument } from '../generated/operations.ts';
import type { RestDeps } from '../plugin.ts';
import { problemResponses } from '../../http/openapi.ts';

type Event = { customer_id?: string; external_id?: string; event?: string; timestamp?: string; properties?: unknown; user_id?: string };

export async function eventRoutes(app: FastifyInstance, { run, context }: RestDeps) {
  app.post<{ Body: { events: Event[] }; Headers: { 'idempotency-key'?: string } }>(
    '/events',
    {
      schema: {
        tags: ['Events'],
        operationId: 'recordUsageEvents',
        summary: 'Record usage events',
        description:
          'Valid events are kept and the rest listed by index in `errors`. A single event that fails is a 400 or 404. With an `Idempotency-Key` header, a retried batch answers the first answer and records nothing again.',
        headers: { type: 'object', properties: { 'idempotency-key': { type: 'string', minLength: 1, maxLength: 255 } } },
        body: {
          type: 'object',
          properties: {
            events: {
              type: 'array',
              minItems: 1,
              maxItems: MAX_BATCH,
              // Item fields are checked one by one, so one bad event does not refuse the batch.
              items: {
                type: 'object',
                properties: {
                  customer_id: { type: 'string' },
                  external_id: { type: 'string' },
                  event: { type: 'string' },
                  timestamp: { type: 'string', description: 'ISO 8601, default now' },
                  properties: { type: 'object', additionalProperties: true },
                  user_id: { type: 'string' },
                },
              },
            },
          },
          required: ['events'],
          additionalProperties: false,
          examples: [
            {
              events: [
                {
                  external_id: 'acme-42',
                  event: 'report.exported',
                  timestamp: '2026-11-23T10:00:00Z',
                  user_id: 'u_7',
                  properties: { format: 'csv' },
                },
              ],
            },
          ],
        },
        response: {
          202: {
            type: 'object',
            properties: {
              accepted: { type: 'integer' },
              errors: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: { index: { type: 'integer' }, code: { type: 'string' }, message: { type: 'string' } },
                  required: ['index', 'code', 'message'],
                },
              },
            },
            required: ['accepted', 'errors'],
          },
          ...problemResponses(400, 401, 403, 404, 409, 413, 415, 429),
        },
      },
    },
    async (req, reply) => {
      const events = req.body.events.map((e) => ({
        customerId: e.customer_id,
        externalId: e.external_id,
        event: e.event,
        timestamp: e.timestamp,
        properties: e.properties,
        userId: e.user_id,
      }));
      const data = await run(
        RecordUsageEventsDocument,
        { events: events as never, idempotencyKey: req.headers['idempotency-key'] },
        context(req),
      );
      return reply.code(202).send(data.recordUsageEvents);
    },
  );
}
