// One shape per entity of the public contract, in its wire form (snake_case, docs/decisions.md §1). Each
// is the source of the REST answer's validation, serialisation and /openapi.json component (`COMPONENTS`),
// the handlers' reply types, and the payloads of the webhook events about it (src/outbox/events/registry.ts).
// An entity sent as a webhook payload has its sample beside its shape, typed by it, so a field added to the
// shape does not compile until its example is written here too; the event catalog's examples are made from it.
import { z } from 'zod';
import {
  ALERT_SEVERITIES,
  ALERT_STATUSES,
  ALERT_TYPES,
  CHANGE_SOURCE_TYPES,
  CIRCUIT_STATES,
  CHURN_MODEL_KINDS,
  TRAINING_STATUSES,
  DELIVERY_STATUSES,
  DIMENSIONS,
  HEALTH_STATUSES,
  INPUT_GROUPS,
  PLANS,
  PROVIDERS,
  RISK_LEVELS,
  SIGNATURE_SCHEMES,
  STATS_WINDOW_NAMES,
} from './enums.ts';
import { camelCase, type SourceOf } from './serialize.ts';
import { RETENTION_KEYS, RETENTION_SETTINGS, type RetentionKey, retentionField } from './retention.ts';
import { component, jsonObject, listedText, probability, score, time, uuid } from './wire.ts';
import { SEQUENCE_SUBJECT_EXAMPLE } from './sequence-subject.ts';
import { CUSTOMER_FIELDS, customerWireFields } from './customer-fields.ts';

const str = z.string();
const num = z.number();
const int = z.number().int();

export const problem = z
  .object({
    type: str,
    title: str,
    status: int,
    detail: str,
    code: str,
    errors: z.array(z.object({ path: str, message: str })).optional(),
  })
  .describe('RFC 9457 problem details.');

/** A customer's own fields (customer-fields.ts lists them, for every place that shows a customer). */
export const customerListItem = z.object(customerWireFields);

/** The example customer, each field's example from the list. */
export const customerSample = Object.fromEntries(
  Object.entries(CUSTOMER_FIELDS).map(([name, f]) => [camelCase(name), f.example]),
) as unknown as SourceOf<z.infer<typeof customerListItem>>;

/** A customer's account at a provider; the same in requests and answers. */
export const identity = z.strictObject({ provider: z.enum(PROVIDERS), external_id: z.string().min(1).max(200) });

export const customer = customerListItem.extend({ identities: z.array(identity) });

const riskFactor = z.object({ code: str, description: str, impact: num });
export const intervention = z.object({ code: str, title: str, description: str, priority: str });

export const health = z.object({
  customer_id: uuid,
  score: score.nullable(),
  status: z.enum(HEALTH_STATUSES).nullable(),
  computed_at: time.nullable(),
  trend: z.object({ change_7d: num.nullable(), change_30d: num.nullable() }),
  weakest_dimension: z.enum(DIMENSIONS).nullable(),
  dimensions: z
    .array(
      z.object({
        key: z.enum(DIMENSIONS),
        score: num.nullable(),
        weight: num,
        contribution: num.nullable(),
        trend: num.nullable(),
        signals: z.array(
          z.object({ key: str, label: str, value: z.union([num.nullable(), str]).describe('A number or a label; null when unknown.') }),
        ),
        stale: z.boolean().describe('A provider feeding this dimension has gone silent: its score may describe how things were.'),
        stale_sources: z.array(z.enum(PROVIDERS)).describe('The silent providers feeding it.'),
      }),
    )
    .length(DIMENSIONS.length),
  confidence: num
    .nullable()
    .describe(
      'How much of the score rests on fresh sources, 0-1: the weight of the dimensions with data whose providers are not silent. The score is not re-weighted when a source stops. Null without a score.',
    ),
});

export const churnPrediction = z.object({
  customer_id: uuid,
  probability: probability.nullable(),
  risk_level: z.enum(RISK_LEVELS).nullable(),
  risk_factors: z.array(riskFactor),
  recommended_interventions: z.array(intervention),
  model_version: str.nullable(),
  predicted_at: time.nullable(),
});

