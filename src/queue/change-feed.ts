import { createRedisEventTarget } from '@graphql-yoga/redis-event-target';
import { createPubSub } from '@graphql-yoga/subscription';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';

/** A committed change to one of a tenant's customers, as the live feed carries it: ids and kind, never the data. */
export interface CustomerChangeMessage {
  /** The outbox event's id: a client seeing it twice (two tabs, a reconnect) can tell. */
  id: string;
  /** The outbox event's type (customer.health_changed, churn_prediction.updated, alert.created, …). */
  type: string;
  customerId: string;
  /** When the change was committed, ISO 8601. */
  occurredAt: string;
}

/**
 * Tells every API process of the changes the relay has taken from the outbox, one channel per tenant, so a
 * subscriber only ever hears its own tenant's. Best effort by design: a message lost while Redis is away is
 * not replayed, and a client that reconnects reads the current state again.
 */
export interface ChangeFeed {
  publish(tenantId: string, changes: CustomerChangeMessage[]): void;
  /** The tenant's changes from now on, until the iterator is returned. */
  subscribe(tenantId: string): AsyncIterableIterator<CustomerChangeMessage>;
  close(): Promise<void>;
}

/** Yoga's pub/sub names a tenant's topic `<routing key>:<tenant>`; with Redis that is the tenant's channel. */
const ROUTING_KEY = 'chs:live:customers';
type Topics = { [ROUTING_KEY]: [tenantId: string, change: CustomerChangeMessage] };

/**
 * One process's feed: API and worker in one process (no REDIS_URL) hear each other in memory; with Redis,
 * each process publishes to the tenant's channel and subscribes to it while a client of that tenant listens.
 */
export function createChangeFeed(opts: { redisUrl?: string; log: Logger }): ChangeFeed {
  if (!opts.redisUrl) {
    const pubsub = createPubSub<Topics>();
    return {
      publish: (tenantId, changes) => {
        for (const c of changes) pubsub.publish(ROUTING_KEY, tenantId, c);
      },
      subscribe: (tenantId) => pubsub.subscribe(ROUTING_KEY, tenantId),
      close: async () => {},
    };
  }
  // Connected at the first use: a process that never publishes nor subscribes (the CLI) opens nothing.
  let redis: { publisher: Redis; subscriber: Redis; pubsub: ReturnType<typeof createPubSub<Topics>> } | undefined;
  const log = (err: unknown) => opts.log.warn({ err }, 'redis unavailable for live changes');
  const open = () => {
    if (redis) return redis;
    // A connection in subscriber mode can do nothing else, so publishing has one of its own. A change
    // published while Redis is away is dropped after one reconnection attempt; the subscriber waits for Redis
    // and subscribes again to its channels when it is back.
    const publisher = new Redis(opts.redisUrl!, { maxRetriesPerRequest: 1 });
    const subscriber = new Redis(opts.redisUrl!, { maxRetriesPerRequest: null });
    publisher.on('error', log);
    subscriber.on('error', log);
    // Publishing goes straight to Redis, each failure logged; the event target only subscribes.
    const pubsub = createPubSub<Topics>({ eventTarget: createRedisEventTarget({ publishClient: publisher, subscribeClient: subscriber }) });
    return (redis = { publisher, subscriber, pubsub });
  };
  return {
    publish(tenantId, changes) {
      const { publisher } = open();
      for (const c of changes) publisher.publish(`${ROUTING_KEY}:${tenantId}`, JSON.stringify(c)).catch(log);
    },
    subscribe: (tenantId) => open().pubsub.subscribe(ROUTING_KEY, tenantId),
    async close() {
      redis?.publisher.disconnect();
      redis?.subscriber.disconnect();
    },
  };
}
