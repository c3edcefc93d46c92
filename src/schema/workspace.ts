import { z } from 'zod';
import { forbidden, notFound, validationFailed } from '../errors.ts';
import { EXPORT_DATASETS, EXPORT_FORMATS, type ExportDataset, type ExportFormat, ROLES } from '../contract/enums.ts';
import { RETENTION_KEYS, RETENTION_SETTINGS } from '../contract/retention.ts';
import { builder } from './builder.ts';
import { Role } from './enums.ts';
import { actorOf, EXPORT_CAPABILITY, requireCapability } from './guards.ts';
import { parseInput } from './validate.ts';

// The workspace as a whole (docs/data-lifecycle.md): retention, users' roles, exports and deletion.

const RetentionKey = builder.enumType('RetentionKey', { values: RETENTION_KEYS });

const RetentionSetting = builder
  .objectRef<Awaited<ReturnType<import('../services/workspace.ts').WorkspaceService['retention']>>[number]>('RetentionSetting')
  .implement({
    description: 'How long one kind of data is kept, in days.',
    fields: (t) => ({
      key: t.field({ type: RetentionKey, resolve: (s) => s.key }),
      days: t.exposeInt('days'),
      defaultDays: t.exposeInt('defaultDays'),
      minDays: t.exposeInt('minDays'),
      maxDays: t.exposeInt('maxDays'),
      isDefault: t.exposeBoolean('isDefault'),
      description: t.exposeString('description'),
    }),
  });

const RetentionInput = builder.inputType('RetentionInput', {
  description: 'Days to keep each kind of data; null returns it to the default, an absent field leaves it.',
  fields: (t) => Object.fromEntries(RETENTION_KEYS.map((k) => [k, t.int({ required: false })])) as never,
});

const retentionInput = z
  .object(
    Object.fromEntries(
      RETENTION_KEYS.map((k) => {
        const s = RETENTION_SETTINGS[k];
        return [k, z.number().int().min(s.min, `must be at least ${s.min} days`).max(s.max, `must be at most ${s.max} days`).nullish()];
      }),
    ),
  )
  .strict();

const WorkspaceDeletion = builder.objectRef<{ requestedAt: Date; dueAt: Date; requestedBy: string | null }>('WorkspaceDeletion').implement({
  description: 'A scheduled deletion of the workspace: everything goes at `dueAt` unless an owner cancels it before.',
  fields: (t) => ({
    requestedAt: t.expose('requestedAt', { type: 'DateTime' }),
    dueAt: t.expose('dueAt', { type: 'DateTime' }),
    requestedBy: t.exposeString('requestedBy', { nullable: true, description: 'The owner who asked, by email.' }),
  }),
});

builder.prismaObjectFields('Tenant', (t) => ({
  deletion: t.field({
    type: WorkspaceDeletion,
    nullable: true,
    description: 'Set while the workspace’s deletion is scheduled; outbound webhooks are held meanwhile.',
    select: { deletionRequestedAt: true, deletionDueAt: true, deletionRequestedBy: true },
    resolve: async (tenant, _args, ctx) => {
      if (!tenant.deletionRequestedAt || !tenant.deletionDueAt) return null;
      const by = tenant.deletionRequestedBy
        ? await ctx.prisma.user.findUnique({ where: { id: tenant.deletionRequestedBy }, select: { email: true } })
        : null;
      return { requestedAt: tenant.deletionRequestedAt, dueAt: tenant.deletionDueAt, requestedBy: by?.email ?? null };
    },
  }),
  users: t.prismaField({
    type: ['User'],
    description: 'The workspace’s users, oldest first (owners, admins and API keys).',
    resolve: (query, tenant, _args, ctx) => {
      requireCapability(ctx, 'manage');
      return ctx.prisma.user.findMany({ ...query, where: { tenantId: tenant.id }, orderBy: { createdAt: 'asc' } });
    },
  }),
}));

builder.queryFields((t) => ({
  workspace: t.prismaField({
    type: 'Tenant',
    description: 'The caller’s workspace.',
    resolve: (query, _root, _args, ctx) => {
      const p = requireCapability(ctx, 'read');
      return ctx.prisma.tenant.findUniqueOrThrow({ ...query, where: { id: p.tenantId } });
    },
  }),
  retention: t.field({
    type: [RetentionSetting],
    description: 'How long each kind of data is kept (docs/data-lifecycle.md).',
    resolve: (_root, _args, ctx) => ctx.services.workspace.retention(requireCapability(ctx, 'read').tenantId),
  }),
}));

const DataExportDataset = builder.enumType('DataExportDataset', { values: EXPORT_DATASETS });
const DataExportFormat = builder.enumType('DataExportFormat', { values: EXPORT_FORMATS });

const DataExport = builder
  .objectRef<{
    dataset: ExportDataset | null;
    format: ExportFormat;
    customerId: string | null;
    since: Date | null;
    until: Date | null;
  }>('DataExport')
  .implement({
    description: 'An export that was authorised and recorded in the audit log; its rows stream from the REST API.',
    fields: (t) => ({
      dataset: t.field({
        type: DataExportDataset,
        nullable: true,
        resolve: (e) => e.dataset,
        description: 'Null for one customer’s export.',
      }),
      format: t.field({ type: DataExportFormat, resolve: (e) => e.format }),
      customerId: t.expose('customerId', { type: 'UUID', nullable: true }),
      since: t.expose('since', { type: 'DateTime', nullable: true }),
      until: t.expose('until', { type: 'DateTime', nullable: true }),
    }),
  });