export const alert = z.object({
  id: uuid,
  customer_id: uuid,
  alert_type: z.enum(ALERT_TYPES),
  severity: z.enum(ALERT_SEVERITIES),
  status: z.enum(ALERT_STATUSES),
  title: str,
  message: str,
  details: jsonObject,
  snoozed_until: time.nullable(),
  acknowledged_at: time.nullable(),
  resolved_at: time.nullable(),
  created_at: time,
  updated_at: time,
});

export const alertSample: SourceOf<z.infer<typeof alert>> = {
  id: '3e2d1c0b-9a8f-4e7d-8c6b-5a4f3e2d1c0b',
  customerId: customerSample.id,
  alertType: 'health_drop',
  severity: 'high',
  status: 'open',
  title: 'Health dropped by 18 points',
  message: 'Acme Corp fell from 72 to 54 in seven days; usage is the weakest dimension.',
  details: { previous_score: 72, score: 54, window_days: 7 },
  snoozedUntil: null,
  acknowledgedAt: null,
  resolvedAt: null,
  createdAt: new Date('2026-11-20T06:00:00.000Z'),
  updatedAt: new Date('2026-11-20T06:00:00.000Z'),
};

/** An endpoint's circuit breaker as the API and the endpoint.circuit_* events show it. */
export const webhookCircuit = z
  .object({
    state: z
      .enum(CIRCUIT_STATES)
      .describe(
        '`closed`: deliveries go out. `open`: too many recent attempts failed; deliveries wait (nothing is dropped) until a probe after `next_probe_at` succeeds. `half_open`: that probe is in flight.',
      ),
    opened_at: time.nullable().describe('When the breaker opened; null while closed.'),
    next_probe_at: time
      .nullable()
      .describe(
        'While open: the earliest time of the next probe, one delivery due then; null otherwise. Each failed probe doubles the wait, up to a cap.',
      ),
    failure_rate: probability.nullable().describe('The share of the endpoint’s recent attempts that failed; null when there were none.'),
    recent_attempts: int.describe(
      'The recent attempts `failure_rate` is taken over (the breaker’s window, a couple of minutes by default).',
    ),
  })
  .describe('The endpoint’s circuit breaker (docs/receiving-webhooks.md, "Circuit breaker").');

export const circuitSample: SourceOf<z.infer<typeof webhookCircuit>> = {
  state: 'open',
  openedAt: new Date('2026-11-20T06:00:00.000Z'),
  nextProbeAt: new Date('2026-11-20T06:00:30.000Z'),
  failureRate: 0.85,
  recentAttempts: 40,
};

export const webhookEndpoint = z.object({
  id: uuid,
  url: str,
  description: str.nullable(),
  events: z.array(str),
  enabled: z.boolean(),
  disabled_reason: str.nullable(),
  ordered: z
    .boolean()
    .describe(
      'Ordered delivery: an event is sent only once the one before it of the same sequence subject was delivered or given up; other subjects go out meanwhile.',
    ),
  signature_scheme: listedText(SIGNATURE_SCHEMES).describe(
    '`v0` (default): X-Webhook-Id, X-Webhook-Timestamp and a `v0=` hex HMAC in X-Webhook-Signature. `standard`: the Standard Webhooks headers webhook-id, webhook-timestamp and webhook-signature, carrying a `v1,` HMAC under the secret and a `v1a,` Ed25519 signature verifiable with `public_key`.',
  ),
  public_key: str
    .nullable()
    .describe(
      'The Ed25519 public key (`whpk_` + base64) that verifies the `v1a,` signatures of the `standard` scheme; null for an endpoint that has none yet (it gets one when switched to `standard`).',
    ),
  previous_public_key: str
    .nullable()
    .describe('The public key rotated out, whose `v1a,` signatures deliveries still carry until the previous secret expires.'),
  filters: jsonObject
    .nullable()
    .describe(
      'Payload filters by event type (docs/receiving-webhooks.md, "Filters"): an event of a type with a filter is sent only when every condition holds; null when the endpoint has none.',
    ),
  rate_limit_per_second: z
    .number()
    .nullable()
    .describe('The most deliveries a second sent to the endpoint, across every worker; null for no limit.'),
  circuit: webhookCircuit,
  created_at: time,
  updated_at: time,
});

