/**
 * Ordered delivery (an endpoint with `ordered`, docs/receiving-webhooks.md): an SQL condition, true while the
 * delivery `d` (a webhook_deliveries alias) must wait for an earlier event of its sequence subject to the same
 * endpoint, that is, while
 * - an earlier delivery of the subject to the endpoint is pending: being attempted, or waiting for a retry
 *   (delivered or given up, `succeeded` or `failed`, releases the next), or
 * - an earlier event of the subject is not relayed yet, so its delivery may not exist yet: relays run side by
 *   side and one may commit the later event's deliveries first.
 * Events of a subject commit in number order (their counter's row lock, enqueue.ts), so a snapshot that sees
 * the later event sees every earlier one, relayed (with its deliveries) or not. Each test is one probe of an
 * index over the few rows still pending (a partial index) or not relayed (outbox_pending). Only the deliverer's claim and the queueing
 * of due deliveries (relay.ts) read it; neither locks what it reads.
 */
export const heldByEarlier = (d: string) => `(
  ${d}.sequence IS NOT NULL
  AND EXISTS (SELECT 1 FROM webhook_endpoints oe WHERE oe.id = ${d}.endpoint_id AND oe.ordered)
  AND (EXISTS (SELECT 1 FROM webhook_deliveries p
               WHERE p.endpoint_id = ${d}.endpoint_id AND p.sequence_subject = ${d}.sequence_subject
                 AND p.sequence < ${d}.sequence AND p.status = 'pending')
       OR EXISTS (SELECT 1 FROM outbox_pending o
                  WHERE o.tenant_id = ${d}.tenant_id AND o.sequence_subject = ${d}.sequence_subject
                    AND o.sequence < ${d}.sequence)))`;
