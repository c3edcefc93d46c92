// The shapes of what REST callers send: bodies, query strings, path parameters. Each route validates with
// the JSON Schema derived from its shape, and its handler's types are the shape's (ContractTypeProvider).
// Domain rules beyond a field's type and size (a domain name's form, weights summing to 1, a snooze in the
// future) are the services' and the GraphQL inputs', since GraphQL callers must meet them too.
import { z } from 'zod';
import {
  ALERT_SEVERITIES,
  ALERT_STATUSES,
  ALERT_TYPES,
  DIMENSIONS,
  EXPORT_DATASET_CONTENTS,
  EXPORT_DATASETS,
  EXPORT_FORMATS,
  HEALTH_STATUSES,
  RISK_LEVELS,
  SIGNATURE_SCHEMES,
  STATS_WINDOW_NAMES,
} from './enums.ts';
import { identity } from './entities.ts';
import { RETENTION_KEYS, RETENTION_SETTINGS, type RetentionKey, retentionField } from './retention.ts';
import { time, uuid } from './wire.ts';
import { MAX_SEQUENCE_SUBJECT_LENGTH, SEQUENCE_SUBJECT_PATTERN } from './sequence-subject.ts';

/** The most usage events one request may carry. */
export const MAX_USAGE_EVENTS = 500;

export const pageQuery = z.object({
  limit: z.number().int().min(1).max(100).default(25).describe('Page size (1-100).'),
  cursor: z.string().min(1).max(512).describe('The next_cursor of the previous page.').optional(),
});

export const customerParams = z.object({ customer_id: uuid });
export const trainingParams = z.object({ training_id: uuid });

export const healthChangeQuery = pageQuery.extend({
  since: time.describe('Changes computed at or after this time.').optional(),
});
export const alertParams = z.object({ alert_id: uuid });
export const idParams = z.object({ id: uuid });

export const customerQuery = pageQuery.extend({
  risk_level: z.enum(RISK_LEVELS).optional(),
  health_status: z.enum(HEALTH_STATUSES).optional(),
});

const customerWritable = {
  name: z.string().min(1).max(200),
  external_id: z.string().min(1).max(200).nullable().optional(),
  email: z.string().max(320).nullable().optional(),
  domain: z.string().max(253).nullable().optional(),
};

export const customerCreate = z.strictObject({ ...customerWritable, identities: z.array(identity).max(50).optional() });
export const customerUpdate = z.strictObject({ ...customerWritable, name: customerWritable.name.optional() }).meta({ minProperties: 1 });

export const alertQuery = pageQuery.extend({
  status: z.enum(ALERT_STATUSES).optional(),
  severity: z.enum(ALERT_SEVERITIES).optional(),
  alert_type: z.enum(ALERT_TYPES).optional(),
  customer_id: uuid.describe('Only alerts of this customer.').optional(),
});

export const alertUpdate = z.strictObject({
  status: z.enum(ALERT_STATUSES).describe('acknowledged, snoozed (with snoozed_until), resolved, or open to reopen.'),
  snoozed_until: time.describe('Required with status snoozed.').optional(),
});

export const weightsInput = z
  .strictObject(Object.fromEntries(DIMENSIONS.map((k) => [k, z.number()])) as Record<(typeof DIMENSIONS)[number], z.ZodNumber>)
  .describe('Each from 0 to 1; together they sum to 1.');

export const churnOutcomeInput = z.strictObject({ churned: z.boolean(), at: time.describe('Default now.').optional() });

const filterValue = z.union([z.string().max(200), z.number(), z.boolean()]);
const filterValues = z.array(filterValue).min(1).max(20);
/** One payload field's condition: every operator given must hold. */
const filterCondition = z
  .strictObject({
    eq: filterValue.optional(),
    ne: filterValue.optional(),
    in: filterValues.optional(),
    not_in: filterValues.optional(),
    gt: z.number().optional(),
    gte: z.number().optional(),
    lt: z.number().optional(),
    lte: z.number().optional(),
  })
  .meta({ minProperties: 1 });

const endpointFields = {
  url: z.string().max(2048).describe('An https:// URL.'),
  events: z.array(z.string()).max(50),
  description: z.string().max(500).nullable().optional(),
  ordered: z
    .boolean()
    .describe('Send an event only once the one before it of the same sequence subject was delivered or given up (default false).')
    .optional(),
  filters: z
    .record(
      z.string().describe('An event type the endpoint subscribes to.'),
      z.record(z.string().describe('A payload field; `a.b` for a nested one.'), filterCondition).meta({ maxProperties: 10 }),
    )
    .nullable()
    .describe(
      'Payload filters by event type, e.g. `{"alert.created": {"severity": {"in": ["high", "critical"]}}}`: an event of a type with a filter is sent only when every condition holds (a missing or null field, or one of another type, fails its condition). `null` removes them all. docs/receiving-webhooks.md, "Filters".',
    )
    .optional(),
  rate_limit_per_second: z
    .number()
    .min(0.01)
    .max(1000)
    .nullable()
    .describe(
      'The most deliveries a second sent to the endpoint, across every worker, from 0.01 (one every 100 s) to 1000; null (the default) for no limit. docs/receiving-webhooks.md, "Rate limit".',
    )
    .optional(),
  signature_scheme: z
    .enum(SIGNATURE_SCHEMES)
    .describe(
      'How deliveries are signed: `v0` (default), our X-Webhook-* headers; `standard`, the Standard Webhooks headers with `v1,` HMAC and `v1a,` Ed25519 signatures (docs/receiving-webhooks.md).',
    )
    .optional(),
};
/** `events` names the event types; the description lists them (src/outbox/events/registry.ts). */
export const endpointCreate = (eventNames: readonly string[]) =>
  z
    .strictObject({ ...endpointFields, events: endpointFields.events.describe(`Any of: ${eventNames.join(', ')}.`) })
    .meta({ minProperties: 1 });
