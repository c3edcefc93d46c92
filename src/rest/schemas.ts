// JSON Schemas of the REST API: they validate requests, serialise responses and feed /openapi.json.
import {
  ALERT_SEVERITY_VALUES,
  ALERT_STATUS_VALUES,
  ALERT_TYPE_VALUES,
  HEALTH_STATUS_VALUES,
  PROVIDER_VALUES,
  RISK_LEVEL_VALUES,
} from '../schema/enums.ts';
import { DIMENSIONS } from '../scoring/dimensions.ts';

// Under OpenAPI 3.0 `nullable` does not widen an `enum`: null must be listed too.
const nullable = (schema: Record<string, unknown>) => ({
  ...schema,
  nullable: true,
  ...(Array.isArray(schema.enum) ? { enum: [...schema.enum, null] } : {}),
});
const str = { type: 'string' } as const;
const dateTime = { type: 'string', format: 'date-time' } as const;
const uuid = { type: 'string', format: 'uuid' } as const;

export const problem = {
  $id: 'Problem',
  type: 'object',
  description: 'RFC 9457 problem details.',
  properties: {
    type: str,
    title: str,
    status: { type: 'integer' },
    detail: str,
    code: str,
    errors: { type: 'array', items: { type: 'object', properties: { path: str, message: str } } },
  },
  required: ['type', 'title', 'status', 'detail', 'code'],
} as const;

export const pageQuery = {
  limit: { type: 'integer', minimum: 1, maximum: 100, default: 25, description: 'Page size (1-100).' },
  cursor: { type: 'string', minLength: 1, maxLength: 512, description: 'The next_cursor of the previous page.' },
} as const;

export const listOf = (item: Record<string, unknown>) => ({
  type: 'object',
  properties: {
    data: { type: 'array', items: item },
    has_more: { type: 'boolean' },
    next_cursor: nullable(str),
  },
  required: ['data', 'has_more', 'next_cursor'],
});

const customerProps = {
  id: uuid,
  external_id: nullable(str),
  name: str,
  email: nullable(str),
  domain: nullable(str),
  health_score: nullable({ type: 'integer', minimum: 0, maximum: 100 }),
  health_status: nullable({ type: 'string', enum: HEALTH_STATUS_VALUES }),
  churn_probability: nullable({ type: 'number' }),
  churn_risk_level: nullable({ type: 'string', enum: RISK_LEVEL_VALUES }),
  created_at: dateTime,
  updated_at: dateTime,
};

export const customerItem = { $id: 'CustomerListItem', type: 'object', properties: customerProps } as const;

export const identity = {
  type: 'object',
  properties: { provider: { type: 'string', enum: PROVIDER_VALUES }, external_id: { type: 'string', minLength: 1, maxLength: 200 } },
  required: ['provider', 'external_id'],
  additionalProperties: false,
} as const;

export const customer = {
  $id: 'Customer',
  type: 'object',
  properties: { ...customerProps, identities: { type: 'array', items: identity } },
} as const;

const customerWritable = {
  name: { type: 'string', minLength: 1, maxLength: 200 },
  external_id: nullable({ type: 'string', minLength: 1, maxLength: 200 }),
  email: nullable({ type: 'string', maxLength: 320 }),
  domain: nullable({ type: 'string', maxLength: 253 }),
};

export const customerCreate = {
  type: 'object',
  properties: { ...customerWritable, identities: { type: 'array', maxItems: 50, items: identity } },
  required: ['name'],
  additionalProperties: false,
} as const;

export const customerUpdate = {
  type: 'object',
  properties: customerWritable,
  minProperties: 1,
  additionalProperties: false,
} as const;

export const health = {
  $id: 'CustomerHealth',
  type: 'object',
  properties: {
    customer_id: uuid,
    score: nullable({ type: 'integer', minimum: 0, maximum: 100 }),
    status: nullable({ type: 'string', enum: HEALTH_STATUS_VALUES }),
    computed_at: nullable(dateTime),
    trend: {
      type: 'object',
      properties: { change_7d: nullable({ type: 'number' }), change_30d: nullable({ type: 'number' }) },
    },
    weakest_dimension: nullable({ type: 'string', enum: DIMENSIONS }),
    dimensions: {
      type: 'array',
      minItems: 5,
      maxItems: 5,
      items: {
        type: 'object',
        properties: {
          key: { type: 'string', enum: DIMENSIONS },
          score: nullable({ type: 'number' }),
          weight: { type: 'number' },
          contribution: nullable({ type: 'number' }),
          trend: nullable({ type: 'number' }),
          signals: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                key: str,
                label: str,
                value: { anyOf: [{ type: 'number', nullable: true }, str], description: 'A number or a label; null when unknown.' },
              },
            },
          },
        },
      },
    },
  },
} as const;

