import type pg from 'pg';
import type { SecretBox } from '../../crypto/secret-box.ts';
import type { CircuitSettings } from './circuit-breaker.ts';
import { createDeliverer } from './deliverer.ts';
import { createSender, DELIVERY_TIMEOUT_MS } from './http-send.ts';

/** The outbound delivery parts, built once per process and shared by the API (Test, resend) and the worker. */
export function createOutbound(deps: {
  /** For the deliverer's bookkeeping, which may commit asynchronously (see `createDeliveryStore`). */
  deliveryPool: pg.Pool;
  box: SecretBox;
  allowPrivateTargets: boolean;
  timeoutMs?: number;
  /** Extra trusted CAs for receivers (tests); production uses NODE_EXTRA_CA_CERTS. */
  ca?: string | Buffer;
  leaseSeconds?: number;
  perEndpointConcurrency?: number;
  perTenantConcurrency?: number;
  circuit?: CircuitSettings;
  onError?: (err: unknown, what: string) => void;
}) {
  const sender = createSender({ allowPrivateTargets: deps.allowPrivateTargets, timeoutMs: deps.timeoutMs, ca: deps.ca });
  const deliverer = createDeliverer({
    slowMs: (deps.timeoutMs ?? DELIVERY_TIMEOUT_MS) / 3,
    pool: deps.deliveryPool,
    box: deps.box,
    sender,
    leaseSeconds: deps.leaseSeconds,
    perEndpointConcurrency: deps.perEndpointConcurrency,
    perTenantConcurrency: deps.perTenantConcurrency,
    circuit: deps.circuit,
    onError: deps.onError,
  });
  return { sender, deliverer, close: () => sender.close() };
}

export type Outbound = ReturnType<typeof createOutbound>;