builder.mutationFields((t) => ({
  setRetention: t.field({
    type: [RetentionSetting],
    description: 'Changes how long each kind of data is kept, within the bounds each setting states (owners and admins).',
    args: { input: t.arg({ type: RetentionInput }) },
    resolve: (_root, args, ctx) => {
      const p = requireCapability(ctx, 'manage');
      // Shortening a window removes data for good: a person decides it, not a key.
      if (p.kind === 'api_key') throw forbidden('Retention is changed by a signed-in owner or admin.');
      const input = parseInput(retentionInput, Object.fromEntries(Object.entries(args.input).filter(([, v]) => v !== undefined)));
      return ctx.services.workspace.setRetention(actorOf(ctx, p), input);
    },
  }),
  startDataExport: t.field({
    type: DataExport,
    description:
      'Authorises an export and records it in the audit log (owners, admins and API keys); the REST routes `GET /api/v1/exports/{dataset}` and `GET /api/v1/customers/{id}/export` run it and stream the rows.',
    args: {
      dataset: t.arg({ type: DataExportDataset, required: false, description: 'Absent: everything held about `customerId`.' }),
      format: t.arg({ type: DataExportFormat, required: false, defaultValue: 'ndjson' }),
      customerId: t.arg({ type: 'UUID', required: false }),
      since: t.arg({ type: 'DateTime', required: false, description: 'Rows at or after this time (datasets with a time).' }),
      until: t.arg({ type: 'DateTime', required: false, description: 'Rows before this time.' }),
    },
    resolve: async (_root, args, ctx) => {
      const p = requireCapability(ctx, EXPORT_CAPABILITY);
      const format = args.format ?? 'ndjson';
      if (!args.dataset && !args.customerId) throw validationFailed([{ path: 'dataset', message: 'name a dataset, or a customer' }]);
      if (!args.dataset && format !== 'ndjson') throw validationFailed([{ path: 'format', message: 'a customer’s export is NDJSON' }]);
      if (args.since && args.until && args.since >= args.until) throw validationFailed([{ path: 'until', message: 'must be after since' }]);
      if (args.customerId && !(await ctx.prisma.customer.count({ where: { id: args.customerId, tenantId: p.tenantId } }))) {
        throw notFound(`Customer ${args.customerId}`);
      }
      const e = {
        dataset: args.dataset ?? null,
        format,
        customerId: args.customerId ?? null,
        since: args.since ?? null,
        until: args.until ?? null,
      };
      await ctx.services.audit.record(actorOf(ctx, p), {
        action: 'data.exported',
        targetType: e.customerId ? 'customer' : 'tenant',
        targetId: e.customerId ?? p.tenantId,
        changes: { dataset: e.dataset ?? 'customer', format, since: e.since?.toISOString() ?? null, until: e.until?.toISOString() ?? null },
      });
      return e;
    },
  }),
  deleteWorkspace: t.prismaField({
    type: 'Tenant',
    description:
      'Schedules the workspace’s deletion (owners only): outbound webhooks stop at once, and when the undo window ends its API keys and sessions stop working and every row of the workspace is removed. `confirmName` must be its name.',
    args: { confirmName: t.arg.string() },
    resolve: async (query, _root, args, ctx) => {
      const p = requireCapability(ctx, 'own');
      const actor = actorOf(ctx, p);
      await ctx.services.workspace.scheduleDeletion({ ...actor, id: actor.id! }, args.confirmName);
      return ctx.prisma.tenant.findUniqueOrThrow({ ...query, where: { id: p.tenantId } });
    },
  }),
  cancelWorkspaceDeletion: t.prismaField({
    type: 'Tenant',
    description: 'Cancels a scheduled deletion while its window lasts (owners only); held webhooks then go out.',
    resolve: async (query, _root, _args, ctx) => {
      const p = requireCapability(ctx, 'own');
      await ctx.services.workspace.cancelDeletion(actorOf(ctx, p));
      return ctx.prisma.tenant.findUniqueOrThrow({ ...query, where: { id: p.tenantId } });
    },
  }),
  updateUserRole: t.prismaField({
    type: 'User',
    description: 'Changes a user’s role (owners only; not their own).',
    args: { id: t.arg({ type: 'UUID' }), role: t.arg({ type: Role }) },
    resolve: async (query, _root, args, ctx) => {
      const p = requireCapability(ctx, 'own');
      await ctx.services.workspace.setUserRole(actorOf(ctx, p), args.id, parseInput(z.enum(ROLES), args.role));
      return ctx.prisma.user.findUniqueOrThrow({ ...query, where: { id: args.id } });
    },
  }),
  revokeUserSessions: t.boolean({
    description:
      'Revokes every session of a user issued until now: each device must sign in again. Owners for any user of the workspace; every signed-in user for themselves.',
    args: { id: t.arg({ type: 'UUID' }) },
    resolve: async (_root, args, ctx) => {
      const self = ctx.principal?.kind === 'session' && ctx.principal.userId === args.id;
      const p = requireCapability(ctx, self ? 'read' : 'own');
      await ctx.services.workspace.revokeUserSessions(actorOf(ctx, p), args.id);
      return true;
    },
  }),
  revokeWorkspaceSessions: t.boolean({
    description: 'Revokes every session of every user of the workspace issued until now, the caller’s included (owners only).',
    resolve: async (_root, _args, ctx) => {
      await ctx.services.workspace.revokeWorkspaceSessions(actorOf(ctx, requireCapability(ctx, 'own')));
      return true;
    },
  }),
  removeUser: t.field({
    type: 'UUID',
    description: 'Removes a user from the workspace (owners only; not themselves); answers the id.',
    args: { id: t.arg({ type: 'UUID' }) },
    resolve: async (_root, args, ctx) => {
      await ctx.services.workspace.removeUser(actorOf(ctx, requireCapability(ctx, 'own')), args.id);
      return args.id;
    },
  }),
}));
