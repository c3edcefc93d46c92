import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { RestDeps } from '../plugin.ts';
import {
  CancelWorkspaceDeletionDocument,
  DeleteWorkspaceDocument,
  GetRetentionDocument,
  GetWorkspaceDocument,
  SetRetentionDocument,
  StartDataExportDocument,
  type RetentionItemFragment,
  type WorkspaceDetailFragment,
} from '../generated/operations.ts';
import { problemResponses } from '../../http/openapi.ts';
import { RETENTION_KEYS, RETENTION_SETTINGS } from '../../lifecycle/policy.ts';
import { EXPORT_DATASETS, EXPORT_FORMATS, exportDatasetInfo, type ExportDataset, type ExportFormat } from '../../services/exports.ts';

// The workspace as a whole (docs/data-lifecycle.md): its deletion, retention and exports. An export route
// runs its operation (which authorises and audits it), then streams the rows from the export service: a
// GraphQL answer is built whole, and an export must not be.

const snake = (k: string) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
const nullable = (schema: object) => ({ anyOf: [schema, { type: 'null' }] });
const dateTime = { type: 'string', format: 'date-time' } as const;

const workspaceSchema = {
  type: 'object',
  description: 'The workspace; `deletion` is set while its deletion is scheduled.',
  properties: {
    id: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    plan: { type: 'string' },
    created_at: dateTime,
    deletion: nullable({
      type: 'object',
      properties: { requested_at: dateTime, due_at: dateTime, requested_by: nullable({ type: 'string' }) },
      required: ['requested_at', 'due_at', 'requested_by'],
    }),
  },
  required: ['id', 'name', 'plan', 'created_at', 'deletion'],
} as const;

const workspace = (w: WorkspaceDetailFragment) => ({
  id: w.id,
  name: w.name,
  plan: w.plan,
  created_at: w.createdAt,
  deletion: w.deletion && { requested_at: w.deletion.requestedAt, due_at: w.deletion.dueAt, requested_by: w.deletion.requestedBy },
});

const retentionSchema = {
  type: 'object',
  description: 'Days each kind of data is kept, with the default and the bounds a tenant may choose within.',
  properties: Object.fromEntries(
    RETENTION_KEYS.map((k) => [
      snake(k),
      {
        type: 'object',
        description: RETENTION_SETTINGS[k].what,
        properties: {
          days: { type: 'integer' },
          default_days: { type: 'integer' },
          min_days: { type: 'integer' },
          max_days: { type: 'integer' },
          is_default: { type: 'boolean' },
        },
        required: ['days', 'default_days', 'min_days', 'max_days', 'is_default'],
      },
    ]),
  ),
  required: RETENTION_KEYS.map(snake),
} as const;

const retention = (items: RetentionItemFragment[]) =>
  Object.fromEntries(
    items.map((r) => [
      snake(r.key),
      { days: r.days, default_days: r.defaultDays, min_days: r.minDays, max_days: r.maxDays, is_default: r.isDefault },
    ]),
  );

const retentionInput = {
  type: 'object',
  description: 'Days to keep each kind of data, within its bounds; `null` returns it to the default, an absent field leaves it.',
  properties: Object.fromEntries(
    RETENTION_KEYS.map((k) => [
      snake(k),
      nullable({ type: 'integer', minimum: RETENTION_SETTINGS[k].min, maximum: RETENTION_SETTINGS[k].max }),
    ]),
  ),
  additionalProperties: false,
} as const;

const MEDIA: Record<ExportFormat, string> = { ndjson: 'application/x-ndjson', csv: 'text/csv' };
const streamed = (formats: readonly ExportFormat[], description: string) => ({
  description,
  headers: { 'content-disposition': { type: 'string', description: 'attachment, with a file name' } },
  content: Object.fromEntries(formats.map((f) => [MEDIA[f], { schema: { type: 'string' } }])),
});

function sendStream(reply: FastifyReply, format: ExportFormat, filename: string, chunks: AsyncGenerator<string>) {
  reply
    .header('content-type', `${MEDIA[format]}; charset=utf-8`)
    .header('content-disposition', `attachment; filename="${filename}.${format}"`)
    .header('cache-control', 'no-store');
  // Bytes, not objects: one page waits in the stream at most, whatever its size.
  return reply.send(Readable.from(chunks, { objectMode: false, highWaterMark: 64 * 1024 }));
}

const today = () => new Date().toISOString().slice(0, 10);
const tags = ['Workspace'];

type ExportQuery = { format: ExportFormat; since?: string; until?: string };

