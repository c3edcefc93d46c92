import type pg from 'pg';
import { onPg } from '../../db/sql.ts';
import { publishJobs } from '../../queue/publish-ids.ts';
import type { Queue } from '../../queue/queue.ts';
import { deliveryJobs } from '../events/relay.ts';
import { circuitsToTend, releaseAllHeld } from './delivery-store.ts';

/**
 * The worker's pass over the endpoints' circuit breakers (every second, in every worker process; see
 * circuit-breaker.ts): arms the probe of each open breaker whose wait is over and queues it, and releases what
 * closed breakers still hold (the deliverer releases at once what the breaker it closes held; this pass is for a
 * release it could not finish, and for the API's, which closes a breaker when the tenant enables or disables its
 * endpoint). Several workers may run it together: arming waits on nothing and takes a breaker once.
 * Answers the probes queued and the deliveries released.
 */
export async function tendCircuits(
  pool: pg.Pool,
  queue: Queue,
  opts: { leaseSeconds: number; revisitSeconds: number },
): Promise<{ probes: number; released: number }> {
  const sql = onPg(pool);
  const { probes, releases } = await circuitsToTend(sql, opts);
  // A probe whose job fails to publish is marked queued: the due-delivery pass queues it again after the lease time.
  await publishJobs(queue, 'outbound.deliveries', deliveryJobs(probes));
  let released = 0;
  for (const endpointId of releases) released += await releaseAllHeld(sql, endpointId);
  return { probes: probes.length, released };
}