const sequence = int.min(1).describe('The event’s number among the tenant’s events of its sequence subject: 1, 2, 3, … with no gap.');
const sequenceSubject = str.describe(
  'What the event is numbered under: `customer:<id>`, `invoice:<id>`, `subscription:<id>`, `endpoint:<id>` or `payment:<provider id>`.',
);

export const webhookDelivery = z.object({
  id: uuid.describe('The X-Webhook-Id, the same on every attempt.'),
  endpoint_id: uuid,
  event: str,
  test: z.boolean(),
  status: listedText(DELIVERY_STATUSES),
  attempts: int,
  next_attempt_at: time.nullable(),
  last_status_code: int.nullable(),
  last_error: str.nullable(),
  sequence: sequence.nullable().describe('Sent as X-Webhook-Sequence; null for a Test delivery.'),
  sequence_subject: sequenceSubject.nullable().describe('Sent as X-Webhook-Sequence-Subject; null for a Test delivery.'),
  created_at: time,
  attempt_log: z.array(
    z.object({
      attempt: int,
      started_at: time,
      duration_ms: int,
      status_code: int.nullable(),
      error: str.nullable(),
      response_body: str.nullable(),
    }),
  ),
});

const latency = z
  .object({ p50: num.nullable(), p95: num.nullable(), p99: num.nullable() })
  .describe(
    'Percentiles of the attempts’ durations in milliseconds, from sending to the answer or the timeout; estimated from a histogram whose buckets are 12 % apart, so within about 12 % of the exact value. Null without attempts.',
  );

/** An endpoint's delivery figures over a recent window. */
export const webhookEndpointStats = z
  .object({
    endpoint_id: uuid,
    window: z
      .enum(STATS_WINDOW_NAMES)
      .describe('`hour`: the last hour, in points of five minutes. `day`: the last 24 hours, in points of an hour.'),
    from: time.describe('The start of the window: the start of its first point.'),
    to: time,
    attempts: int.describe('Attempts made in the window (Tests excluded).'),
    succeeded: int,
    failed: int.describe('Attempts that failed: an answer other than 2xx, a timeout, a refused or reset connection.'),
    success_rate: probability.nullable().describe('succeeded / attempts; null without attempts.'),
    latency_ms: latency,
    pending: int.describe('Deliveries waiting now: due, scheduled for a retry, or held by the circuit breaker.'),
    held: int.describe('Of those, the ones the circuit breaker holds.'),
    oldest_pending_age_seconds: num
      .nullable()
      .describe('How long the oldest delivery still pending has existed; null when none is pending.'),
    points: z
      .array(
        z.object({
          from: time,
          attempts: int,
          succeeded: int,
          failed: int,
          p95_ms: num.nullable(),
        }),
      )
      .describe('The window point by point, oldest first, every point present (zero when nothing was attempted).'),
  })
  .describe('How an endpoint’s deliveries have gone lately (docs/receiving-webhooks.md, "Delivery figures").');

/** An outbound event as the catch-up read returns it. */
export const webhookEvent = z.object({
  id: uuid.describe('The event’s id, the `id` of the CloudEvents envelope in the delivery log.'),
  type: str.describe('The event type, as in X-Webhook-Event.'),
  sequence,
  sequence_subject: sequenceSubject.meta({ examples: [SEQUENCE_SUBJECT_EXAMPLE] }),
  created_at: time,
  payload: jsonObject.describe('The body every delivery of the event sends.'),
});

const dimensionNumbers = z.object(
  Object.fromEntries(DIMENSIONS.map((k) => [k, num.nullable()])) as Record<(typeof DIMENSIONS)[number], z.ZodNullable<z.ZodNumber>>,
);

export const healthPoint = z.object({
  date: z.iso.date(),
  score: score.nullable(),
  status: z.enum(HEALTH_STATUSES).nullable(),
  dimensions: dimensionNumbers,
  churn_probability: num.nullable(),
  computed_at: time,
});

const movement = (n: z.ZodNumber) =>
  z.object({ from: n.nullable(), to: n.nullable(), change: num.nullable().describe('to − from; null when either is null.') });
const inputValue = z
  .union([num.nullable(), str, z.boolean(), jsonObject])
  .describe('The input’s value: a number, a time, a status, the weights; null when unknown.');

