import { Connection, ConsumerStatus, type Publisher } from 'rabbitmq-client';
import { consumedInSpan, messageHeaders } from '../runtime/trace-context.ts';
import type { ConsumeOptions, Consumer, Delivery, Queue, Topic } from './queue.ts';

const RETRY_DELAY_MS = 2000;

/**
 * The topology each topic gets, declared by the app at start and again on every reconnect:
 *   exchange <prefix>.<topic> (direct) → queue <prefix>.<topic>     (durable; rejects dead-letter to ↓)
 *   exchange <prefix>.<topic>.retry → queue <prefix>.<topic>.retry     (TTL 2 s; dead-letters back to ↑)
 *   exchange <prefix>.<topic>.dead  → queue <prefix>.<topic>.dead      (parked after maxAttempts)
 */
function topology(prefix: string, topic: Topic) {
  const main = `${prefix}.${topic}`;
  return {
    main,
    exchanges: [
      { exchange: main, type: 'direct', durable: true },
      { exchange: `${main}.retry`, type: 'direct', durable: true },
      { exchange: `${main}.dead`, type: 'direct', durable: true },
    ],
    queues: [
      { queue: main, durable: true, arguments: { 'x-dead-letter-exchange': `${main}.retry` } },
      { queue: `${main}.retry`, durable: true, arguments: { 'x-message-ttl': RETRY_DELAY_MS, 'x-dead-letter-exchange': main } },
      { queue: `${main}.dead`, durable: true },
    ],
    queueBindings: [
      { queue: main, exchange: main, routingKey: topic },
      { queue: `${main}.retry`, exchange: `${main}.retry`, routingKey: topic },
      { queue: `${main}.dead`, exchange: `${main}.dead`, routingKey: topic },
    ],
  };
}

function attemptOf(headers: Record<string, unknown> | undefined, queue: string): number {
  const deaths = (headers?.['x-death'] as { queue?: string; reason?: string; count?: number }[] | undefined) ?? [];
  const rejected = deaths.find((d) => d.queue === queue && d.reason === 'rejected');
  return 1 + Number(rejected?.count ?? 0);
}

export function createRabbitQueue(
  url: string,
  log: { warn: (o: object, m: string) => void; info: (o: object, m: string) => void },
  prefix = 'chs',
): Queue {
  const connection = new Connection({
    url,
    connectionName: 'customer-health-service',
    retryLow: 250,
    retryHigh: 5000,
    acquireTimeout: 5000,
  });
  connection.on('error', (err) => log.warn({ err }, 'rabbitmq connection error'));
  connection.on('connection', () => log.info({}, 'rabbitmq connected'));

  const allTopics: Topic[] = ['inbound.events', 'outbound.deliveries'];
  const t = allTopics.map((topic) => topology(prefix, topic));
  const publisher: Publisher = connection.createPublisher({
    confirm: true,
    maxAttempts: 2,
    exchanges: t.flatMap((x) => x.exchanges),
    queues: t.flatMap((x) => x.queues),
    queueBindings: t.flatMap((x) => x.queueBindings),
  });
  const consumers = new Set<{ close: () => Promise<void> }>();

  return {
    kind: 'rabbitmq',
    connected: () => connection.ready,
    async publish(topic, body, opts = {}) {
      const send = publisher.send(
        {
          exchange: `${prefix}.${topic}`,
          routingKey: topic,
          durable: true,
          messageId: opts.messageId,
          contentType: 'application/json',
          // The publishing trace (W3C traceparent) travels with the message; the consumer continues it.
          headers: messageHeaders(),
        },
        body,
      );
      if (!opts.timeoutMs) return send;
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`publish to ${topic} not confirmed within ${opts.timeoutMs} ms`)), opts.timeoutMs);
      });
      // A send that loses the race may still land later: consumers are idempotent.
      send.catch(() => {});
      try {
        await Promise.race([send, timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
    consume<T>(topic: Topic, handler: (d: Delivery<T>) => Promise<void>, opts: ConsumeOptions): Consumer {
      const { main } = topology(prefix, topic);
      const sub = connection.createConsumer(
        {
          queue: main,
          queueOptions: { durable: true, arguments: { 'x-dead-letter-exchange': `${main}.retry` } },
          qos: { prefetchCount: opts.prefetch },
          requeue: false,
        },
        async (msg) => {
          const attempt = attemptOf(msg.headers, main);
          try {
            await consumedInSpan('rabbitmq', topic, msg.headers, attempt, () => handler({ body: msg.body as T, attempt }));
            return ConsumerStatus.ACK;
          } catch (error) {
            if (attempt >= opts.maxAttempts) {
              await publisher.send(
                { exchange: `${main}.dead`, routingKey: topic, durable: true, headers: { 'x-error': String(error).slice(0, 500) } },
                msg.body,
              );
              await opts.onDead?.(msg.body, error);
              return ConsumerStatus.ACK;
            }
            // Rejected messages wait in the retry queue, then come back.
            return ConsumerStatus.DROP;
          }
        },
      );
      sub.on('error', (err) => log.warn({ err, topic }, 'rabbitmq consumer error'));
      const c = { close: () => sub.close() };
      consumers.add(c);
      return {
        close: async () => {
          consumers.delete(c);
          await sub.close();
        },
      };
    },
    async depth(topic) {
      const ch = await connection.acquire();
      try {
        const ok = await ch.queueDeclare({ queue: `${prefix}.${topic}`, passive: true });
        return ok.messageCount;
      } finally {
        await ch.close();
      }
    },
    async close() {
      await Promise.all([...consumers].map((c) => c.close()));
      await publisher.close();
      await connection.close();
    },
  };
}
