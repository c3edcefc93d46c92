import type pg from 'pg';
import { onPg } from '../db/sql.ts';
import { DomainError, notFound, validationFailed } from '../errors.ts';
import { envelopeSql } from '../outbox/events/envelope.ts';
import { passesFilterSql } from '../outbox/events/filters.ts';
import { EVENTS, isEventName } from '../outbox/events/registry.ts';
import type { AttemptOutcome, Deliverer } from '../outbox/sender/deliverer.ts';
import type { WebhookEndpointService } from './webhook-endpoints.ts';
import { publishIds } from '../queue/publish-ids.ts';
import type { Queue } from '../queue/queue.ts';

const TEST_ENVELOPE = envelopeSql({
  id: '$1::uuid',
  tenantId: '$2::uuid',
  type: '$4::text',
  subject: "'test'",
  time: 'now()',
  payload: '$5::jsonb',
});

/**
 * True when a delivery's endpoint would send it now, its filter for the delivery's type applied to the body
 * it sends. Test deliveries are checked before they are made.
 */
const PASSES_FILTER = `EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.id = webhook_deliveries.endpoint_id
  AND ${passesFilterSql('webhook_deliveries.event_type', "webhook_deliveries.envelope #> '{data,payload}'")})`;

/**
 * What the API does with deliveries: Test, resend, replay. Plain SQL: webhook_deliveries is the delivery
 * pipeline's table, written by the relay and the deliverer in the same form.
 */
export function createWebhookDeliveryService(deps: {
  pool: pg.Pool;
  endpoints: WebhookEndpointService;
  deliverer: Deliverer;
  queue: Queue;
}) {
  const sql = onPg(deps.pool);

  /** Re-arms deliveries for one more attempt now and queues them. */
  async function rearm(where: string, values: unknown[]): Promise<number> {
    const rows = await sql.query<{ id: string }>(
      `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = now(), locked_until = NULL, queued_at = now(), updated_at = now()
       WHERE ${where} RETURNING id`,
      values,
    );
    // What fails to publish is queued again by the worker's due-delivery pass.
    await publishIds(
      deps.queue,
      'outbound.deliveries',
      rows.map((r) => r.id),
    );
    return rows.length;
  }

  return {
    /** Sends a sample of a subscribed event (default: the first), signed like any delivery, and records the attempt. */
    async sendTest(
      tenantId: string,
      endpointId: string,
      event?: string | null,
    ): Promise<{ deliveryId: string; event: string } & AttemptOutcome> {
      const e = await deps.endpoints.owned(tenantId, endpointId);
      const name = event ?? e.events[0]!;
      if (!e.events.includes(name))
        throw validationFailed([{ path: 'event', message: `must be one of the endpoint's events: ${e.events.join(', ')}` }]);
      const id = globalThis.crypto.randomUUID();
      const payload = isEventName(name) ? { ...EVENTS[name].example, tenant_id: tenantId } : {};
      const [sample] = await sql.query<{ passes: boolean }>(
        `SELECT ${passesFilterSql('$2::text', '$3::jsonb')} AS passes FROM webhook_endpoints e WHERE e.id = $1`,
        [endpointId, name, JSON.stringify(payload)],
      );
      if (!sample?.passes) {
        throw new DomainError('conflict', `The endpoint's filter for ${name} drops its sample, so a Test would send nothing.`);
      }
      // Marked queued: this request attempts it at once and answers with the outcome, so the worker's
      // due-delivery pass must not take it first (the caller would be told it was skipped).
      await sql.query(
        `INSERT INTO webhook_deliveries (id, tenant_id, endpoint_id, event_type, envelope, is_test, status, next_attempt_at, queued_at, created_at, updated_at)
         VALUES ($1, $2, $3, $4, ${TEST_ENVELOPE}, true, 'pending', now(), now(), now(), now())`,
        [id, tenantId, endpointId, name, JSON.stringify(payload)],
      );
      return { deliveryId: id, event: name, ...(await deps.deliverer.attempt(id)) };
    },
    async resend(tenantId: string, deliveryId: string): Promise<void> {
      const n = await rearm(`id = $1 AND tenant_id = $2 AND status <> 'pending' AND ${PASSES_FILTER}`, [deliveryId, tenantId]);
      if (n === 0) {
        const [d] = await sql.query<{ passes: boolean }>(
          `SELECT ${PASSES_FILTER} AS passes FROM webhook_deliveries WHERE id = $1 AND tenant_id = $2`,
          [deliveryId, tenantId],
        );
        if (!d) throw notFound(`Webhook delivery ${deliveryId}`);
        if (!d.passes)
          throw new DomainError('conflict', "The endpoint's filter for the delivery's event type drops it now; it was not resent.");
      }
    },
    /** Resends an endpoint's failed deliveries created since a time. */
    async replayFailed(tenantId: string, endpointId: string, since: Date): Promise<number> {
      await deps.endpoints.owned(tenantId, endpointId);
      return rearm(`endpoint_id = $1 AND tenant_id = $2 AND status = 'failed' AND NOT is_test AND created_at >= $3 AND ${PASSES_FILTER}`, [
        endpointId,
        tenantId,
        since,
      ]);
    },
  };
}

export type WebhookDeliveryService = ReturnType<typeof createWebhookDeliveryService>;
