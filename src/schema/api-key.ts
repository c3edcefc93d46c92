import { z } from 'zod';
import { DEFAULT_ROTATION_GRACE_HOURS } from '../services/api-keys.ts';
import { notFound } from '../errors.ts';
import { builder } from './builder.ts';
import { actorOf, requireCapability } from './guards.ts';
import { oneLine, parseInput } from './validate.ts';

const ApiKey = builder.prismaObject('ApiKey', {
  description: 'A tenant API key. Only its prefix is ever shown again after creation.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    name: t.exposeString('name'),
    prefix: t.exposeString('prefix', { description: 'The first characters of the key, to recognise it.' }),
    status: t.string({
      description: '`active`, `expiring` (rotated, in its grace period), `expired` or `revoked`.',
      resolve: (k) => {
        const now = new Date();
        if (k.revokedAt && k.revokedAt <= now) return 'revoked';
        if (k.expiresAt && k.expiresAt <= now) return 'expired';
        return k.replacedById ? 'expiring' : 'active';
      },
    }),
    lastUsedAt: t.expose('lastUsedAt', { type: 'DateTime', nullable: true }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime', nullable: true }),
    revokedAt: t.expose('revokedAt', { type: 'DateTime', nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

const ApiKeyWithSecret = builder.objectRef<{ key: object; secret: string }>('ApiKeyWithSecret').implement({
  description: 'A new key and its secret. The secret is shown this once; store it now.',
  fields: (t) => ({
    apiKey: t.field({ type: ApiKey, resolve: (r) => r.key as never }),
    secret: t.exposeString('secret'),
  }),
});

builder.queryField('apiKeys', (t) =>
  t.prismaField({
    type: ['ApiKey'],
    description: "The tenant's API keys, newest first (signed-in admins).",
    resolve: (query, _root, _args, ctx) => {
      const p = requireCapability(ctx, 'manage_credentials');
      return ctx.prisma.apiKey.findMany({ ...query, where: { tenantId: p.tenantId }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] });
    },
  }),
);

const createInput = z.object({
  name: oneLine().trim().min(1).max(100),
  expiresAt: z
    .date()
    .refine((d) => d > new Date(), 'must be in the future')
    .nullish(),
});

builder.mutationFields((t) => ({
  createApiKey: t.field({
    type: ApiKeyWithSecret,
    args: { name: t.arg.string(), expiresAt: t.arg({ type: 'DateTime', required: false }) },
    resolve: async (_root, args, ctx) => {
      const p = requireCapability(ctx, 'manage_credentials');
      const input = parseInput(createInput, args);
      return ctx.services.apiKeys.issue(actorOf(ctx, p), { name: input.name, expiresAt: input.expiresAt ?? null });
    },
  }),
  revokeApiKey: t.prismaField({
    type: 'ApiKey',
    args: { id: t.arg({ type: 'UUID' }) },
    resolve: async (query, _root, args, ctx) => {
      const p = requireCapability(ctx, 'manage_credentials');
      if (!(await ctx.services.apiKeys.revoke(actorOf(ctx, p), args.id))) throw notFound(`API key ${args.id}`);
      return ctx.prisma.apiKey.findUniqueOrThrow({ ...query, where: { id: args.id } });
    },
  }),
  rotateApiKey: t.field({
    type: ApiKeyWithSecret,
    description: 'Issues a replacement key; the old one keeps working for the grace period (default 24 h, 0 ends it now).',
    args: {
      id: t.arg({ type: 'UUID' }),
      gracePeriodHours: t.arg.int({ required: false, defaultValue: DEFAULT_ROTATION_GRACE_HOURS }),
    },
    resolve: async (_root, args, ctx) => {
      const p = requireCapability(ctx, 'manage_credentials');
      const graceHours = parseInput(
        z
          .number()
          .int()
          .min(0)
          .max(24 * 30),
        args.gracePeriodHours ?? DEFAULT_ROTATION_GRACE_HOURS,
      );
      const r = await ctx.services.apiKeys.rotate(actorOf(ctx, p), { keyId: args.id, graceHours });
      if (!r) throw notFound(`API key ${args.id}`);
      return r;
    },
  }),
}));
