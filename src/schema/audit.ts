import { z } from 'zod';
import type { AuditEvent as AuditEventRow } from '../generated/prisma/client.ts';
import { AUDIT_ACTIONS } from '../services/audit.ts';
import { builder } from './builder.ts';
import { requireCapability } from './guards.ts';
import { connectionOf, DEFAULT_PAGE_SIZE, keysetPage, MAX_PAGE_SIZE, type Sort } from './pagination.ts';
import { parseInput } from './validate.ts';

const NEWEST_FIRST_BY_TIME: Sort = { field: 'occurredAt', direction: 'desc', kind: 'date' };

const AuditEvent = builder.prismaObject('AuditEvent', {
  description: 'A security-relevant change to the workspace: who made it, when, from where, and what changed (never a secret).',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    occurredAt: t.expose('occurredAt', { type: 'DateTime' }),
    action: t.exposeString('action', { description: `One of: ${AUDIT_ACTIONS.join(', ')}.` }),
    actorType: t.exposeString('actorType', { description: '`user`, `api_key` or `operator` (the command line).' }),
    actorId: t.expose('actorId', { type: 'UUID', nullable: true }),
    actorLabel: t.exposeString('actorLabel', { nullable: true, description: "The user's email or the key's name and prefix at the time." }),
    clientAddress: t.exposeString('clientAddress', { nullable: true }),
    requestId: t.exposeString('requestId', { nullable: true }),
    targetType: t.exposeString('targetType', { nullable: true }),
    targetId: t.exposeString('targetId', { nullable: true }),
    changes: t.expose('changes', { type: 'JSON', description: 'Edits as `{ field: { from, to } }`, or facts of the action.' }),
  }),
});

const AuditConnection = connectionOf('AuditEvent', AuditEvent);

const filter = z.object({
  action: z.enum(AUDIT_ACTIONS).nullish(),
  actorId: z.string().uuid().nullish(),
  targetId: z.string().max(200).nullish(),
  since: z.date().nullish(),
  until: z.date().nullish(),
});

builder.queryField('auditActions', (t) =>
  t.stringList({
    description: 'Every action the audit log records, for filters.',
    resolve: (_r, _a, ctx) => {
      requireCapability(ctx, 'manage');
      return [...AUDIT_ACTIONS];
    },
  }),
);

builder.queryField('auditEvents', (t) =>
  t.field({
    type: AuditConnection,
    description: 'The workspace’s audit log, newest first (owners, admins and API keys).',
    args: {
      action: t.arg.string({ required: false }),
      actorId: t.arg({ type: 'UUID', required: false }),
      targetId: t.arg.string({ required: false }),
      since: t.arg({ type: 'DateTime', required: false, description: 'Events at or after this time.' }),
      until: t.arg({ type: 'DateTime', required: false, description: 'Events before this time.' }),
      first: t.arg.int({ required: false, description: `Page size, 1 to ${MAX_PAGE_SIZE} (default ${DEFAULT_PAGE_SIZE}).` }),
      after: t.arg.string({ required: false }),
    },
    resolve: (_r, args, ctx, info) => {
      const p = requireCapability(ctx, 'manage');
      const f = parseInput(filter, {
        action: args.action,
        actorId: args.actorId,
        targetId: args.targetId,
        since: args.since,
        until: args.until,
      });
      const where = ctx.services.audit.where({ tenantId: p.tenantId, ...f });
      return keysetPage<AuditEventRow>(ctx.prisma.auditEvent, where, args, { context: ctx, info }, NEWEST_FIRST_BY_TIME);
    },
  }),
);
