import type { FastifyInstance } from 'fastify';
import type { RestDeps } from '../plugin.ts';
import { ListAuditEventsDocument } from '../generated/operations.ts';
import * as map from '../mappers.ts';
import { problemResponses } from '../../http/openapi.ts';
import * as s from '../schemas.ts';

type AuditQuery = {
  limit: number;
  cursor?: string;
  action?: string;
  actor_id?: string;
  target_id?: string;
  since?: string;
  until?: string;
};

export async function auditRoutes(app: FastifyInstance, { run, context }: RestDeps) {
  app.get<{ Querystring: AuditQuery }>(
    '/audit-events',
    {
      schema: {
        tags: ['Audit log'],
        operationId: 'listAuditEvents',
        summary: 'List audit events',
        description:
          'The workspace’s audit log, newest first: sign-ins, API keys, users, webhook endpoints and their secrets, inbound secrets, weights, churn models and erasures, each with its actor, address and changes. Owners, admins and API keys. Example: `action=api_key.created&since=2026-11-01T00:00:00Z`.',
        querystring: s.auditQuery,
        response: { 200: s.listOf({ $ref: 'AuditEvent#' }), ...problemResponses(400, 401, 403, 429) },
      },
    },
    async (req) => {
      const q = req.query;
      const data = await run(
        ListAuditEventsDocument,
        { first: q.limit, after: q.cursor, action: q.action, actorId: q.actor_id, targetId: q.target_id, since: q.since, until: q.until },
        context(req),
        { first: 'limit', after: 'cursor', actorId: 'actor_id', targetId: 'target_id' },
      );
      return map.page(data.auditEvents, map.auditEvent);
    },
  );
}
