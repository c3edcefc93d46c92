import { parentPort, type TransferListItem, type Worker } from 'node:worker_threads';
import { startThread } from './threads.ts';

/**
 * A few threads for tenants' heavy steps (an export's page: reading it and writing it out), so that the
 * request event loop only passes their results on. Each thread runs one job at a time. Jobs wait per
 * tenant, and a free thread takes the oldest job of the next tenant in turn: one tenant's hundreds of
 * pages delay another tenant's next page by at most one job per thread.
 */
export interface ThreadPool<J, R> {
  run(tenantId: string, job: J): Promise<R>;
  /** Ends the threads; what waits or runs fails. */
  close(): Promise<void>;
}

export interface ThreadPoolOptions {
  /** The threads' entry module, which calls `serveJobs` (threads.ts's threadEntry finds it). */
  entry: URL;
  /** Threads at most; started at the first jobs that find none free. */
  size: number;
  /** Given to every thread as its `workerData`. */
  workerData?: unknown;
  /** What the threads do, for errors. */
  name: string;
}

interface Waiting<J, R> {
  job: J;
  resolve: (r: R) => void;
  reject: (e: Error) => void;
}

type Reply<R> = { result: R } | { error: string };

export function createThreadPool<J, R>(opts: ThreadPoolOptions): ThreadPool<J, R> {
  if (opts.size < 1) throw new Error('a thread pool needs at least one thread');
  // Per tenant, its jobs in order; the map's order is the tenants' turn (a tenant served goes to its end).
  const queues = new Map<string, Waiting<J, R>[]>();
  const threads = new Set<Worker>();
  const idle: Worker[] = [];
  const running = new Map<Worker, Waiting<J, R>>();
  let closed = false;

  const nextJob = (): Waiting<J, R> | undefined => {
    const first = queues.entries().next();
    if (first.done) return undefined;
    const [tenantId, queue] = first.value;
    const job = queue.shift();
    queues.delete(tenantId);
    if (queue.length > 0) queues.set(tenantId, queue);
    return job;
  };

  const dispatch = () => {
    while (queues.size > 0) {
      const thread = idle.pop() ?? (threads.size < opts.size ? spawn() : undefined);
      if (!thread) return;
      const waiting = nextJob()!;
      running.set(thread, waiting);
      thread.postMessage(waiting.job);
    }
  };

  const spawn = () => {
    const thread = startThread(opts.entry, opts.workerData);
    // The process's own work (its server, its pools) decides when it ends, never an idle thread.
    thread.unref();
    threads.add(thread);
    thread.on('message', (reply: Reply<R>) => {
      const waiting = running.get(thread);
      running.delete(thread);
      idle.push(thread);
      if ('error' in reply) waiting?.reject(new Error(reply.error));
      else waiting?.resolve(reply.result);
      dispatch();
    });
    // A thread lost fails its one job, once ('error' is followed by 'exit'); the next job starts another.
    const lost = (e: Error) => {
      if (!threads.delete(thread)) return;
      const at = idle.indexOf(thread);
      if (at >= 0) idle.splice(at, 1);
      running.get(thread)?.reject(e);
      running.delete(thread);
      if (!closed) dispatch();
    };
    thread.on('error', lost);
    thread.on('exit', (code) => lost(new Error(`a ${opts.name} thread stopped (exit code ${code})`)));
    return thread;
  };

  return {
    run(tenantId, job) {
      if (closed) return Promise.reject(new Error(`the ${opts.name} threads are closed`));
      return new Promise<R>((resolve, reject) => {
        const queue = queues.get(tenantId);
        if (queue) queue.push({ job, resolve, reject });
        else queues.set(tenantId, [{ job, resolve, reject }]);
        dispatch();
      });
    },
    async close() {
      closed = true;
      const stopped = new Error(`the ${opts.name} threads were closed`);
      for (const queue of queues.values()) for (const w of queue) w.reject(stopped);
      queues.clear();
      await Promise.all([...threads].map((t) => t.terminate()));
    },
  };
}

/**
 * The thread's side of the pool: answers each job with `handle`'s result, moving the buffers named in
 * `transfer` to the caller instead of copying them.
 */
export function serveJobs<J, R>(handle: (job: J) => Promise<{ result: R; transfer?: TransferListItem[] }>) {
  const port = parentPort;
  if (!port) throw new Error('serveJobs runs in a thread of a pool');
  port.on('message', async (job: J) => {
    try {
      const done = await handle(job);
      port.postMessage({ result: done.result } satisfies Reply<R>, done.transfer);
    } catch (e) {
      port.postMessage({ error: e instanceof Error ? e.message : String(e) } satisfies Reply<R>);
    }
  });
}