export const endpointUpdate = (eventNames: readonly string[]) =>
  z
    .strictObject({
      url: endpointFields.url.optional(),
      events: endpointFields.events.describe(`Any of: ${eventNames.join(', ')}.`).optional(),
      description: endpointFields.description,
      enabled: z.boolean().optional(),
      ordered: endpointFields.ordered,
      signature_scheme: endpointFields.signature_scheme,
      filters: endpointFields.filters,
      rate_limit_per_second: endpointFields.rate_limit_per_second,
    })
    .meta({ minProperties: 1 });

export const endpointTest = z.strictObject({ event: z.string().optional() }).nullable();

export const webhookEventQuery = pageQuery.extend({
  subject: z
    .string()
    .max(MAX_SEQUENCE_SUBJECT_LENGTH)
    .regex(new RegExp(SEQUENCE_SUBJECT_PATTERN))
    .describe('The sequence subject, as X-Webhook-Sequence-Subject names it, e.g. `customer:<id>`.'),
  after_sequence: z
    .number()
    .int()
    .min(0)
    .max(2_147_483_647)
    .describe('Only events numbered after this one: the last number you processed (default 0, from the first).')
    .optional(),
});
export const replayInput = z.strictObject({ since: time });

export const endpointStatsQuery = z.object({
  window: z
    .enum(STATS_WINDOW_NAMES)
    .default('day')
    .describe('`hour`: the last hour, in points of five minutes. `day`: the last 24 hours, in points of an hour.'),
});

export const usageEventsInput = z.strictObject({
  events: z
    .array(
      // Item fields are checked one by one (src/services/usage-events.ts), so one bad event does not refuse the batch.
      z.object({
        customer_id: z.string().optional(),
        external_id: z.string().optional(),
        event: z.string().optional(),
        timestamp: z.string().describe('ISO 8601, default now').optional(),
        properties: z.record(z.string(), z.unknown()).optional(),
        user_id: z.string().optional(),
      }),
    )
    .min(1)
    .max(MAX_USAGE_EVENTS),
});
export const preferHeaders = z.object({
  prefer: z.string().max(1000).optional().describe('`respond-async`: answer 202 at once, without waiting for the result.'),
});
export const idempotencyHeaders = z.object({ 'idempotency-key': z.string().min(1).max(255).optional() });

export const auditQuery = pageQuery.extend({
  action: z
    .string()
    .regex(/^[a-z_]+\.[a-z_]+$/)
    .max(100)
    .describe('Only this action, e.g. `api_key.created`.')
    .optional(),
  actor_id: uuid.describe('Only changes made by this user or API key.').optional(),
  target_id: z.string().min(1).max(200).describe('Only changes to this object.').optional(),
  since: time.describe('Events at or after this time.').optional(),
  until: time.describe('Events before this time.').optional(),
});

export const loginInput = z.strictObject({ email: z.string().max(320), password: z.string().max(1024) });

export const workspaceDeletionInput = z.strictObject({
  confirm_name: z.string().min(1).max(200).describe('The workspace’s name, to confirm.'),
});

const retentionDays = (k: RetentionKey) =>
  z.number().int().min(RETENTION_SETTINGS[k].min).max(RETENTION_SETTINGS[k].max).nullable().optional();
export const retentionUpdate = z
  .strictObject(
    Object.fromEntries(RETENTION_KEYS.map((k) => [retentionField(k), retentionDays(k)])) as {
      [K in RetentionKey as ReturnType<typeof retentionField<K>>]: ReturnType<typeof retentionDays>;
    },
  )
  .describe('Days to keep each kind of data, within its bounds; `null` returns it to the default, an absent field leaves it.');

export const exportParams = z.object({
  dataset: z.enum(EXPORT_DATASETS).describe(EXPORT_DATASETS.map((d) => `\`${d}\`: ${EXPORT_DATASET_CONTENTS[d]}.`).join(' ')),
});
export const exportQuery = z.object({
  format: z.enum(EXPORT_FORMATS).default('ndjson'),
  since: time.describe('Rows at or after this time.').optional(),
  until: time.describe('Rows before this time.').optional(),
});
