import { builder } from './builder.ts';
import { Plan, Role } from './enums.ts';
import { requireCapability } from './guards.ts';

builder.prismaObject('Tenant', {
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    plan: t.expose('plan', { type: Plan }),
    apiAccess: t.boolean({
      description: 'Whether API keys work for this tenant (Growth and Scale plans).',
      resolve: (tenant) => tenant.plan === 'growth' || tenant.plan === 'scale',
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

builder.prismaObject('User', {
  fields: (t) => ({
    id: t.exposeID('id'),
    email: t.exposeString('email'),
    role: t.expose('role', { type: Role }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

const Viewer = builder.objectRef<{ tenantId: string; userId: string | null; kind: string }>('Viewer').implement({
  description: 'The caller: its tenant, and the signed-in user on the session path.',
  fields: (t) => ({
    kind: t.exposeString('kind', { description: '`api_key` or `session`.' }),
    tenant: t.prismaField({
      type: 'Tenant',
      resolve: (query, v, _args, ctx) => ctx.prisma.tenant.findUniqueOrThrow({ ...query, where: { id: v.tenantId } }),
    }),
    user: t.prismaField({
      type: 'User',
      nullable: true,
      resolve: (query, v, _args, ctx) =>
        v.userId ? ctx.prisma.user.findFirst({ ...query, where: { id: v.userId, tenantId: v.tenantId } }) : null,
    }),
  }),
});

builder.queryField('viewer', (t) =>
  t.field({
    type: Viewer,
    resolve: (_root, _args, ctx) => {
      const p = requireCapability(ctx, 'read');
      return { tenantId: p.tenantId, userId: p.kind === 'session' ? p.userId : null, kind: p.kind };
    },
  }),
);
