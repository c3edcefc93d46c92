import { Gauge, type Registry } from 'prom-client';

export interface Backlog {
  inbox_pending: number;
  inbox_oldest_seconds: number;
  outbox_pending: number;
  outbox_oldest_seconds: number;
  deliveries_pending: number;
  deliveries_overdue_seconds: number;
  deliveries_oldest_pending_seconds: number;
  deliveries_held: number;
  webhook_circuits_open: number;
  scoring_due: number;
  scoring_oldest_due_seconds: number;
  scoring_requests_pending: number;
  scoring_requests_oldest_seconds: number;
}

// One statement per scrape, each part on an index whose first column is the filtered one, or on the
// oldest rows of an append-only table by its key. Ages are what alerts should watch: a count can be high
// and healthy during a burst, a growing age cannot.
/** Requests to recompute are counted up to this many: past it, the age tells more than the count. */
const REQUESTS_COUNTED = 100_000;

export const BACKLOG_SQL = `
  SELECT
    (SELECT count(*) FROM inbox_events WHERE status = 'received')::int AS inbox_pending,
    coalesce((SELECT extract(epoch FROM now() - min(received_at)) FROM inbox_events WHERE status = 'received'), 0)::float8 AS inbox_oldest_seconds,
    (SELECT count(*) FROM outbox_pending)::int AS outbox_pending,
    coalesce((SELECT extract(epoch FROM now() - min(created_at)) FROM outbox_pending), 0)::float8 AS outbox_oldest_seconds,
    (SELECT count(*) FROM webhook_deliveries WHERE status = 'pending')::int AS deliveries_pending,
    coalesce((SELECT extract(epoch FROM now() - min(next_attempt_at)) FROM webhook_deliveries
              WHERE status = 'pending' AND held_at IS NULL AND next_attempt_at <= now()), 0)::float8 AS deliveries_overdue_seconds,
    coalesce((SELECT extract(epoch FROM now() - min(created_at)) FROM webhook_deliveries WHERE status = 'pending'), 0)::float8
      AS deliveries_oldest_pending_seconds,
    (SELECT count(*) FROM webhook_deliveries WHERE status = 'pending' AND held_at IS NOT NULL)::int AS deliveries_held,
    (SELECT count(*) FROM webhook_endpoint_circuits WHERE state <> 'closed')::int AS webhook_circuits_open,
    (SELECT count(*) FROM scoring_queue WHERE due_at <= now())::int AS scoring_due,
    coalesce((SELECT extract(epoch FROM now() - min(due_at)) FROM scoring_queue WHERE due_at <= now()), 0)::float8 AS scoring_oldest_due_seconds,
    (SELECT count(*) FROM (SELECT 1 FROM scoring_requests LIMIT ${REQUESTS_COUNTED}) r)::int AS scoring_requests_pending,
    greatest(0, coalesce((SELECT extract(epoch FROM now() - due_at) FROM scoring_requests ORDER BY id LIMIT 1), 0))::float8 AS scoring_requests_oldest_seconds`;

const GAUGES: [keyof Backlog, string][] = [
  ['inbox_pending', 'Inbound events stored but not yet processed'],
  ['inbox_oldest_seconds', 'Age of the oldest unprocessed inbound event'],
  ['outbox_pending', 'Outbox events not yet fanned out to endpoints'],
  ['outbox_oldest_seconds', 'Age of the oldest outbox event not yet fanned out'],
  ['deliveries_pending', 'Outbound deliveries waiting for an attempt (due or scheduled retries)'],
  ['deliveries_overdue_seconds', 'How late the most overdue outbound attempt is (deliveries a circuit breaker holds are not overdue)'],
  ['deliveries_oldest_pending_seconds', 'Age of the oldest outbound delivery still pending, held or not'],
  ['deliveries_held', 'Outbound deliveries held by their endpoint’s open circuit breaker'],
  ['webhook_circuits_open', 'Webhook endpoints whose circuit breaker is open or half open'],
  ['scoring_due', 'Customers due for a score recomputation'],
  ['scoring_oldest_due_seconds', 'How long the longest-waiting customer has been due'],
  [
    'scoring_requests_pending',
    `Requests to recompute customers not yet collected into the scoring queue (counted up to ${REQUESTS_COUNTED})`,
  ],
  ['scoring_requests_oldest_seconds', 'How long the oldest request to recompute has been due without being collected'],
];

/**
 * The service's queues as gauges, read from PostgreSQL when /metrics is scraped. They are the same
 * from every process, so scrape one API process (or take the max across them).
 */
export function registerBacklogMetrics(registry: Registry, query: () => Promise<Backlog[]>, onError: (e: unknown) => void) {
  let pending: Promise<Backlog | null> | null = null;
  // One query serves every gauge of a scrape.
  const read = () => {
    pending ??= query()
      .then((rows) => rows[0] ?? null)
      .catch((e) => {
        onError(e);
        return null;
      })
      .finally(() => {
        pending = null;
      });
    return pending;
  };
  for (const [key, help] of GAUGES) {
    new Gauge({
      name: `chs_${key}`,
      help,
      registers: [registry],
      async collect() {
        const b = await read();
        if (b) this.set(Number(b[key]));
      },
    });
  }
}
