import type pg from 'pg';
import type { SecretBox } from '../crypto/secret-box.ts';
import type { Db } from '../db/prisma.ts';
import type { Queue } from '../queue/queue.ts';
import { createDeliverer } from './deliverer.ts';
import { createEndpointStore } from './endpoints.ts';
import { createSender } from './http-send.ts';
import { createWebhookService } from './service.ts';

/** The outbound side's parts, built once per process and shared by the API (Test, resend) and the worker. */
export function createOutbound(deps: {
  prisma: Db;
  pool: pg.Pool;
  /** For the deliverer's bookkeeping, which may commit asynchronously (see `createDeliveryStore`). */
  deliveryPool: pg.Pool;
  box: SecretBox;
  queue: Queue;
  allowPrivateTargets: boolean;
  timeoutMs?: number;
  /** Extra trusted CAs for receivers (tests); production uses NODE_EXTRA_CA_CERTS. */
  ca?: string | Buffer;
  leaseSeconds?: number;
  perEndpointConcurrency?: number;
}) {
  const sender = createSender({ allowPrivateTargets: deps.allowPrivateTargets, timeoutMs: deps.timeoutMs, ca: deps.ca });
  const deliverer = createDeliverer({
    pool: deps.deliveryPool,
    box: deps.box,
    sender,
    leaseSeconds: deps.leaseSeconds,
    perEndpointConcurrency: deps.perEndpointConcurrency,
  });
  const endpoints = createEndpointStore(deps.prisma, deps.box, { allowPrivateTargets: deps.allowPrivateTargets });
  const service = createWebhookService({ pool: deps.pool, endpoints, deliverer, queue: deps.queue });
  return { sender, deliverer, endpoints, service, close: () => sender.close() };
}

export type Outbound = ReturnType<typeof createOutbound>;
