import { builder } from './builder.ts';
import { requireCapability } from './guards.ts';

const UsageEventInput = builder.inputType('UsageEventInput', {
  description: 'One product usage event; give exactly one of customerId and externalId.',
  fields: (t) => ({
    // Strings, not UUIDs: in a batch one bad id is that item's error, not the whole request's.
    customerId: t.string({ required: false }),
    externalId: t.string({ required: false, description: "The customer's own id in the tenant's system." }),
    event: t.string({ required: false, description: 'e.g. report.exported (required; checked per event)' }),
    timestamp: t.string({ required: false, description: 'ISO 8601; default now; at most 90 days old and 5 minutes ahead.' }),
    properties: t.field({ type: 'JSON', required: false }),
    userId: t.string({ required: false }),
  }),
});

const ItemError = builder.objectRef<{ index: number; code: string; message: string }>('UsageEventError').implement({
  fields: (t) => ({ index: t.exposeInt('index'), code: t.exposeString('code'), message: t.exposeString('message') }),
});

const Result = builder
  .objectRef<{ accepted: number; errors: { index: number; code: string; message: string }[] }>('UsageEventsResult')
  .implement({
    fields: (t) => ({ accepted: t.exposeInt('accepted'), errors: t.field({ type: [ItemError], resolve: (r) => r.errors }) }),
  });

builder.mutationField('recordUsageEvents', (t) =>
  t.field({
    type: Result,
    description: 'Records 1 to 500 product usage events; valid ones are kept, the rest listed by index.',
    args: { events: t.arg({ type: [UsageEventInput] }), idempotencyKey: t.arg.string({ required: false }) },
    resolve: (_r, args, ctx) => {
      const p = requireCapability(ctx, 'write');
      return ctx.services.usageEvents.record(p.tenantId, args.events, { idempotencyKey: args.idempotencyKey });
    },
  }),
);
