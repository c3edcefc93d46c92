import type { Logger } from 'pino';
import type pg from 'pg';
import type { Inbox } from './ingest/inbox.ts';
import { markOverdueInvoices } from './ingest/overdue.ts';
import { startInboxConsumer } from './ingest/processor.ts';
import type { Queue } from './queue/queue.ts';

export interface WorkerDeps {
  pool: pg.Pool;
  queue: Queue;
  inbox: Inbox;
  log: Logger;
  prefetch?: number;
  sweepEveryMs?: number;
  overdueEveryMs?: number;
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

/** The background side: queue consumers and the scheduled passes. Safe to run in several processes. */
export function startWorker(deps: WorkerDeps) {
  const consumer = startInboxConsumer(deps.pool, deps.queue, { prefetch: deps.prefetch ?? 16, log: deps.log });
  const stops = [
    every(deps.sweepEveryMs ?? 5000, 'inbox-sweep', deps.log, () => deps.inbox.sweep()),
    every(deps.overdueEveryMs ?? 60_000, 'invoice-overdue', deps.log, () => markOverdueInvoices(deps.pool)),
  ];
  return {
    async close() {
      await consumer.close();
      await Promise.all(stops.map((s) => s()));
    },
  };
}
