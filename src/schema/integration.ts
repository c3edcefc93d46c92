import { PROVIDERS, type ProviderName } from '../contract/enums.ts';
import type { IntegrationCard } from '../services/integrations.ts';
import { builder } from './builder.ts';
import { Provider } from './enums.ts';
import { actorOf, requireCapability } from './guards.ts';

const LastEvent = builder.objectRef<NonNullable<IntegrationCard['lastEvent']>>('InboundEventSummary').implement({
  fields: (t) => ({
    id: t.field({ type: 'UUID', resolve: (e) => e.id }),
    eventType: t.exposeString('eventType'),
    status: t.exposeString('status', { description: '`received`, `processed`, `ignored` (a type we keep but do not use) or `failed`.' }),
    receivedAt: t.field({ type: 'DateTime', resolve: (e) => e.receivedAt }),
  }),
});

const Freshness = builder.objectRef<NonNullable<IntegrationCard['freshness']>>('IntegrationFreshness').implement({
  description:
    'How fresh the provider’s events are. Its usual cadence is learned from its own last 14 days: it is silent once nothing has come for three times its longest usual wait (at least an hour).',
  fields: (t) => ({
    lastEventAt: t.field({ type: 'DateTime', nullable: true, resolve: (f) => f.lastEventAt }),
    usualGapSeconds: t.exposeFloat('usualGapSeconds', {
      nullable: true,
      description: 'The longest wait between its events over the last 14 days; null until it has been heard on 3 days and 10 events.',
    }),
    silentAfterSeconds: t.exposeFloat('silentAfterSeconds', { nullable: true, description: 'How long a quiet spell makes it silent.' }),
    silent: t.boolean({ resolve: (f) => f.silentSince !== null }),
    silentSince: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When its silence was flagged; the dimensions it feeds are stale on its customers’ health meanwhile.',
      resolve: (f) => f.silentSince,
    }),
  }),
});

const Integration = builder.objectRef<IntegrationCard>('Integration').implement({
  description: 'A provider card: where the provider posts, whether a signing secret exists, and the last event.',
  fields: (t) => ({
    provider: t.field({ type: Provider, resolve: (i) => i.provider }),
    inboundPath: t.string({
      description: 'Append to the service base URL.',
      resolve: (i) => `/api/v1/webhooks/in/${i.provider}/${i.tenantId}`,
    }),
    secretSet: t.exposeBoolean('secretSet'),
    verifyTokenSet: t.exposeBoolean('verifyTokenSet', { description: 'Meta only: the hub.verify_token for the subscription handshake.' }),
    previousSecretValidUntil: t.field({ type: 'DateTime', nullable: true, resolve: (i) => i.previousSecretValidUntil }),
    lastEvent: t.field({ type: LastEvent, nullable: true, resolve: (i) => i.lastEvent }),
    freshness: t.field({
      type: Freshness,
      nullable: true,
      description: 'Null until the provider is connected and checked.',
      resolve: (i) => i.freshness,
    }),
  }),
});

builder.queryField('integrations', (t) =>
  t.field({
    type: [Integration],
    description: 'One card per provider kind.',
    resolve: async (_root, _args, ctx) => {
      return ctx.services.integrations.cards(requireCapability(ctx, 'read').tenantId);
    },
  }),
);

const InboundSecret = builder.objectRef<{ provider: ProviderName; secret: string; rotated: boolean }>('InboundSecret').implement({
  description: 'The signing secret, shown this once. Paste it into the provider’s webhook settings.',
  fields: (t) => ({
    provider: t.field({ type: Provider, resolve: (s) => s.provider }),
    secret: t.exposeString('secret'),
    rotated: t.exposeBoolean('rotated', { description: 'True when it replaced a secret, which keeps verifying for 24 hours.' }),
  }),
});

builder.mutationField('setInboundSecret', (t) =>
  t.field({
    type: InboundSecret,
    description:
      'Generates a signing secret for a provider, or sets the one the provider gave you (`secret`). An existing secret is rotated: it keeps verifying for 24 hours. For Discord, pass the application public key; for Meta, also a `verifyToken`.',
    args: {
      provider: t.arg({ type: Provider }),
      secret: t.arg.string({ required: false }),
      verifyToken: t.arg.string({ required: false }),
    },
    resolve: async (_root, args, ctx) => {
      const p = requireCapability(ctx, 'manage_credentials');
      const r = await ctx.services.integrations.secrets.put(
        {
          tenantId: p.tenantId,
          provider: args.provider,
          secret: args.secret,
          verifyToken: args.verifyToken,
        },
        actorOf(ctx, p),
      );
      return { provider: args.provider, ...r };
    },
  }),
);

const SilentIntegration = builder.objectRef<{ provider: ProviderName; silentSince: Date }>('SilentIntegration').implement({
  description: 'A provider that has gone silent: the dimensions it feeds are stale on the workspace’s customers’ health.',
  fields: (t) => ({
    provider: t.field({ type: Provider, resolve: (s) => s.provider }),
    silentSince: t.field({ type: 'DateTime', resolve: (s) => s.silentSince }),
  }),
});

builder.prismaObjectField('Tenant', 'silentIntegrations', (t) =>
  t.field({
    type: [SilentIntegration],
    description: 'The providers silent now, for a notice on every screen; `integrations { freshness }` has the detail.',
    select: { integrationFreshness: { where: { silentSince: { not: null } }, select: { provider: true, silentSince: true } } },
    resolve: (tenant) =>
      tenant.integrationFreshness
        .filter((f) => (PROVIDERS as readonly string[]).includes(f.provider))
        .map((f) => ({ provider: f.provider as ProviderName, silentSince: f.silentSince! })),
  }),
);
