import type { Queue, Topic } from './queue.ts';

export const CONFIRM_TIMEOUT_MS = 2000;

/** Publishes `{ id }` per id (publishJobs); answers the ids that were not published. */
export async function publishIds(
  queue: Queue,
  topic: Topic,
  ids: string[],
  chunkSize = 100,
  timeoutMs = CONFIRM_TIMEOUT_MS,
): Promise<string[]> {
  const failed = await publishJobs(
    queue,
    topic,
    ids.map((id) => ({ id })),
    chunkSize,
    timeoutMs,
  );
  return failed.map((j) => j.id);
}

/**
 * Publishes each job, its id the message id, with confirms, in concurrent chunks (awaiting each confirm in
 * turn would make recovery after an outage crawl). Stops at the first chunk with a failure — a broker that
 * is down would otherwise cost a timeout per chunk — and answers the jobs that were not published.
 */
export async function publishJobs<J extends { id: string }>(
  queue: Queue,
  topic: Topic,
  jobs: J[],
  chunkSize = 100,
  timeoutMs = CONFIRM_TIMEOUT_MS,
): Promise<J[]> {
  for (let i = 0; i < jobs.length; i += chunkSize) {
    const chunk = jobs.slice(i, i + chunkSize);
    const results = await Promise.allSettled(chunk.map((job) => queue.publish(topic, job, { messageId: job.id, timeoutMs })));
    const failed = chunk.filter((_, j) => results[j]!.status === 'rejected');
    if (failed.length) return [...failed, ...jobs.slice(i + chunkSize)];
  }
  return [];
}
