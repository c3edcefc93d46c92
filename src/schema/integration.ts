import { PROVIDERS, type ProviderName } from '../ingest/providers/types.ts';
import { builder } from './builder.ts';
import { Provider } from './enums.ts';
import { requireCapability } from './guards.ts';

interface IntegrationView {
  tenantId: string;
  provider: ProviderName;
  secretSet: boolean;
  verifyTokenSet: boolean;
  previousSecretValidUntil: Date | null;
  lastEvent: { id: string; eventType: string; status: string; receivedAt: Date } | null;
}

const LastEvent = builder.objectRef<NonNullable<IntegrationView['lastEvent']>>('InboundEventSummary').implement({
  fields: (t) => ({
    id: t.field({ type: 'UUID', resolve: (e) => e.id }),
    eventType: t.exposeString('eventType'),
    status: t.exposeString('status', { description: '`received`, `processed`, `ignored` (a type we keep but do not use) or `failed`.' }),
    receivedAt: t.field({ type: 'DateTime', resolve: (e) => e.receivedAt }),
  }),
});

const Integration = builder.objectRef<IntegrationView>('Integration').implement({
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
  }),
});

builder.queryField('integrations', (t) =>
  t.field({
    type: [Integration],
    description: 'One card per provider kind.',
    resolve: async (_root, _args, ctx) => {
      const p = requireCapability(ctx, 'read');
      const [secrets, last] = await Promise.all([
        ctx.prisma.inboundSecret.findMany({
          where: { tenantId: p.tenantId },
          select: { provider: true, verifyToken: true, previousExpiresAt: true },
        }),
        // The newest event per provider in one query.
        ctx.prisma.$queryRaw<{ provider: string; id: string; event_type: string; status: string; received_at: Date }[]>`
          SELECT DISTINCT ON (provider) provider, id, event_type, status::text AS status, received_at
          FROM inbox_events WHERE tenant_id = ${p.tenantId}::uuid ORDER BY provider, received_at DESC`,
      ]);
      return PROVIDERS.map((provider) => {
        const s = secrets.find((x) => x.provider === provider);
        const e = last.find((x) => x.provider === provider);
        return {
          tenantId: p.tenantId,
          provider,
          secretSet: Boolean(s),
          verifyTokenSet: Boolean(s?.verifyToken),
          previousSecretValidUntil: s?.previousExpiresAt && s.previousExpiresAt > new Date() ? s.previousExpiresAt : null,
          lastEvent: e ? { id: e.id, eventType: e.event_type, status: e.status, receivedAt: e.received_at } : null,
        };
      });
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
      const r = await ctx.inboundSecrets.put({
        tenantId: p.tenantId,
        provider: args.provider,
        secret: args.secret,
        verifyToken: args.verifyToken,
      });
      return { provider: args.provider, ...r };
    },
  }),
);
