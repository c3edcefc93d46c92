// A thread for the thread pool's tests (src/runtime/thread-pool.test.ts): answers each job after `ms`,
// with `size` bytes of its number moved back; fails or stops when asked.
import { threadId } from 'node:worker_threads';
import { serveJobs } from '../../src/runtime/thread-pool.ts';

export interface TestJob {
  n: number;
  ms?: number;
  size?: number;
  fail?: boolean;
  exit?: boolean;
}

serveJobs<TestJob, { n: number; thread: number; bytes: Uint8Array }>(async (job) => {
  if (job.exit) process.exit(3);
  if (job.fail) throw new Error(`job ${job.n} failed`);
  await new Promise((r) => setTimeout(r, job.ms ?? 0));
  const bytes = new Uint8Array(job.size ?? 4).fill(job.n);
  return { result: { n: job.n, thread: threadId, bytes }, transfer: [bytes.buffer] };
});
