import type { FastifyInstance } from 'fastify';
import type { RestDeps } from '../plugin.ts';
import { ListAlertsDocument, UpdateAlertDocument } from '../generated/operations.ts';
import type { AlertSeverity, AlertStatus, AlertType } from '../generated/operations.ts';
import * as map from '../mappers.ts';
import { problemResponses } from '../../http/openapi.ts';
import * as s from '../schemas.ts';

type AlertQuery = {
  limit: number;
  cursor?: string;
  status?: AlertStatus;
  severity?: AlertSeverity;
  alert_type?: AlertType;
  customer_id?: string;
};
type AlertBody = { status: AlertStatus; snoozed_until?: string };
const tags = ['Alerts'];

export async function alertRoutes(app: FastifyInstance, { run, context }: RestDeps) {
  app.get<{ Querystring: AlertQuery }>(
    '/alerts',
    {
      schema: {
        tags,
        operationId: 'listAlerts',
        summary: 'List alerts',
        description: 'Example: `status=open&severity=high` returns open high-severity alerts.',
        querystring: s.alertQuery,
        response: { 200: s.listOf({ $ref: 'Alert#' }), ...problemResponses(400, 401, 403, 429) },
      },
    },
    async (req) => {
      const q = req.query;
      const data = await run(
        ListAlertsDocument,
        { first: q.limit, after: q.cursor, status: q.status, severity: q.severity, alertType: q.alert_type, customerId: q.customer_id },
        context(req),
        { first: 'limit', after: 'cursor' },
      );
      return map.page(data.alerts, map.alert);
    },
  );

  app.patch<{ Params: { alert_id: string }; Body: AlertBody }>(
    '/alerts/:alert_id',
    {
      schema: {
        tags,
        operationId: 'updateAlert',
        summary: 'Change an alert’s status',
        description:
          'Acknowledge, snooze until a time (`snoozed_until`), resolve, or reopen (`open`) an alert. The answer is the alert as it now is.',
        params: { type: 'object', properties: { alert_id: { type: 'string', format: 'uuid' } }, required: ['alert_id'] },
        body: { ...s.alertUpdate, examples: [{ status: 'snoozed', snoozed_until: '2027-01-15T09:00:00Z' }] },
        response: { 200: { $ref: 'Alert#' }, ...problemResponses(400, 401, 403, 404, 409, 413, 415, 429) },
      },
    },
    async (req) => {
      const data = await run(
        UpdateAlertDocument,
        { id: req.params.alert_id, input: { status: req.body.status, snoozedUntil: req.body.snoozed_until } },
        context(req),
      );
      return map.alert(data.updateAlert);
    },
  );
}