export const churnPrediction = {
  $id: 'ChurnPrediction',
  type: 'object',
  properties: {
    customer_id: uuid,
    probability: nullable({ type: 'number', minimum: 0, maximum: 1 }),
    risk_level: nullable({ type: 'string', enum: RISK_LEVEL_VALUES }),
    risk_factors: {
      type: 'array',
      items: { type: 'object', properties: { code: str, description: str, impact: { type: 'number' } } },
    },
    recommended_interventions: {
      type: 'array',
      items: { type: 'object', properties: { code: str, title: str, description: str, priority: str } },
    },
    model_version: nullable(str),
    predicted_at: nullable(dateTime),
  },
} as const;

export const alert = {
  $id: 'Alert',
  type: 'object',
  properties: {
    id: uuid,
    customer_id: uuid,
    alert_type: { type: 'string', enum: ALERT_TYPE_VALUES },
    severity: { type: 'string', enum: ALERT_SEVERITY_VALUES },
    status: { type: 'string', enum: ALERT_STATUS_VALUES },
    title: str,
    message: str,
    details: { type: 'object', additionalProperties: true },
    snoozed_until: nullable(dateTime),
    acknowledged_at: nullable(dateTime),
    resolved_at: nullable(dateTime),
    created_at: dateTime,
    updated_at: dateTime,
  },
} as const;

export const alertQuery = {
  type: 'object',
  properties: {
    ...pageQuery,
    status: { type: 'string', enum: ALERT_STATUS_VALUES },
    severity: { type: 'string', enum: ALERT_SEVERITY_VALUES },
    alert_type: { type: 'string', enum: ALERT_TYPE_VALUES },
    customer_id: { ...uuid, description: 'Only alerts of this customer.' },
  },
} as const;

export const alertUpdate = {
  type: 'object',
  properties: {
    status: {
      type: 'string',
      enum: ALERT_STATUS_VALUES,
      description: 'acknowledged, snoozed (with snoozed_until), resolved, or open to reopen.',
    },
    snoozed_until: { ...dateTime, description: 'Required with status snoozed.' },
  },
  required: ['status'],
  additionalProperties: false,
} as const;

export const webhookEndpoint = {
  $id: 'WebhookEndpoint',
  type: 'object',
  properties: {
    id: uuid,
    url: str,
    description: nullable(str),
    events: { type: 'array', items: str },
    enabled: { type: 'boolean' },
    disabled_reason: nullable(str),
    created_at: dateTime,
    updated_at: dateTime,
  },
} as const;

export const webhookDelivery = {
  $id: 'WebhookDelivery',
  type: 'object',
  properties: {
    id: { ...uuid, description: 'The X-Webhook-Id, the same on every attempt.' },
    endpoint_id: uuid,
    event: str,
    test: { type: 'boolean' },
    status: { type: 'string', enum: ['pending', 'succeeded', 'failed'] },
    attempts: { type: 'integer' },
    next_attempt_at: nullable(dateTime),
    last_status_code: nullable({ type: 'integer' }),
    last_error: nullable(str),
    created_at: dateTime,
    attempt_log: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          attempt: { type: 'integer' },
          started_at: dateTime,
          duration_ms: { type: 'integer' },
          status_code: nullable({ type: 'integer' }),
          error: nullable(str),
          response_body: nullable(str),
        },
      },
    },
  },
} as const;

const nullableNumber = nullable({ type: 'number' });
const dimensionNumbers = Object.fromEntries(DIMENSIONS.map((k) => [k, nullableNumber]));

export const healthPoint = {
  $id: 'HealthHistoryPoint',
  type: 'object',
  properties: {
    date: { type: 'string', format: 'date' },
    score: nullable({ type: 'integer', minimum: 0, maximum: 100 }),
    status: nullable({ type: 'string', enum: HEALTH_STATUS_VALUES }),
    dimensions: { type: 'object', properties: dimensionNumbers },
    churn_probability: nullableNumber,
    computed_at: dateTime,
  },
} as const;

