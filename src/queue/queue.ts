/** Work that must not be lost: each topic is a durable queue with delayed retries and a dead-letter park. */
export type Topic = 'inbound.events' | 'outbound.deliveries';

export interface Delivery<T> {
  body: T;
  /** 1 on first delivery, then 2, 3, … after each failed attempt. */
  attempt: number;
}

export interface ConsumeOptions {
  /** Messages worked on at once by this consumer. */
  prefetch: number;
  /** After this many failed attempts the message is parked in `<topic>.dead` and onDead is called. */
  maxAttempts: number;
  onDead?: (body: unknown, error: unknown) => Promise<void>;
}

export interface Consumer {
  close(): Promise<void>;
}

export interface Queue {
  readonly kind: 'rabbitmq' | 'memory';
  /** False while the broker is known to be unreachable (no connection); publishing would only wait. */
  connected(): boolean;
  /** Resolves once the message is durable (publisher confirm); rejects on failure or after timeoutMs. */
  publish(topic: Topic, body: object, opts?: { messageId?: string; timeoutMs?: number }): Promise<void>;
  /** The handler resolving acks the message; throwing schedules a retry. */
  consume<T>(topic: Topic, handler: (d: Delivery<T>) => Promise<void>, opts: ConsumeOptions): Consumer;
  /** Messages waiting (ready) in a topic's queue, for tests, health and back-pressure. */
  depth(topic: Topic): Promise<number>;
  close(): Promise<void>;
}
