import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { COMPONENTS } from '../../contract/entities.ts';
import { EXPORT_FORMATS, type ExportFormat } from '../../contract/enums.ts';
import * as requests from '../../contract/requests.ts';
import { RETENTION_KEYS, type RetentionKey, retentionField } from '../../contract/retention.ts';
import { camelKeys, serialize } from '../../contract/serialize.ts';
import { type ContractTypeProvider, schemaOf } from '../../contract/wire.ts';
import { problemResponses } from '../../http/openapi.ts';
import { forbidden } from '../../errors.ts';
import { EXPORT_CAPABILITY, stillMay } from '../../schema/guards.ts';
import {
  CancelWorkspaceDeletionDocument,
  DeleteWorkspaceDocument,
  GetRetentionDocument,
  GetWorkspaceDocument,
  RevokeUserSessionsDocument,
  RevokeWorkspaceSessionsDocument,
  SetRetentionDocument,
  StartDataExportDocument,
  type RetentionItemFragment,
} from '../generated/operations.ts';
import type { RestDeps } from '../deps.ts';

// The workspace as a whole (docs/data-lifecycle.md): its deletion, retention and exports. An export route
// runs its operation (which authorises and audits it), then streams the rows from the export service: a
// GraphQL answer is built whole, and an export must not be.

/** GraphQL lists the settings with their keys; REST answers one field per setting. */
const retention = (items: readonly RetentionItemFragment[]) =>
  serialize(COMPONENTS.retention.shape, Object.fromEntries(items.map((s) => [s.key, s])) as Record<RetentionKey, RetentionItemFragment>);

/** GraphQL error paths name the input's fields; REST callers know them by their wire names. */
const RETENTION_FIELDS = Object.fromEntries(RETENTION_KEYS.map((k) => [k, retentionField(k)]));

const MEDIA: Record<ExportFormat, string> = { ndjson: 'application/x-ndjson', csv: 'text/csv' };
const streamed = (formats: readonly ExportFormat[], description: string) => ({
  description,
  headers: { 'content-disposition': { type: 'string', description: 'attachment, with a file name' } },
  content: Object.fromEntries(formats.map((f) => [MEDIA[f], { schema: { type: 'string' } }])),
});

function sendStream(reply: FastifyReply, format: ExportFormat, filename: string, chunks: AsyncGenerator<string | Buffer>) {
  reply
    .header('content-type', `${MEDIA[format]}; charset=utf-8`)
    .header('content-disposition', `attachment; filename="${filename}.${format}"`)
    .header('cache-control', 'no-store');
  // Bytes, not objects: one page waits in the stream at most, whatever its size.
  return reply.send(Readable.from(chunks, { objectMode: false, highWaterMark: 64 * 1024 }));
}

/**
 * Asked before each page of an export: the caller's credential is resolved again, so a key revoked, a user
 * removed or demoted, or a workspace closed while a slow client reads ends the export there, rather than
 * letting it read rows written since. Throws, which aborts the response.
 */
const stillAllowed = (req: FastifyRequest) => async () => {
  const now = await req.reauthenticate!();
  if (!stillMay(req.principal!, now, EXPORT_CAPABILITY)) throw forbidden('The caller may no longer export this workspace’s data.');
};

const today = () => new Date().toISOString().slice(0, 10);
const tags = ['Workspace'];

