import { notFound } from '../errors.ts';
import type { Alert as AlertRow } from '../generated/prisma/client.ts';
import { builder } from './builder.ts';
import { AlertSeverity, AlertStatus, AlertType } from './enums.ts';
import { requireCapability } from './guards.ts';
import { connectionOf, DEFAULT_PAGE_SIZE, keysetPage, MAX_PAGE_SIZE } from './pagination.ts';

export const Alert = builder.prismaObject('Alert', {
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    customerId: t.expose('customerId', { type: 'UUID' }),
    customer: t.relation('customer'),
    alertType: t.expose('alertType', { type: AlertType }),
    severity: t.expose('severity', { type: AlertSeverity }),
    status: t.expose('status', { type: AlertStatus }),
    title: t.exposeString('title'),
    message: t.exposeString('message'),
    details: t.expose('details', { type: 'JSON' }),
    snoozedUntil: t.expose('snoozedUntil', { type: 'DateTime', nullable: true }),
    acknowledgedAt: t.expose('acknowledgedAt', { type: 'DateTime', nullable: true }),
    resolvedAt: t.expose('resolvedAt', { type: 'DateTime', nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
});

const AlertConnection = connectionOf('Alert', Alert);

builder.queryFields((t) => ({
  alerts: t.field({
    type: AlertConnection,
    description: 'Alerts of the tenant, newest first; the filters combine.',
    args: {
      first: t.arg.int({ required: false, description: `Page size, 1 to ${MAX_PAGE_SIZE} (default ${DEFAULT_PAGE_SIZE}).` }),
      after: t.arg.string({ required: false, description: 'The endCursor of the previous page.' }),
      status: t.arg({ type: AlertStatus, required: false }),
      severity: t.arg({ type: AlertSeverity, required: false }),
      alertType: t.arg({ type: AlertType, required: false }),
      customerId: t.arg({ type: 'UUID', required: false }),
    },
    resolve: async (_root, args, ctx, info) => {
      const p = requireCapability(ctx, 'read');
      const where = {
        tenantId: p.tenantId,
        ...(args.status ? { status: args.status } : {}),
        ...(args.severity ? { severity: args.severity } : {}),
        ...(args.alertType ? { alertType: args.alertType } : {}),
        ...(args.customerId ? { customerId: args.customerId } : {}),
      };
      return keysetPage<AlertRow>(ctx.prisma.alert, where, args, { context: ctx, info });
    },
  }),
  alert: t.prismaField({
    type: 'Alert',
    args: { id: t.arg({ type: 'UUID' }) },
    resolve: async (query, _root, args, ctx) => {
      const p = requireCapability(ctx, 'read');
      const a = await ctx.prisma.alert.findFirst({ ...query, where: { id: args.id, tenantId: p.tenantId } });
      if (!a) throw notFound(`Alert ${args.id}`);
      return a;
    },
  }),
}));

const UpdateAlertInput = builder.inputType('UpdateAlertInput', {
  fields: (t) => ({
    status: t.field({ type: AlertStatus, description: '`acknowledged`, `snoozed` (with snoozedUntil), `resolved`, or `open` to reopen.' }),
    snoozedUntil: t.field({ type: 'DateTime', required: false, description: 'Required with `snoozed`: when the alert wakes up again.' }),
  }),
});

builder.mutationField('updateAlert', (t) =>
  t.prismaField({
    type: 'Alert',
    description: 'Acknowledge, snooze until a time, resolve, or reopen an alert.',
    args: { id: t.arg({ type: 'UUID' }), input: t.arg({ type: UpdateAlertInput }) },
    resolve: async (query, _root, { id, input }, ctx) => {
      const p = requireCapability(ctx, 'write');
      await ctx.services.alerts.transition(p.tenantId, id, input);
      return ctx.prisma.alert.findUniqueOrThrow({ ...query, where: { id } });
    },
  }),
);
