import type pg from 'pg';
import type { Sessions } from '../auth/sessions.ts';
import type { SecretBox } from '../crypto/secret-box.ts';
import type { Db } from '../db/prisma.ts';
import type { ReadPool } from '../db/read-replica.ts';
import type { Deliverer } from '../outbox/sender/deliverer.ts';
import { type CircuitSettings, DEFAULT_CIRCUIT } from '../outbox/sender/circuit-breaker.ts';
import type { Queue } from '../queue/queue.ts';
import type { Fitter } from '../scoring/fit-runner.ts';
import type { CpuShare } from '../runtime/cpu-share.ts';
import { createAccountService } from './accounts.ts';
import { createAlertService } from './alerts.ts';
import { createApiKeyService } from './api-keys.ts';
import { createAuditService } from './audit.ts';
import { createChurnService } from './churn.ts';
import { batchedReads } from './customer-read-batches.ts';
import { createCustomerReads } from './customer-reads.ts';
import { createCustomerService } from './customers.ts';
import type { EmptyInboundBodies } from './customer-erasure.ts';
import { createCustomerTallies } from './customer-tallies.ts';
import { createHealthChangeService } from './health-changes.ts';
import { createHealthSettingsService } from './health-settings.ts';
import { createIntegrationService } from './integrations.ts';
import { createUsageEventService } from './usage-events.ts';
import { createWebhookDeliveryService } from './webhook-deliveries.ts';
import { createWebhookEndpointService } from './webhook-endpoints.ts';
import { createWebhookEventService } from './webhook-events.ts';
import { createWebhookStatsService } from './webhook-stats.ts';
import { createWorkspaceService } from './workspace.ts';
import { createExportService } from './exports.ts';
import type { PageReader } from './export-pages.ts';

export interface ServiceDeps {
  prisma: Db;
  pool: pg.Pool;
  /** Where the customer list, a customer's health and the counts are read (a replica router); \`pool\` when absent. */
  reads?: ReadPool;
  box: SecretBox;
  queue: Queue;
  /** Test deliveries are attempted at once, by the same deliverer the worker uses. */
  deliverer: Deliverer;
  sessions?: Sessions;
  allowPrivateTargets: boolean;
  /** How long a found inbound secret is remembered; 0 reads it every time. */
  secretCacheMs: number;
  /** Days between an owner's request to delete the workspace and its removal. */
  workspaceDeletionDelayDays: number;
  /** Where churn models are fitted (a thread of their own in the service); in the caller's thread when absent. */
  fitter?: Fitter;
  /** How long a request may wait for a churn training to end before it is answered with the training running. */
  trainingWaitMs?: number;
  /** Told of failures of background work (a churn training) that no request is waiting to be answered with. */
  onError?: (err: unknown, what: string) => void;
  /** The fair share of heavy work among tenants; unmetered when absent. */
  cpuShare?: CpuShare;
  /** Empties an erased customer's raw inbound bodies: the inbox's statement (src/ingest/inbox.ts). */
  emptyInboundBodies: EmptyInboundBodies;
  /** Where export pages are read and written out (threads of their own in the service); on the event loop when absent. */
  exportPages?: PageReader;
  /** The endpoints' circuit breakers, as the deliverer runs them (for the failure rate the API shows). */
  circuit?: CircuitSettings;
}

/** The composition root of the domain: one service per domain, each owning its tables' writes. */
export function createServices(deps: ServiceDeps) {
  const { prisma, pool } = deps;
  // Only plain statements outside transactions go there; writes and what a request reads of its own
  // writes (mutation results, read through Prisma) stay on the primary.
  const reads = (deps.reads ?? pool) as pg.Pool;
  const customerTallies = createCustomerTallies({ pool, reads });
  const webhookEndpoints = createWebhookEndpointService(prisma, deps.box, { allowPrivateTargets: deps.allowPrivateTargets });
  return {
    accounts: createAccountService({ prisma, sessions: deps.sessions }),
    alerts: createAlertService({ pool }),
    apiKeys: createApiKeyService({ prisma }),
    audit: createAuditService({ prisma }),
    churn: createChurnService({
      pool,
      prisma,
      fitter: deps.fitter,
      cpuShare: deps.cpuShare,
      onError: deps.onError,
      trainingWaitMs: deps.trainingWaitMs,
    }),
    customers: createCustomerService({ pool, prisma, tallies: customerTallies, emptyInboundBodies: deps.emptyInboundBodies }),
    customerReads: batchedReads(reads, createCustomerReads(reads, customerTallies)),
    healthChanges: createHealthChangeService({ pool }),
    healthSettings: createHealthSettingsService({ prisma }),
    integrations: createIntegrationService({ prisma, box: deps.box, cacheMs: deps.secretCacheMs }),
    usageEvents: createUsageEventService(pool),
    webhookEndpoints,
    workspace: createWorkspaceService({ pool, deletionDelayDays: deps.workspaceDeletionDelayDays }),
    exports: createExportService({ pool, cpuShare: deps.cpuShare, pages: deps.exportPages }),
    webhookDeliveries: createWebhookDeliveryService({ pool, endpoints: webhookEndpoints, deliverer: deps.deliverer, queue: deps.queue }),
    webhookEvents: createWebhookEventService({ pool }),
    webhookStats: createWebhookStatsService({ pool, circuit: deps.circuit ?? DEFAULT_CIRCUIT }),
  };
}

export type Services = ReturnType<typeof createServices>;
