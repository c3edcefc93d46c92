import type { Logger } from 'pino';
import type pg from 'pg';
import { type Inbox, republishReceived } from './ingest/inbox.ts';
import { onPg } from './db/sql.ts';
import { queueDue, requeuePendingDeliveries } from './outbox/sender/delivery-store.ts';
import { checkFreshness } from './scoring/freshness.ts';
import { markOverdueInvoices } from './ingest/overdue.ts';
import { attributeRequested } from './services/customers.ts';
import { startInboxConsumer } from './ingest/processor.ts';
import type { Queue } from './queue/queue.ts';
import type { ChangeFeed } from './queue/change-feed.ts';
import type { Deliverer } from './outbox/sender/deliverer.ts';
import { tendCircuits } from './outbox/sender/circuit-pass.ts';
import { type CircuitSettings, DEFAULT_CIRCUIT } from './outbox/sender/circuit-breaker.ts';
import { runRetention } from './lifecycle/retention.ts';
import { purgeDueWorkspaces } from './lifecycle/workspace-purge.ts';
import { listenForOutbox, relayOutbox, type DeliveryJob } from './outbox/events/relay.ts';
import { createScoringLoop } from './scoring/drain.ts';
import { createScorer } from './scoring/recompute.ts';
import { emptyBodiesBefore } from './ingest/inbox.ts';
import { customerRows } from './services/customer-rows.ts';

export interface WorkerDeps {
  pool: pg.Pool;
  queue: Queue;
  inbox: Inbox;
  deliverer: Deliverer;
  leaseSeconds?: number;
  /** The endpoints' circuit breakers: an open one with nothing to probe with is looked at again a first wait later. */
  circuit?: CircuitSettings;
  /** For the LISTEN connection that wakes the relay; without it the relay only polls. */
  databaseUrl?: string;
  log: Logger;
  prefetch?: number;
  sweepEveryMs?: number;
  overdueEveryMs?: number;
  /** How often each integration's silence is checked (scoring/freshness.ts). */
  freshnessEveryMs?: number;
  /** How often kept events are attributed to the customers given identities or domains meanwhile (services/customers.ts). */
  attributionEveryMs?: number;
  scoring?: { batchSize: number; concurrency: number; sweepEveryMs: number; leaseSeconds?: number };
  /** Where the relay announces the customer changes it takes from the outbox, for live subscriptions. */
  changes?: ChangeFeed;
  /** Retention and workspace removal (docs/data-lifecycle.md). */
  lifecycle?: { everyMs: number; batchSize: number; maxBatches: number };
}

/** Runs `fn` every `ms`, never overlapping itself; errors are logged and the loop goes on. */
export function every(ms: number, name: string, log: Logger, fn: () => Promise<unknown>) {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  let stopped = false;
  const tick = async () => {
    running = fn().catch((err) => log.error({ err, job: name }, 'background job failed'));
    await running;
    if (!stopped) timer = setTimeout(tick, ms);
  };
  timer = setTimeout(tick, ms);
  return async () => {
    stopped = true;
    clearTimeout(timer);
    await running;
  };
}

/** Runs `fn` so that calls during a run ask for exactly one more run after it, never two at once. */
export function coalesced(name: string, log: Logger, fn: () => Promise<unknown>) {
  let running: Promise<unknown> | null = null;
  let again = false;
  const run = (): Promise<unknown> => {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        await fn();
      } while (again);
    })()
      .catch((err) => log.error({ err, job: name }, 'background job failed'))
      .finally(() => (running = null));
    return running;
  };
  /** Resolves when the run in progress, if any, is over. */
  const settled = () => running ?? Promise.resolve();
  return Object.assign(run, { settled });
}