export async function workspaceRoutes(fastify: FastifyInstance, { run, context }: RestDeps) {
  const app = fastify.withTypeProvider<ContractTypeProvider>();
  app.get(
    '/workspace',
    {
      schema: {
        tags,
        operationId: 'getWorkspace',
        summary: 'Get the workspace',
        description: 'The caller’s workspace, with its scheduled deletion if there is one.',
        response: { 200: COMPONENTS.workspace.ref, ...problemResponses(401, 403, 429) },
      },
    },
    async (req) => serialize(COMPONENTS.workspace.shape, (await run(GetWorkspaceDocument, {}, context(req))).workspace),
  );

  app.post(
    '/workspace/deletion',
    {
      schema: {
        tags,
        operationId: 'scheduleWorkspaceDeletion',
        summary: 'Schedule the workspace’s deletion',
        description:
          'Owners only, signed in. Outbound webhooks stop at once; when the undo window ends (7 days by default) its API keys and sessions stop working and every row of the workspace is removed. `confirm_name` must be the workspace’s name. `DELETE` on the same path cancels it within the window.',
        body: schemaOf(requests.workspaceDeletionInput, { examples: [{ confirm_name: 'Acme' }] }),
        response: { 202: COMPONENTS.workspace.ref, ...problemResponses(400, 401, 403, 409, 413, 415, 429) },
      },
    },
    async (req, reply) => {
      const data = await run(DeleteWorkspaceDocument, { confirmName: req.body.confirm_name }, context(req), {
        confirmName: 'confirm_name',
      });
      reply.code(202);
      return serialize(COMPONENTS.workspace.shape, data.deleteWorkspace);
    },
  );

  app.delete(
    '/workspace/deletion',
    {
      schema: {
        tags,
        operationId: 'cancelWorkspaceDeletion',
        summary: 'Cancel the workspace’s deletion',
        description: 'Owners only, signed in, while the undo window lasts; held webhooks then go out.',
        response: { 200: COMPONENTS.workspace.ref, ...problemResponses(401, 403, 409, 429) },
      },
    },
    async (req) =>
      serialize(COMPONENTS.workspace.shape, (await run(CancelWorkspaceDeletionDocument, {}, context(req))).cancelWorkspaceDeletion),
  );

  app.delete(
    '/workspace/sessions',
    {
      schema: {
        tags,
        operationId: 'revokeWorkspaceSessions',
        summary: 'Revoke every session of the workspace',
        description:
          'Owners only, signed in. Every session of every user of the workspace issued until now is refused from then on (`401 invalid_credentials`), the caller’s included, by every process of the service within `API_KEY_CACHE_MS` (2 s by default); users sign in again. API keys are not affected. Recorded in the audit log.',
        response: { 204: { type: 'null' }, ...problemResponses(401, 403, 429) },
      },
    },
    async (req, reply) => {
      await run(RevokeWorkspaceSessionsDocument, {}, context(req));
      return reply.code(204).send();
    },
  );

  app.delete(
    '/users/:id/sessions',
    {
      schema: {
        tags,
        operationId: 'revokeUserSessions',
        summary: 'Revoke a user’s sessions',
        description:
          'Every session of the user issued until now is refused from then on (`401 invalid_credentials`), on every device, by every process of the service within `API_KEY_CACHE_MS` (2 s by default). Owners, signed in, for any user of the workspace; every signed-in user for themselves. Recorded in the audit log.',
        params: schemaOf(requests.idParams),
        response: { 204: { type: 'null' }, ...problemResponses(400, 401, 403, 404, 429) },
      },
    },
    async (req, reply) => {
      await run(RevokeUserSessionsDocument, { id: req.params.id }, context(req));
      return reply.code(204).send();
    },
  );

  app.get(
    '/retention',
    {
      schema: {
        tags,
        operationId: 'getRetention',
        summary: 'Get the retention settings',
        description: 'How long each kind of data is kept (docs/data-lifecycle.md).',
        response: { 200: COMPONENTS.retention.ref, ...problemResponses(401, 403, 429) },
      },
    },
    async (req) => retention((await run(GetRetentionDocument, {}, context(req))).retention),
  );

  app.put(
    '/retention',
    {
      schema: {
        tags,
        operationId: 'setRetention',
        summary: 'Set the retention settings',
        description: 'Owners and admins, signed in. Data past a shortened window goes at the worker’s next pass.',
        body: schemaOf(requests.retentionUpdate, { examples: [{ inbound_bodies: 14, signals: null }] }),
        response: { 200: COMPONENTS.retention.ref, ...problemResponses(400, 401, 403, 413, 415, 429) },
      },
    },
    async (req) => {
      const data = await run(SetRetentionDocument, { input: camelKeys(req.body) }, context(req), RETENTION_FIELDS);
      return retention(data.setRetention);
    },
  );

  app.get(
    '/exports/:dataset',
    {
      // A HEAD would run the export (and record it in the audit log) only to send no rows.
      exposeHeadRoute: false,
      schema: {
        tags,
        operationId: 'exportDataset',
        summary: 'Export a dataset',
        description:
          'Streams one of the workspace’s datasets as NDJSON (one object a line) or CSV (a header row, JSON in JSON-valued cells), in bounded memory. Owners, admins and API keys; every export is in the audit log. `since` and `until` bound the datasets with a time.',
        params: schemaOf(requests.exportParams),
        querystring: schemaOf(requests.exportQuery),
        response: { 200: streamed(EXPORT_FORMATS, 'The rows, streamed.'), ...problemResponses(400, 401, 403, 429) },
      },
    },
    async (req, reply) => {
      const { dataset } = req.params;
      const { format, since, until } = req.query;
      const ctx = context(req);
      await run(StartDataExportDocument, { dataset, format, since, until }, ctx);
      const chunks = ctx.services.exports.dataset(dataset, format, {
        tenantId: ctx.principal!.tenantId,
        since: since ? new Date(since) : null,
        until: until ? new Date(until) : null,
        beforePage: stillAllowed(req),
      });
      return sendStream(reply, format, `${dataset}-${today()}`, chunks);
    },
  );

  app.get(
    '/customers/:customer_id/export',
    {
      exposeHeadRoute: false,
      schema: {
        tags: ['Customers'],
        operationId: 'exportCustomer',
        summary: 'Export everything about a customer',
        description:
          'For an access request: every record held about the customer (the customer, health, history, churn prediction, labels, alerts, signals and their daily aggregates, invoices, subscriptions, and the raw provider events behind its signals while their bodies are kept), streamed as NDJSON lines `{"record": type, "data": {...}}`. Owners, admins and API keys; recorded in the audit log.',
        params: schemaOf(requests.customerParams),
        response: { 200: streamed(['ndjson'], 'The records, streamed.'), ...problemResponses(400, 401, 403, 404, 429) },
      },
    },
    async (req, reply) => {
      const ctx = context(req);
      const customerId = req.params.customer_id;
      await run(StartDataExportDocument, { customerId, format: 'ndjson' }, ctx);
      return sendStream(
        reply,
        'ndjson',
        `customer-${customerId}-${today()}`,
        ctx.services.exports.subject(ctx.principal!.tenantId, customerId, stillAllowed(req)),
      );
    },
  );
}
