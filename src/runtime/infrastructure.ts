// The stored secrets' key and the queue a process runs on, chosen from its configuration.
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { createSecretBox, parseEncryptionKeys, type SecretBox } from '../crypto/secret-box.ts';
import { loadLocalSecrets } from '../db/local-secrets.ts';
import { createMemoryQueue } from '../queue/memory.ts';
import type { Queue } from '../queue/queue.ts';
import { createRabbitQueue } from '../queue/rabbitmq.ts';

/** The key for stored secrets: configured, or (outside production) generated once under the data directory. */
export function secretBoxFor(config: Config): SecretBox {
  return createSecretBox(parseEncryptionKeys(config.encryptionKey ?? loadLocalSecrets(config.dataDir).encryptionKey));
}

/** RabbitMQ when AMQP_URL is set; otherwise the in-process queue (one process runs API and worker). */
export function queueFor(config: Config, log: Logger): Queue {
  return config.amqp.url ? createRabbitQueue(config.amqp.url, log, config.amqp.prefix) : createMemoryQueue();
}