/** The background side: queue consumers and the scheduled passes. Safe to run in several processes. */
export function startWorker(deps: WorkerDeps) {
  const { pool, queue, log } = deps;
  if (queue.kind === 'memory') {
    // The in-process queue starts empty: whatever it held before a restart is queued again.
    const sql = onPg(pool);
    void requeuePendingDeliveries(sql)
      .then(() => republishReceived(sql))
      .catch((err) => log.error({ err }, 'could not requeue after start'));
  }
  const consumers = [
    startInboxConsumer(pool, queue, { prefetch: deps.prefetch ?? 256, log }),
    // HTTP outcomes are recorded by the deliverer; only infrastructure errors make the job retry.
    queue.consume<DeliveryJob>(
      'outbound.deliveries',
      ({ body }) =>
        deps.deliverer.deliver(body).then(
          () => undefined,
          (err: unknown) => {
            log.warn({ err, deliveryId: body.id }, 'a delivery job failed; it will be retried');
            throw err;
          },
        ),
      {
        prefetch: 64,
        maxAttempts: 10,
      },
    ),
  ];
  // Relay runs are coalesced: a NOTIFY during a run asks for exactly one more run after it.
  const relay = coalesced('outbox-relay', log, async () => {
    while ((await relayOutbox(pool, queue, undefined, deps.changes)) > 0);
  });
  const s = deps.scoring ?? { batchSize: 500, concurrency: 2, sweepEveryMs: 600_000 };
  const scoring = createScoringLoop(pool, createScorer(pool, customerRows.saveScores), {
    batchSize: s.batchSize,
    concurrency: s.concurrency,
    leaseSeconds: s.leaseSeconds ?? 120,
    log,
  });
  const score = coalesced('scoring', log, () => scoring.drain());
  const l = deps.lifecycle ?? { everyMs: 900_000, batchSize: 1000, maxBatches: 500 };
  const lifecycle = async () => {
    const purged = await purgeDueWorkspaces(pool, l);
    if (purged.rows) log.info({ rows: purged.rows, behind: purged.behind }, 'removed rows of workspaces whose deletion is due');
    // The operator's trace beside deleted_workspaces: an id, nothing the workspace held.
    for (const tenantId of purged.workspaces) log.info({ tenantId }, 'workspace deleted');
    const kept = await runRetention(pool, { ...l, emptyInboundBodies: emptyBodiesBefore });
    const done = kept.filter((r) => r.processed > 0 || r.behind);
    if (done.length) log.info({ retention: done }, 'retention pass');
  };
  const stopListening = deps.databaseUrl ? listenForOutbox(deps.databaseUrl, () => void relay(), log) : async () => {};
  const stops = [
    every(deps.sweepEveryMs ?? 5000, 'inbox-sweep', log, () => deps.inbox.sweep()),
    every(deps.overdueEveryMs ?? 60_000, 'invoice-overdue', log, () => markOverdueInvoices(pool)),
    every(deps.freshnessEveryMs ?? 60_000, 'integration-freshness', log, () => checkFreshness(pool)),
    every(deps.attributionEveryMs ?? 1000, 'attribution', log, () => attributeRequested(pool, log)),
    every(1000, 'outbox-relay', log, relay),
    every(1000, 'deliveries-due', log, () => queueDue(pool, queue, { requeueAfterSeconds: deps.leaseSeconds })),
    every(1000, 'circuit-breakers', log, () =>
      tendCircuits(pool, queue, { leaseSeconds: deps.leaseSeconds ?? 60, revisitSeconds: (deps.circuit ?? DEFAULT_CIRCUIT).probeSeconds }),
    ),
    every(l.everyMs, 'retention', log, lifecycle),
    every(1000, 'scoring', log, score),
    every(s.sweepEveryMs, 'scoring-daily', log, () => scoring.daily().then(score)),
  ];
  return {
    async close() {
      await stopListening();
      scoring.stop();
      await Promise.all(consumers.map((c) => c.close()));
      await Promise.all(stops.map((s) => s()));
      await relay.settled();
      await score.settled();
    },
  };
}
