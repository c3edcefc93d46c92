import { Counter, Histogram, Registry } from 'prom-client';

/**
 * The counters and histograms an operator alerts on, defined in one place and registered on one registry
 * per process; every /metrics listener of the process serves it beside its own series
 * (src/http/observability.ts). The modules that count import the instrument they need from here.
 *
 * Every label takes a bounded set of values: providers, outcomes, status classes, error codes and
 * refusal reasons are enumerations of the service, and GraphQL operation names are kept to the first
 * OPERATION_NAMES seen (then `other`). No label names a tenant, customer or endpoint.
 * docs/operations.md lists them all; ops/prometheus/chs-alerts.yml pages on them.
 */
export const operationsRegistry = new Registry();
const registers = [operationsRegistry];

/** Network round trips to a receiver, from a loopback answer to the attempt's timeout. */
const LATENCY_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Passes over a whole backlog: from an idle pass to one of minutes. */
const PASS_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900];

export const inboundEvents = new Counter({
  name: 'chs_inbound_events_total',
  help: 'Provider webhook requests by provider and outcome (accepted, duplicate, answered, refused); reason is the refusal problem code, none otherwise',
  labelNames: ['provider', 'outcome', 'reason'],
  registers,
});

export const inboundApplied = new Counter({
  name: 'chs_inbound_applied_total',
  help: 'Stored inbound events applied by the worker, by outcome (processed, ignored, failed: to be retried)',
  labelNames: ['outcome'],
  registers,
});

export const webhookDeliveries = new Counter({
  name: 'chs_webhook_delivery_attempts_total',
  help: 'Outbound webhook delivery attempts by outcome (succeeded, retrying, failed) and the receiver status class (2xx..5xx, none when nothing answered)',
  labelNames: ['outcome', 'status_class'],
  registers,
});

export const webhookDeliveryDuration = new Histogram({
  name: 'chs_webhook_delivery_duration_seconds',
  help: 'Time from sending an outbound webhook to its answer (or the timeout), by outcome',
  labelNames: ['outcome'],
  buckets: LATENCY_BUCKETS,
  registers,
});

export const webhookRetries = new Counter({
  name: 'chs_webhook_delivery_retries_scheduled_total',
  help: 'Failed outbound attempts given another attempt later',
  registers,
});

export const webhookEndpointsDisabled = new Counter({
  name: 'chs_webhook_endpoints_disabled_total',
  help: 'Webhook endpoints disabled by delivery, by reason (gone: answered 410; failing: no success for 5 days)',
  labelNames: ['reason'],
  registers,
});

export const webhookCircuitOpenings = new Counter({
  name: 'chs_webhook_circuit_openings_total',
  help: 'Webhook endpoint circuit breakers opened, by reason (threshold: too many recent attempts failed; probe_failed: its probe failed, so it opened again for longer)',
  labelNames: ['reason'],
  registers,
});

export const webhookCircuitClosings = new Counter({
  name: 'chs_webhook_circuit_closings_total',
  help: 'Webhook endpoint circuit breakers closed by a delivered probe',
  registers,
});

export const admissionRefusals = new Counter({
  name: 'chs_admission_refusals_total',
  help: 'Requests refused with 503 before any work, by budget and reason',
  labelNames: ['reason'],
  registers,
});

export const scoringPassDuration = new Histogram({
  name: 'chs_scoring_pass_duration_seconds',
  help: 'Duration of a scoring pass: every customer due recomputed',
  buckets: PASS_BUCKETS,
  registers,
});

export const scoringCustomers = new Counter({
  name: 'chs_scoring_customers_computed_total',
  help: 'Customers whose scores a scoring pass recomputed',
  registers,
});

export const trainingDuration = new Histogram({
  name: 'chs_churn_training_duration_seconds',
  help: 'Duration of training a tenant churn model, by outcome (trained, calibrated_default, insufficient_labels, failed)',
  labelNames: ['outcome'],
  buckets: PASS_BUCKETS,
  registers,
});

export const graphqlOperations = new Counter({
  name: 'chs_graphql_operations_total',
  help: 'GraphQL operations executed (over /graphql and the REST facade), by operation name, type and outcome (ok, error)',
  labelNames: ['operation', 'type', 'outcome'],
  registers,
});

export const graphqlOperationDuration = new Histogram({
  name: 'chs_graphql_operation_duration_seconds',
  help: 'Execution time of GraphQL operations, by operation name and type',
  labelNames: ['operation', 'type'],
  buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers,
});

/** Distinct operation names a process labels; any name past them is counted as `other`. */
export const OPERATION_NAMES = 200;
const operationNames = new Set<string>();

/** The label for an operation name: the name while the process has labelled fewer than OPERATION_NAMES. */
export function operationLabel(name: string | null | undefined): string {
  if (!name) return 'anonymous';
  if (operationNames.has(name)) return name;
  if (operationNames.size >= OPERATION_NAMES || name.length > 100) return 'other';
  operationNames.add(name);
  return name;
}

// Each series' children looked up once: observing through labels hashes the label set on every operation.
type OperationSeries = {
  ok: ReturnType<typeof graphqlOperations.labels>;
  error: ReturnType<typeof graphqlOperations.labels>;
  duration: ReturnType<typeof graphqlOperationDuration.labels>;
};
const operationSeries = new Map<string, OperationSeries>();

/** Counts one executed operation with its duration. */
export function countOperation(name: string | null | undefined, type: string | undefined, failed: boolean, seconds: number) {
  const operation = operationLabel(name);
  const t = type ?? 'unknown';
  const key = `${t} ${operation}`;
  let series = operationSeries.get(key);
  if (!series) {
    series = {
      ok: graphqlOperations.labels({ operation, type: t, outcome: 'ok' }),
      error: graphqlOperations.labels({ operation, type: t, outcome: 'error' }),
      duration: graphqlOperationDuration.labels({ operation, type: t }),
    };
    operationSeries.set(key, series);
  }
  (failed ? series.error : series.ok).inc();
  series.duration.observe(seconds);
}

/** `2xx` … `5xx` for an HTTP status, `none` when nothing answered (refused, timed out, reset). */
export function statusClass(statusCode: number | null | undefined): string {
  if (statusCode == null || statusCode < 100 || statusCode > 599) return 'none';
  return `${Math.floor(statusCode / 100)}xx`;
}
