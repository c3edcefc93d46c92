import type { Queue, Topic } from './queue.ts';

export const CONFIRM_TIMEOUT_MS = 2000;

/**
 * Publishes `{ id }` per id, with confirms, in concurrent chunks (awaiting each confirm in turn would
 * make recovery after an outage crawl). Stops at the first chunk with a failure — a broker that is down
 * would otherwise cost a timeout per chunk — and answers the ids that were not published.
 */
export async function publishIds(
  queue: Queue,
  topic: Topic,
  ids: string[],
  chunkSize = 100,
  timeoutMs = CONFIRM_TIMEOUT_MS,
): Promise<string[]> {
  for (let i = 0; i < ids.length; i += chunkSize) {
    const chunk = ids.slice(i, i + chunkSize);
    const results = await Promise.allSettled(chunk.map((id) => queue.publish(topic, { id }, { messageId: id, timeoutMs })));
    const failed = chunk.filter((_, j) => results[j]!.status === 'rejected');
    if (failed.length) return [...failed, ...ids.slice(i + chunkSize)];
  }
  return [];
}
