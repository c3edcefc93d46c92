import { PROVIDERS } from '../contract/enums.ts';
import { KIND_LABELS, type SignalKind } from '../scoring/signal-kinds.ts';
import { builder } from './builder.ts';

// What a customer did or what happened to it, as recorded from providers and the events API.
const Signal = builder.prismaObject('Signal', {
  description: 'One recorded observation about a customer: a provider event or a product event.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    source: t.exposeString('source', { description: `${PROVIDERS.join(', ')} or api.` }),
    kind: t.exposeString('kind'),
    label: t.string({ description: 'The kind, for people.', resolve: (s) => KIND_LABELS[s.kind as SignalKind] ?? s.kind }),
    occurredAt: t.expose('occurredAt', { type: 'DateTime' }),
    value: t.exposeFloat('value'),
    sentiment: t.exposeFloat('sentiment', { nullable: true, description: '-1 to 1 where the event carries text.' }),
    attributes: t.expose('attributes', { type: 'JSON' }),
  }),
});

builder.prismaObjectField('Customer', 'recentEvents', (t) =>
  t.relation('signals', {
    description: 'The customer’s latest events, newest first.',
    args: { first: t.arg.int({ required: false, description: '1 to 100 (default 20).' }) },
    query: (args) => ({ orderBy: [{ occurredAt: 'desc' }, { id: 'desc' }], take: Math.min(100, Math.max(1, args.first ?? 20)) }),
    type: Signal,
  }),
);
