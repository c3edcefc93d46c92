import type { FastifyInstance } from 'fastify';
import type { RestDeps } from '../plugin.ts';
import { ListAlertsDocument, UpdateAlertDocument } from '../generated/operations.ts';
import type { AlertSeverity, AlertStatus, AlertType } from '../generated/operations.ts';
import * as map from '../mappers.ts';
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
        summary: 'Alerts matching the filters (they combine), newest first',
        description: 'Example: `status=open&severity=high` returns open high-severity alerts.',
        querystring: s.alertQuery,
        response: { 200: s.listOf({ $ref: 'Alert#' }), ...s.problemResponses(400, 401, 403, 429) },
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
        summary: 'Acknowledge, snooze until a time, resolve or reopen an alert',
        params: { type: 'object', properties: { alert_id: { type: 'string', format: 'uuid' } }, required: ['alert_id'] },
        body: s.alertUpdate,
        response: { 200: { $ref: 'Alert#' }, ...s.problemResponses(400, 401, 403, 404, 409, 413, 415, 429) },
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