export async function workspaceRoutes(app: FastifyInstance, { run, context }: RestDeps) {
  app.get(
    '/workspace',
    {
      schema: {
        tags,
        operationId: 'getWorkspace',
        summary: 'Get the workspace',
        description: 'The caller’s workspace, with its scheduled deletion if there is one.',
        response: { 200: workspaceSchema, ...problemResponses(401, 403, 429) },
      },
    },
    async (req) => workspace((await run(GetWorkspaceDocument, {}, context(req))).workspace),
  );

  app.post<{ Body: { confirm_name: string } }>(
    '/workspace/deletion',
    {
      schema: {
        tags,
        operationId: 'scheduleWorkspaceDeletion',
        summary: 'Schedule the workspace’s deletion',
        description:
          'Owners only, signed in. Outbound webhooks stop at once; when the undo window ends (7 days by default) every row of the workspace is removed. `confirm_name` must be the workspace’s name. `DELETE` on the same path cancels it within the window.',
        body: {
          type: 'object',
          properties: { confirm_name: { type: 'string', minLength: 1, maxLength: 200 } },
          required: ['confirm_name'],
          additionalProperties: false,
          examples: [{ confirm_name: 'Acme' }],
        },
        response: { 202: workspaceSchema, ...problemResponses(400, 401, 403, 409, 413, 415, 429) },
      },
    },
    async (req, reply) => {
      const data = await run(DeleteWorkspaceDocument, { confirmName: req.body.confirm_name }, context(req), {
        confirmName: 'confirm_name',
      });
      return reply.code(202).send(workspace(data.deleteWorkspace));
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
        response: { 200: workspaceSchema, ...problemResponses(401, 403, 409, 429) },
      },
    },
    async (req) => workspace((await run(CancelWorkspaceDeletionDocument, {}, context(req))).cancelWorkspaceDeletion),
  );

  app.get(
    '/retention',
    {
      schema: {
        tags,
        operationId: 'getRetention',
        summary: 'Get the retention settings',
        description: 'How long each kind of data is kept (docs/data-lifecycle.md).',
        response: { 200: retentionSchema, ...problemResponses(401, 403, 429) },
      },
    },
    async (req) => retention((await run(GetRetentionDocument, {}, context(req))).retention),
  );

  app.put<{ Body: Partial<Record<string, number | null>> }>(
    '/retention',
    {
      schema: {
        tags,
        operationId: 'setRetention',
        summary: 'Set the retention settings',
        description: 'Owners and admins, signed in. Data past a shortened window goes at the worker’s next pass.',
        body: { ...retentionInput, examples: [{ inbound_bodies: 14, signals: null }] },
        response: { 200: retentionSchema, ...problemResponses(400, 401, 403, 413, 415, 429) },
      },
    },
    async (req) => {
      const input = Object.fromEntries(RETENTION_KEYS.filter((k) => req.body[snake(k)] !== undefined).map((k) => [k, req.body[snake(k)]]));
      const data = await run(SetRetentionDocument, { input }, context(req), Object.fromEntries(RETENTION_KEYS.map((k) => [k, snake(k)])));
      return retention(data.setRetention);
    },
  );

  app.get<{ Params: { dataset: ExportDataset }; Querystring: ExportQuery }>(
    '/exports/:dataset',
    {
      schema: {
        tags,
        operationId: 'exportDataset',
        summary: 'Export a dataset',
        description: `Streams one of the workspace’s datasets as NDJSON (one object a line) or CSV (a header row, JSON in JSON-valued cells), in bounded memory. Owners, admins and API keys; every export is in the audit log. ${EXPORT_DATASETS.map(
          (d) => `\`${d}\`: ${exportDatasetInfo(d).description}.`,
        ).join(' ')} \`since\` and \`until\` bound the datasets with a time.`,
        params: {
          type: 'object',
          properties: { dataset: { type: 'string', enum: EXPORT_DATASETS } },
          required: ['dataset'],
        },
        querystring: {
          type: 'object',
          properties: {
            format: { type: 'string', enum: EXPORT_FORMATS, default: 'ndjson' },
            since: { ...dateTime, description: 'Rows at or after this time.' },
            until: { ...dateTime, description: 'Rows before this time.' },
          },
        },
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
      });
      return sendStream(reply, format, `${dataset}-${today()}`, chunks);
    },
  );

  app.get<{ Params: { customer_id: string } }>(
    '/customers/:customer_id/export',
    {
      schema: {
        tags: ['Customers'],
        operationId: 'exportCustomer',
        summary: 'Export everything about a customer',
        description:
          'For an access request: every record held about the customer (the customer, health, history, churn prediction, labels, alerts, signals and their daily aggregates, invoices, subscriptions, and the raw provider events behind its signals while their bodies are kept), streamed as NDJSON lines `{"record": type, "data": {...}}`. Owners, admins and API keys; recorded in the audit log.',
        params: { type: 'object', properties: { customer_id: { type: 'string', format: 'uuid' } }, required: ['customer_id'] },
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
        ctx.services.exports.subject(ctx.principal!.tenantId, customerId),
      );
    },
  );
}
