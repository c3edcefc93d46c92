import { consumedInSpan, messageHeaders } from '../runtime/trace-context.ts';
import type { ConsumeOptions, Consumer, Delivery, Queue, Topic } from './queue.ts';

interface Item {
  body: unknown;
  attempt: number;
  /** The publishing trace, as a broker's message headers carry it. */
  headers: Record<string, string>;
}

/**
 * The in-process queue used when no AMQP_URL is given (the embedded default): the same contract as
 * RabbitMQ — prefetch, delayed retries, a dead-letter park — but held in memory. What it holds is
 * re-published from the database after a restart, because the inbox and outbox stay the record.
 */
export function createMemoryQueue(opts: { retryDelayMs?: number } = {}): Queue {
  const retryDelayMs = opts.retryDelayMs ?? 500;
  const ready = new Map<Topic, Item[]>();
  const dead = new Map<Topic, Item[]>();
  const wakers = new Map<Topic, Set<() => void>>();
  const timers = new Set<NodeJS.Timeout>();
  let closed = false;

  const list = <K>(m: Map<Topic, K[]>, t: Topic) => m.get(t) ?? (m.set(t, []), m.get(t)!);
  const wake = (t: Topic) => {
    for (const w of wakers.get(t) ?? []) w();
  };

  return {
    kind: 'memory',
    connected: () => !closed,
    async publish(topic, body) {
      if (closed) throw new Error('queue is closed');
      // Copy, as a broker would: later changes to the caller's object must not leak in.
      list(ready, topic).push({ body: JSON.parse(JSON.stringify(body)), attempt: 1, headers: messageHeaders() });
      wake(topic);
    },
    consume<T>(topic: Topic, handler: (d: Delivery<T>) => Promise<void>, o: ConsumeOptions): Consumer {
      let active = 0;
      let stopped = false;
      const inflight = new Set<Promise<void>>();
      const pump = () => {
        const q = list(ready, topic);
        while (!stopped && active < o.prefetch && q.length > 0) {
          const item = q.shift()!;
          active++;
          const p = (async () => {
            try {
              await consumedInSpan('memory', topic, item.headers, item.attempt, () =>
                handler({ body: item.body as T, attempt: item.attempt }),
              );
            } catch (error) {
              if (item.attempt >= o.maxAttempts) {
                list(dead, topic).push(item);
                await o.onDead?.(item.body, error).catch(() => {});
              } else {
                const timer = setTimeout(() => {
                  timers.delete(timer);
                  list(ready, topic).push({ body: item.body, attempt: item.attempt + 1, headers: item.headers });
                  wake(topic);
                }, retryDelayMs);
                timers.add(timer);
              }
            } finally {
              active--;
              setImmediate(pump);
            }
          })();
          inflight.add(p);
          void p.finally(() => inflight.delete(p));
        }
      };
      const set = wakers.get(topic) ?? (wakers.set(topic, new Set()), wakers.get(topic)!);
      set.add(pump);
      setImmediate(pump);
      return {
        close: async () => {
          stopped = true;
          set.delete(pump);
          await Promise.allSettled([...inflight]);
        },
      };
    },
    async depth(topic) {
      return list(ready, topic).length;
    },
    async close() {
      closed = true;
      for (const t of timers) clearTimeout(t);
    },
  };
}
