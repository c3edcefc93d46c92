import type { Principal } from '../auth/principal.ts';
import { DomainError } from '../errors.ts';
import type { Customer as CustomerRow } from '../generated/prisma/client.ts';
import { CUSTOMER_CHANGE_EVENTS } from '../outbox/events/registry.ts';
import type { CustomerChangeMessage } from '../queue/change-feed.ts';
import { builder } from './builder.ts';
import type { Context } from './context.ts';
import { plainRead } from './customer.ts';
import { requireCapability, stillMay } from './guards.ts';

/** How each event that changes a customer is named to subscribers. */
const KIND_OF = {
  'customer.health_changed': 'health_changed',
  'churn_prediction.updated': 'churn_prediction_updated',
  'alert.created': 'alert_created',
  'alert.resolved': 'alert_resolved',
} as const satisfies Record<(typeof CUSTOMER_CHANGE_EVENTS)[number], string>;
type Kind = (typeof KIND_OF)[keyof typeof KIND_OF];

const CustomerChangeKind = builder.enumType('CustomerChangeKind', {
  description: 'What changed: the health score or status, the churn prediction, or an alert raised or resolved.',
  values: Object.values(KIND_OF),
});

/** The principal's access ended while its subscription ran: the last thing the stream says. */
const ENDED = Symbol('ended');
type Delivered = CustomerChangeMessage | typeof ENDED;

const CustomerChange = builder.objectRef<CustomerChangeMessage>('CustomerChange').implement({
  description: 'A committed change to one of the workspace’s customers.',
  fields: (t) => ({
    id: t.expose('id', {
      type: 'UUID',
      description: 'The change’s own id: the same change seen twice (after reconnecting) has the same id.',
    }),
    kind: t.field({ type: CustomerChangeKind, resolve: (c) => KIND_OF[c.type as keyof typeof KIND_OF] as Kind }),
    customerId: t.expose('customerId', { type: 'UUID' }),
    occurredAt: t.expose('occurredAt', { type: 'DateTime', description: 'When the change was committed.' }),
    customer: t.prismaField({
      type: 'Customer',
      nullable: true,
      description: 'The customer as it is when this change is sent (a later change may already show); null once erased.',
      resolve: async (query, change, _args, ctx) => {
        const p = requireCapability(ctx, 'read');
        const plain = plainRead(query);
        return plain
          ? ((await ctx.services.customerReads.one(p.tenantId, change.customerId, plain)) as unknown as CustomerRow | null)
          : ctx.prisma.customer.findFirst({ ...query, where: { id: change.customerId, tenantId: p.tenantId } });
      },
    }),
  }),
});

builder.subscriptionType({});

builder.subscriptionFields((t) => ({
  customerChanged: t.field({
    type: CustomerChange,
    description:
      'The workspace’s customer changes (health, churn prediction, alerts) as they are committed, over server-sent events at /graphql/stream. ' +
      'Changes made while a client is not connected are not replayed: read the current state after (re)connecting. ' +
      'The stream ends with an `invalid_credentials` error when the session is signed out or revoked, or the API key revoked.',
    args: { customerId: t.arg({ type: 'UUID', required: false, description: 'Only this customer’s changes.' }) },
    subscribe: (_root, args, ctx) => {
      const p = requireCapability(ctx, 'read');
      const changes = ctx.live.changes.subscribe(p.tenantId);
      const mine = args.customerId ? onlyCustomer(changes, args.customerId.toLowerCase()) : changes;
      return whileAllowed(mine, () => stillAllowed(ctx, p), ctx.live.recheckMs);
    },
    resolve: (change: Delivered) => {
      if (change === ENDED)
        throw new DomainError('invalid_credentials', 'Your access ended (signed out, revoked or expired); the subscription has ended.');
      return change;
    },
  }),
}));

async function stillAllowed(ctx: Context, then: Principal): Promise<boolean> {
  if (!ctx.reauthenticate) return true;
  try {
    return stillMay(then, await ctx.reauthenticate(), 'read');
  } catch (e) {
    if (e instanceof DomainError) return false;
    // The credential could not be checked (the database is away): the stream goes on until it can be.
    ctx.log.warn({ err: e }, 'could not check a subscriber’s credential again');
    return true;
  }
}

async function* onlyCustomer(source: AsyncIterableIterator<CustomerChangeMessage>, customerId: string) {
  try {
    for await (const c of source) if (c.customerId === customerId) yield c;
  } finally {
    await source.return?.();
  }
}

/**
 * The source's values while `allowed` says yes, asked every `everyMs`; once it says no, ENDED and then the end.
 * Racing each wait for a value with the check ends an idle stream as soon as one that speaks.
 */
function whileAllowed(
  source: AsyncIterator<CustomerChangeMessage>,
  allowed: () => Promise<boolean>,
  everyMs: number,
): AsyncIterableIterator<Delivered> {
  let state: 'open' | 'ending' | 'done' = 'open';
  let revoke!: () => void;
  const revoked = new Promise<typeof ENDED>((resolve) => (revoke = () => resolve(ENDED)));
  const timer = setInterval(() => {
    void allowed().then((ok) => {
      if (!ok && state === 'open') {
        state = 'ending';
        revoke();
      }
    });
  }, everyMs);
  timer.unref();
  const finish = async (): Promise<IteratorResult<Delivered>> => {
    state = 'done';
    clearInterval(timer);
    await source.return?.();
    return { done: true, value: undefined };
  };
  return {
    async next() {
      if (state === 'done') return { done: true, value: undefined };
      if (state === 'ending') {
        void finish();
        return { done: false, value: ENDED };
      }
      const got = await Promise.race([source.next(), revoked]);
      if (got === ENDED) return this.next();
      if (got.done) return finish();
      return got;
    },
    return: finish,
    async throw(e: unknown) {
      await finish();
      throw e;
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