export const healthChangeSource = z.object({
  type: listedText(CHANGE_SOURCE_TYPES),
  kind: str.describe('The signal kind (`billing.payment_failed`, `usage.event`, …) or, for an API change, the audited action.'),
  occurred_at: time,
  recorded_at: time.nullable().describe('When the signal was recorded.'),
  signal_id: uuid.nullable(),
  usage_event: str.nullable().describe('The event name a usage event was sent with.'),
  inbound_event_id: uuid.nullable().describe('The stored inbound event the signal came from.'),
  provider: str.nullable(),
  event_type: str.nullable().describe('The provider’s event type, e.g. `invoice.payment_failed`.'),
  provider_event_id: str.nullable().describe('The provider’s own id of the event or delivery.'),
  received_at: time.nullable(),
  audit_event_id: uuid.nullable().describe('For an API change: its entry in the audit log.'),
  actor: str.nullable().describe('For an API change: who made it.'),
  body_retained: z
    .boolean()
    .nullable()
    .describe(
      'For an inbound event: whether its body is still stored (retention and erasure remove bodies; the event’s id, type and times stay).',
    ),
});

export const healthChange = z.object({
  id: uuid,
  computed_at: time,
  score: movement(score),
  churn_probability: movement(probability),
  dimensions: z.array(z.object({ key: z.enum(DIMENSIONS) }).extend(movement(num).shape)).length(DIMENSIONS.length),
  drivers: z
    .array(
      z.object({
        input: str,
        label: str,
        group: listedText(INPUT_GROUPS),
        from: inputValue,
        to: inputValue,
        score: num.describe('Points of the overall score this input moved; the drivers’ points add up to the score’s change.'),
        churn_probability: num.describe('What this input moved the churn probability by; the drivers’ add up to its change.'),
        dimensions: z.array(z.object({ key: z.enum(DIMENSIONS), points: num })).describe('Only the dimensions it moved.'),
        sources: z.array(healthChangeSource).describe('What was recorded since the computation before that feeds this input.'),
      }),
    )
    .describe('The inputs that moved the outputs, largest effect first.'),
});

/** How many inputs an announcement names. */
export const ANNOUNCED_DRIVERS = 5;
/** What an announcement says moved its value since the one announced before it (docs/scoring.md, "Why it moved"). */
const announcedDrivers = <K extends string>(unit: K, top: z.ZodNumber) =>
  z
    .object({
      since: time.describe(
        'Just after the value before was announced: `GET /api/v1/customers/{id}/health/changes?since=` with this time lists exactly the changes summed here, each input with its sources.',
      ),
      top: z
        .array(z.object({ input: str, label: str, group: listedText(INPUT_GROUPS) }).extend({ [unit]: top } as Record<K, z.ZodNumber>))
        .max(ANNOUNCED_DRIVERS)
        .describe(`The inputs that moved it most since then, largest first (at most ${ANNOUNCED_DRIVERS}).`),
      other: num.describe('What the other inputs moved it by together: the top drivers and this add up to the change.'),
    })
    .nullable()
    .describe(
      'Why it moved since it was last announced; null for a first announcement, for the first announcement of a customer last announced before announcements carried drivers, or when the changes in between are no longer all kept.',
    );
export const healthDrivers = announcedDrivers('score', num.describe('Points of the overall score this input moved.'));
export const churnDrivers = announcedDrivers('churn_probability', num.describe('What this input moved the churn probability by.'));

export const weights = z.object(Object.fromEntries(DIMENSIONS.map((k) => [k, num])) as Record<(typeof DIMENSIONS)[number], z.ZodNumber>);
export const healthWeights = weights.extend({ is_default: z.boolean() });

const modelMetrics = z.object({
  samples: int,
  churned: int,
  holdout: int,
  auc: num,
  brier: num,
  baseline: z.object({ model_version: str, auc: num, brier: num }),
});

export const churnModel = z.object({
  model_version: str,
  kind: z
    .enum(CHURN_MODEL_KINDS)
    .describe(
      '`default`: the documented coefficients. `trained`: slopes fitted on the tenant’s labels. `calibrated_default`: the default’s slopes (the same ranking) with probabilities calibrated on the tenant’s labels, stored when a trained model ranked held-out customers worse than the default.',
    ),
  trained_at: time.nullable(),
  intercept: num,
  features: z.array(z.object({ code: str, description: str, coefficient: num, baseline: num })),
  metrics: modelMetrics.nullable(),
});