export const healthWeights = {
  $id: 'HealthWeights',
  type: 'object',
  properties: { ...Object.fromEntries(DIMENSIONS.map((k) => [k, { type: 'number' }])), is_default: { type: 'boolean' } },
} as const;

export const healthWeightsInput = {
  type: 'object',
  description: 'Each from 0 to 1; together they sum to 1.',
  properties: Object.fromEntries(DIMENSIONS.map((k) => [k, { type: 'number' }])),
  required: [...DIMENSIONS],
  additionalProperties: false,
} as const;

const modelMetrics = {
  samples: { type: 'integer' },
  churned: { type: 'integer' },
  holdout: { type: 'integer' },
  auc: { type: 'number' },
  brier: { type: 'number' },
  baseline: { type: 'object', properties: { model_version: str, auc: { type: 'number' }, brier: { type: 'number' } } },
};

export const churnModel = {
  $id: 'ChurnModel',
  type: 'object',
  properties: {
    model_version: str,
    trained_at: nullable(dateTime),
    intercept: { type: 'number' },
    features: {
      type: 'array',
      items: { type: 'object', properties: { code: str, description: str, coefficient: { type: 'number' }, baseline: { type: 'number' } } },
    },
    metrics: nullable({ type: 'object', properties: modelMetrics }),
  },
} as const;

export const churnTraining = {
  $id: 'ChurnTraining',
  type: 'object',
  properties: { model_version: str, trained_at: dateTime, activated: { type: 'boolean' }, ...modelMetrics },
} as const;

export const churnOutcome = {
  $id: 'ChurnOutcome',
  type: 'object',
  properties: { customer_id: uuid, churned: { type: 'boolean' }, at: dateTime, source: str, created_at: dateTime },
} as const;

export const auditEvent = {
  $id: 'AuditEvent',
  type: 'object',
  description: 'A security-relevant change to the workspace: who made it, when, from where, and what changed (never a secret).',
  properties: {
    id: uuid,
    occurred_at: dateTime,
    action: { ...str, description: 'What happened, as `<thing>.<what happened>`, e.g. `api_key.created`.' },
    actor_type: { type: 'string', enum: ['user', 'api_key', 'operator'] },
    actor_id: nullable(uuid),
    actor_label: nullable({ ...str, description: "The user's email or the key's name and prefix at the time." }),
    client_address: nullable(str),
    request_id: nullable(str),
    target_type: nullable(str),
    target_id: nullable(str),
    changes: { type: 'object', additionalProperties: true, description: 'Edits as `{ field: { from, to } }`, or facts of the action.' },
  },
} as const;

export const auditQuery = {
  type: 'object',
  properties: {
    ...pageQuery,
    action: { type: 'string', pattern: '^[a-z_]+\\.[a-z_]+$', maxLength: 100, description: 'Only this action, e.g. `api_key.created`.' },
    actor_id: { ...uuid, description: 'Only changes made by this user or API key.' },
    target_id: { type: 'string', minLength: 1, maxLength: 200, description: 'Only changes to this object.' },
    since: { ...dateTime, description: 'Events at or after this time.' },
    until: { ...dateTime, description: 'Events before this time.' },
  },
} as const;

/**
 * Every property of a response object is always sent (null when it has no value), so each object
 * schema lists all its properties as required, nested objects included: generated clients then type
 * them as present. Objects that list `required` themselves keep their own list.
 */
function allRequired<T>(schema: T): T {
  if (Array.isArray(schema)) return schema.map(allRequired) as T;
  if (!schema || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) out[k] = k === 'examples' || k === 'enum' ? v : allRequired(v);
  const props = out.properties as Record<string, unknown> | undefined;
  if (props && typeof props === 'object' && !('required' in out)) out.required = Object.keys(props);
  return out as T;
}

export const SHARED_SCHEMAS = [
  problem,
  customerItem,
  customer,
  health,
  healthPoint,
  healthWeights,
  churnPrediction,
  churnModel,
  churnTraining,
  churnOutcome,
  alert,
  webhookEndpoint,
  webhookDelivery,
  auditEvent,
].map(allRequired);
