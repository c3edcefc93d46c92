import type { FastifyInstance } from 'fastify';
import { COMPONENTS } from '../../contract/entities.ts';
import * as requests from '../../contract/requests.ts';
import { camelKeys } from '../../contract/serialize.ts';
import { type ContractTypeProvider, pageRef, schemaOf } from '../../contract/wire.ts';
import { problemResponses } from '../../http/openapi.ts';
import { ListAuditEventsDocument } from '../generated/operations.ts';
import { page } from '../page.ts';
import type { RestDeps } from '../deps.ts';

export async function auditRoutes(fastify: FastifyInstance, { run, context }: RestDeps) {
  const app = fastify.withTypeProvider<ContractTypeProvider>();
  app.get(
    '/audit-events',
    {
      schema: {
        tags: ['Audit log'],
        operationId: 'listAuditEvents',
        summary: 'List audit events',
        description:
          'The workspace’s audit log, newest first: sign-ins, API keys, users, webhook endpoints and their secrets, inbound secrets, weights, churn models and erasures, each with its actor, address and changes. Owners, admins and API keys. Example: `action=api_key.created&since=2026-11-01T00:00:00Z`.',
        querystring: schemaOf(requests.auditQuery),
        response: { 200: pageRef(COMPONENTS.auditEvent), ...problemResponses(400, 401, 403, 429) },
      },
    },
    async (req) => {
      const { limit, cursor, ...filters } = req.query;
      const data = await run(ListAuditEventsDocument, { first: limit, after: cursor, ...camelKeys(filters) }, context(req), {
        first: 'limit',
        after: 'cursor',
        actorId: 'actor_id',
        targetId: 'target_id',
      });
      return page(COMPONENTS.auditEvent.shape, data.auditEvents);
    },
  );
}
