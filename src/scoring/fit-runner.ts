import type { Worker } from 'node:worker_threads';
import { DomainError } from '../errors.ts';
import { type CpuShare, unmetered } from '../runtime/cpu-share.ts';
import { createPaceCells, type Pacer, paceThread } from '../runtime/thread-pace.ts';
import { startThread, threadEntry } from '../runtime/threads.ts';
import { type FitInput, type FitOutcome, fitTenantModel } from './tenant-fit.ts';

/** Fits a tenant's churn model: the arithmetic of training, seconds of CPU for thousands of labels. */
export type Fitter = (tenantId: string, input: FitInput) => Promise<FitOutcome>;

/** In the caller's thread: for the command line and the evaluation, where nothing else waits on it. */
export const fitHere: Fitter = async (_tenantId, input) => fitTenantModel(input);

/**
 * Fits on a thread of its own, one model at a time, so training never holds up the requests the process
 * is serving. A tenant has at most one training under way (another is a 409 until it ends), and at most
 * `maxTenants` tenants wait for the thread at once (more is a 503): a burst of training requests costs
 * one thread's time, in turn, not the API's.
 *
 * The thread's time is still the machine's: a fit is charged to its tenant's CPU share as it runs, and held
 * between its steps while its tenant is past that share and another tenant is served (runtime/thread-pace.ts),
 * as an export's pages are; never while another workspace's fit waits behind it for the thread.
 */
export function createThreadFitter(opts: { maxTenants?: number; cpuShare?: CpuShare } = {}): Fitter & { close(): Promise<void> } {
  const maxTenants = opts.maxTenants ?? 8;
  const share = opts.cpuShare ?? unmetered;
  const training = new Set<string>();
  // In the order posted, which is the order the thread fits them: the first is the one running.
  const pending = new Map<number, { tenantId: string; resolve: (o: FitOutcome) => void; reject: (e: Error) => void }>();
  let worker: Worker | undefined;
  let next = 0;
  const cells = createPaceCells();
  let pacer: Pacer | undefined;
  // The thread's time goes to the fit at the head of the queue. It is held only while no other fit (of
  // another tenant: one per tenant) waits behind it, since that tenant is served by its going on.
  const charge = (ms: number) => {
    const head = pending.values().next().value;
    return head !== undefined && share.account(head.tenantId, ms) && pending.size === 1;
  };
  /** Called as the head of the queue changes: what the thread spent goes to the fit that was the head. */
  const headChanging = () => pacer?.flush();
  const paced = () => {
    if (pending.size > 0) pacer ??= paceThread(cells, charge);
    else {
      pacer?.stop();
      pacer = undefined;
    }
  };

  // A thread that failed fails what it was given, once: its 'exit' after an 'error', or after a newer thread
  // was started, must not touch the newer thread's work.
  const failAll = (w: Worker, e: Error) => {
    if (worker !== w) return;
    headChanging();
    for (const p of pending.values()) p.reject(e);
    pending.clear();
    paced();
    worker = undefined;
  };
  const start = () => {
    const w = startThread(threadEntry(import.meta.url, 'fit-thread'), { pace: cells });
    w.unref();
    w.on('message', ({ id, outcome, error }: { id: number; outcome?: FitOutcome; error?: string }) => {
      const p = pending.get(id);
      headChanging();
      pending.delete(id);
      paced();
      if (error !== undefined) p?.reject(new Error(error));
      else p?.resolve(outcome!);
    });
    w.on('error', (e) => failAll(w, e));
    w.on('exit', (code) => failAll(w, new Error(`the churn fitting thread stopped (exit code ${code})`)));
    return w;
  };

  const fit: Fitter = (tenantId, input) => {
    if (training.has(tenantId)) {
      return Promise.reject(
        new DomainError('conflict', 'A training of this workspace’s churn model is already under way; wait for its result.'),
      );
    }
    if (training.size >= maxTenants) {
      return Promise.reject(
        new DomainError('service_unavailable', 'Churn model training is busy; retry in a minute.', { retryAfterSeconds: 60 }),
      );
    }
    training.add(tenantId);
    const id = ++next;
    return new Promise<FitOutcome>((resolve, reject) => {
      pending.set(id, { tenantId, resolve, reject });
      paced();
      try {
        (worker ??= start()).postMessage({ id, input });
      } catch (e) {
        pending.delete(id);
        paced();
        reject(e as Error);
      }
    }).finally(() => training.delete(tenantId));
  };
  return Object.assign(fit, {
    async close() {
      const w = worker;
      if (!w) return;
      failAll(w, new Error('the churn fitting thread was closed'));
      await w.terminate();
    },
  });
}
