import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { idempotencyHeaders, usageEventsInput } from '../../contract/requests.ts';
import { camelKeys, serialize } from '../../contract/serialize.ts';
import { type ContractTypeProvider, schemaOf } from '../../contract/wire.ts';
import { problemResponses } from '../../http/openapi.ts';
import { RecordUsageEventsDocument } from '../generated/operations.ts';
import type { RestDeps } from '../deps.ts';

const accepted = z.object({
  accepted: z.number().int(),
  errors: z.array(z.object({ index: z.number().int(), code: z.string(), message: z.string() })),
});

export async function eventRoutes(fastify: FastifyInstance, { run, context }: RestDeps) {
  const app = fastify.withTypeProvider<ContractTypeProvider>();
  app.post(
    '/events',
    {
      schema: {
        tags: ['Events'],
        operationId: 'recordUsageEvents',
        summary: 'Record usage events',
        description:
          'Valid events are kept and the rest listed by index in `errors`. A single event that fails is a 400 or 404. With an `Idempotency-Key` header, a retried batch answers the first answer and records nothing again.',
        headers: schemaOf(idempotencyHeaders),
        body: schemaOf(usageEventsInput, {
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
        }),
        response: { 202: schemaOf(accepted), ...problemResponses(400, 401, 403, 404, 409, 413, 415, 429) },
      },
    },
    async (req, reply) => {
      const data = await run(
        RecordUsageEventsDocument,
        { events: camelKeys(req.body.events), idempotencyKey: req.headers['idempotency-key'] },
        context(req),
      );
      return reply.code(202).send(serialize(accepted, data.recordUsageEvents));
    },
  );
}
