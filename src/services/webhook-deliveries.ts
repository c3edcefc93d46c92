import type pg from 'pg';
import { inTransaction, onPg, type Sql } from '../db/sql.ts';
import { DomainError, notFound, validationFailed } from '../errors.ts';
import { passesFilterSql } from '../outbox/events/filters.ts';
import { deliveryJobs } from '../outbox/events/relay.ts';
import { EVENTS, isEventName } from '../outbox/events/registry.ts';
import type { AttemptOutcome, Deliverer } from '../outbox/sender/deliverer.ts';
import { insertTestDelivery, rearmDeliveries, settleUnsentTest } from '../outbox/sender/delivery-store.ts';
import type { WebhookEndpointService } from './webhook-endpoints.ts';
import { publishJobs } from '../queue/publish-ids.ts';
import type { Queue } from '../queue/queue.ts';
import { recordAudit, type Actor } from './audit.ts';

/**
 * True when a delivery's endpoint would send it now, its filter for the delivery's type applied to the body
 * it sends. Test deliveries are checked before they are made.
 */
const PASSES_FILTER = `EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.id = webhook_deliveries.endpoint_id
  AND ${passesFilterSql('webhook_deliveries.event_type', "webhook_deliveries.envelope #> '{data,payload}'")})`;

/**
 * What the API does with deliveries: Test, resend, replay. The table's statements are the delivery store's
 * (src/outbox/sender/delivery-store.ts), which the deliverer writes through too.
 */
export function createWebhookDeliveryService(deps: {
  pool: pg.Pool;
  endpoints: WebhookEndpointService;
  deliverer: Deliverer;
  queue: Queue;
}) {
  const sql = onPg(deps.pool);

  /** The host a URL sends to, as the audit log names it (never its path or query, which may carry tokens). */
  const hostOf = (url: string) => {
    try {
      return new URL(url).host;
    } catch {
      return null;
    }
  };

  /**
   * Re-arms deliveries for one more attempt now, records who sent what where in the audit log in the same
   * transaction, and queues them. Rows are taken in id order, as every writer of several deliveries takes
   * them (docs/concurrency.md, step 12), before the audit insert (step 14).
   */
  async function rearm(
    where: string,
    values: unknown[],
    audit: (rows: { id: string; endpoint_id: string; url: string }[], sql: Sql) => Promise<void>,
  ): Promise<number> {
    const rows = await inTransaction(deps.pool, async (tx) => {
      const armed = await rearmDeliveries(tx, where, values);
      await audit(armed, tx);
      return armed;
    });
    // What fails to publish is queued again by the worker's due-delivery pass.
    await publishJobs(deps.queue, 'outbound.deliveries', deliveryJobs(rows));
    return rows.length;
  }

  return {
    /**
     * Sends a sample of a subscribed event (default: the first), signed like any delivery, and records the
     * attempt. A workspace whose deletion is scheduled sends nothing (docs/data-lifecycle.md): the Test is
     * refused, and not kept to go out later.
     */
    async sendTest(
      actor: Actor,
      endpointId: string,
      event?: string | null,
    ): Promise<{ deliveryId: string; event: string } & AttemptOutcome> {
      const { tenantId } = actor;
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
      const stored = await inTransaction(deps.pool, async (tx) => {
        // Marked queued: this request attempts it at once and answers with the outcome, so the worker's
        // due-delivery pass must not take it first (the caller would be told it was skipped).
        if (!(await insertTestDelivery(tx, { id, tenantId, endpointId, event: name, payload }))) return false;
        await recordAudit(tx, actor, {
          action: 'webhook_endpoint.tested',
          targetType: 'webhook_endpoint',
          targetId: endpointId,
          changes: { url_host: hostOf(e.url), event: name, delivery_id: id, deliveries: 1 },
        });
        return true;
      });
      if (!stored) throw deletionScheduled();
      const outcome = await deps.deliverer.attempt(id);
      // A Test is sent in the request or not at all: one the deliverer could not send now is settled as failed,
      // so that no worker sends it later.
      const notSent = (reason: string) => settleUnsentTest(sql, id, reason);
      if (outcome.status === 'skipped') {
        // The deletion was scheduled, or the endpoint removed, between the insert and the attempt.
        await notSent('workspace deletion scheduled');
        const [held] = await sql.query('SELECT 1 FROM tenants WHERE id = $1 AND deletion_requested_at IS NOT NULL', [tenantId]);
        throw held ? deletionScheduled() : notFound(`Webhook endpoint ${endpointId}`);
      }
      if (outcome.status === 'busy') {
        const error = 'not sent: the endpoint has as many attempts in flight as it may take; try again in a moment';
        await notSent(error);
        return { deliveryId: id, event: name, status: 'failed', statusCode: null, error, durationMs: 0 };
      }
      return { deliveryId: id, event: name, ...outcome };
    },
    async resend(actor: Actor, deliveryId: string): Promise<void> {
      const n = await rearm(
        `id = $1 AND tenant_id = $2 AND status <> 'pending' AND ${PASSES_FILTER}`,
        [deliveryId, actor.tenantId],
        async (rows, tx) => {
          for (const r of rows)
            await recordAudit(tx, actor, {
              action: 'webhook_delivery.resent',
              targetType: 'webhook_delivery',
              targetId: r.id,
              changes: { endpoint_id: r.endpoint_id, url_host: hostOf(r.url), deliveries: 1 },
            });
        },
      );
      if (n === 0) {
        const [d] = await sql.query<{ passes: boolean }>(
          `SELECT ${PASSES_FILTER} AS passes FROM webhook_deliveries WHERE id = $1 AND tenant_id = $2`,
          [deliveryId, actor.tenantId],
        );
        if (!d) throw notFound(`Webhook delivery ${deliveryId}`);
        if (!d.passes)
          throw new DomainError('conflict', "The endpoint's filter for the delivery's event type drops it now; it was not resent.");
      }
    },
    /** Resends an endpoint's failed deliveries created since a time; audited even when there were none. */
    async replayFailed(actor: Actor, endpointId: string, since: Date): Promise<number> {
      const e = await deps.endpoints.owned(actor.tenantId, endpointId);
      return rearm(
        `endpoint_id = $1 AND tenant_id = $2 AND status = 'failed' AND NOT is_test AND created_at >= $3 AND ${PASSES_FILTER}`,
        [endpointId, actor.tenantId, since],
        (rows, tx) =>
          recordAudit(tx, actor, {
            action: 'webhook_endpoint.replayed',
            targetType: 'webhook_endpoint',
            targetId: endpointId,
            changes: { url_host: hostOf(rows[0]?.url ?? e.url), since: since.toISOString(), deliveries: rows.length },
          }),
      );
    },
  };
}

const deletionScheduled = () =>
  new DomainError(
    'conflict',
    'The workspace’s deletion is scheduled: nothing is sent to its webhook endpoints, Tests included, unless the deletion is cancelled.',
  );

export type WebhookDeliveryService = ReturnType<typeof createWebhookDeliveryService>;