export const churnTraining = z.object({
  model_version: str,
  kind: z
    .enum(CHURN_MODEL_KINDS)
    .describe(
      'What the training stored: `trained`, or `calibrated_default` when the trained model ranked held-out customers worse than the default.',
    ),
  trained_at: time,
  activated: z.boolean(),
  ...modelMetrics.shape,
});

export const churnTrainingRun = z
  .object({
    id: uuid,
    status: z.enum(TRAINING_STATUSES),
    activate: z.boolean().describe('Whether the model is put in use when it may be.'),
    started_at: time,
    finished_at: time.nullable(),
    result: churnTraining.nullable().describe('Once `succeeded`.'),
    error: z
      .object({ code: str.describe('The error code a request would have been refused with, e.g. `not_enough_data`.'), message: str })
      .nullable()
      .describe('Once `failed`: nothing was stored.'),
  })
  .describe('A churn training from its start to its model or its failure; kept at least 90 days from its start.');

export const churnOutcome = z.object({ customer_id: uuid, churned: z.boolean(), at: time, source: str, created_at: time });

export const auditEvent = z
  .object({
    id: uuid,
    occurred_at: time,
    action: str.describe('What happened, as `<thing>.<what happened>`, e.g. `api_key.created`.'),
    actor_type: listedText(['user', 'api_key', 'operator']),
    actor_id: uuid.nullable(),
    actor_label: str.describe("The user's email or the key's name and prefix at the time.").nullable(),
    client_address: str.nullable(),
    request_id: str.nullable(),
    target_type: str.nullable(),
    target_id: str.nullable(),
    changes: jsonObject.describe('Edits as `{ field: { from, to } }`, or facts of the action.'),
  })
  .describe('A security-relevant change to the workspace: who made it, when, from where, and what changed (never a secret).');

export const workspace = z
  .object({
    id: uuid,
    name: str,
    plan: z.enum(PLANS),
    created_at: time,
    deletion: z
      .object({ requested_at: time, due_at: time, requested_by: str.describe('The owner who asked, by email.').nullable() })
      .describe('Everything goes at `due_at` unless an owner cancels it before.')
      .nullable(),
  })
  .describe('The workspace; `deletion` is set while its deletion is scheduled.');

const retentionWindow = z.object({ days: int, default_days: int, min_days: int, max_days: int, is_default: z.boolean() });
export const retention = z
  .object(
    Object.fromEntries(RETENTION_KEYS.map((k) => [retentionField(k), retentionWindow.describe(RETENTION_SETTINGS[k].what)])) as {
      [K in RetentionKey as ReturnType<typeof retentionField<K>>]: typeof retentionWindow;
    },
  )
  .describe('Days each kind of data is kept, with the default and the bounds a tenant may choose within.');

/** The components of /openapi.json, in the order it lists them; routes refer to them by `ref`. */
export const COMPONENTS = {
  problem: component('Problem', problem),
  customerListItem: component('CustomerListItem', customerListItem),
  customer: component('Customer', customer),
  health: component('CustomerHealth', health),
  healthPoint: component('HealthHistoryPoint', healthPoint),
  healthChange: component('HealthChange', healthChange),
  healthWeights: component('HealthWeights', healthWeights),
  churnPrediction: component('ChurnPrediction', churnPrediction),
  churnModel: component('ChurnModel', churnModel),
  churnTraining: component('ChurnTraining', churnTraining),
  churnTrainingRun: component('ChurnTrainingRun', churnTrainingRun),
  churnOutcome: component('ChurnOutcome', churnOutcome),
  alert: component('Alert', alert),
  webhookEndpoint: component('WebhookEndpoint', webhookEndpoint),
  webhookDelivery: component('WebhookDelivery', webhookDelivery),
  webhookEndpointStats: component('WebhookEndpointStats', webhookEndpointStats),
  webhookEvent: component('WebhookEvent', webhookEvent),
  auditEvent: component('AuditEvent', auditEvent),
  workspace: component('Workspace', workspace),
  retention: component('RetentionSettings', retention),
};
