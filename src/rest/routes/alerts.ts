import type { FastifyInstance } from 'fastify';
import { COMPONENTS } from '../../contract/entities.ts';
import * as requests from '../../contract/requests.ts';
import { camelKeys, serialize } from '../../contract/serialize.ts';
import { type ContractTypeProvider, pageRef, schemaOf } from '../../contract/wire.ts';
import { problemResponses } from '../../http/openapi.ts';
import { ListAlertsDocument, UpdateAlertDocument } from '../generated/operations.ts';
import { page } from '../page.ts';
import type { RestDeps } from '../deps.ts';

const tags = ['Alerts'];

export async function alertRoutes(fastify: FastifyInstance, { run, context }: RestDeps) {
  const app = fastify.withTypeProvider<ContractTypeProvider>();
  app.get(
    '/alerts',
    {
      schema: {
        tags,
        operationId: 'listAlerts',
        summary: 'List alerts',
        description: 'Example: `status=open&severity=high` returns open high-severity alerts.',
        querystring: schemaOf(requests.alertQuery),
        response: { 200: pageRef(COMPONENTS.alert), ...problemResponses(400, 401, 403, 429) },
      },
    },
    async (req) => {
      const { limit, cursor, ...filters } = req.query;
      const data = await run(ListAlertsDocument, { first: limit, after: cursor, ...camelKeys(filters) }, context(req), {
        first: 'limit',
        after: 'cursor',
      });
      return page(COMPONENTS.alert.shape, data.alerts);
    },
  );

  app.patch(
    '/alerts/:alert_id',
    {
      schema: {
        tags,
        operationId: 'updateAlert',
        summary: 'Change an alert’s status',
        description:
          'Acknowledge, snooze until a time (`snoozed_until`), resolve, or reopen (`open`) an alert. The answer is the alert as it now is.',
        params: schemaOf(requests.alertParams),
        body: schemaOf(requests.alertUpdate, { examples: [{ status: 'snoozed', snoozed_until: '2027-01-15T09:00:00Z' }] }),
        response: { 200: COMPONENTS.alert.ref, ...problemResponses(400, 401, 403, 404, 409, 413, 415, 429) },
      },
    },
    async (req) => {
      const data = await run(UpdateAlertDocument, { id: req.params.alert_id, input: camelKeys(req.body) }, context(req));
      return serialize(COMPONENTS.alert.shape, data.updateAlert);
    },
  );
}
