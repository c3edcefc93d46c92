import { z } from 'zod';
import { AlertSeverity, AlertStatus, AlertType, HealthStatus, InvoiceStatus, RiskLevel } from '../generated/prisma/enums.ts';

// The outbound event types, each with the schema of its payload and an example: the one list behind
// `enqueueEvents` (a misspelt name or a payload of the wrong shape does not compile), the catalog that
// `GET /api/v1/webhook-event-types` serves, the Test delivery's sample, and the `webhooks` section of
// /openapi.json. docs/decisions.md §5 states the rules.

const uuid = z.uuid();
const time = z.iso.datetime({ offset: true });
const values = <T extends Record<string, string>>(e: T) => z.enum(Object.values(e) as [T[keyof T], ...T[keyof T][]]);
/** Amounts are strings with two fraction digits in the currency's unit (docs/decisions.md §5). */
const amount = z.string().regex(/^-?\d+\.\d{2}$/);

const invoice = z.object({
  tenant_id: uuid,
  invoice_id: uuid,
  status: values(InvoiceStatus),
  total: amount,
  currency: z.string().describe('ISO 4217, lower case.'),
  customer_id: uuid.nullable(),
  due_at: time.nullable(),
});

const payment = z.object({
  tenant_id: uuid,
  payment_id: z.string().describe("The provider's id of the payment (or of the invoice, when the provider names no payment)."),
  invoice_id: uuid.nullable(),
  customer_id: uuid.nullable(),
  amount,
  currency: z.string(),
  reason: z.string().nullable(),
});

const customer = z.object({
  tenant_id: uuid,
  id: uuid,
  external_id: z.string().nullable(),
  name: z.string(),
  email: z.string().nullable(),
  domain: z.string().nullable(),
  health_score: z.number().int().min(0).max(100).nullable(),
  health_status: values(HealthStatus).nullable(),
  churn_probability: z.number().min(0).max(1).nullable(),
  churn_risk_level: values(RiskLevel).nullable(),
  created_at: time,
  updated_at: time,
});

const alert = z.object({
  tenant_id: uuid,
  id: uuid,
  customer_id: uuid,
  alert_type: values(AlertType),
  severity: values(AlertSeverity),
  status: values(AlertStatus),
  title: z.string(),
  message: z.string(),
  details: z.record(z.string(), z.unknown()),
  snoozed_until: time.nullable(),
  acknowledged_at: time.nullable(),
  resolved_at: time.nullable(),
  created_at: time,
  updated_at: time,
});

const EXAMPLE_TENANT = '6f1c2a9e-3d4b-4c8a-9e1f-2a3b4c5d6e7f';
const EXAMPLE_CUSTOMER = '0b8e3f1a-5c2d-4e6f-8a9b-1c2d3e4f5a6b';
const EXAMPLE_INVOICE = '9d4c1b2a-7e6f-4a5b-8c9d-0e1f2a3b4c5d';

const invoiceExample = (status: z.infer<typeof invoice>['status']): z.infer<typeof invoice> => ({
  tenant_id: EXAMPLE_TENANT,
  invoice_id: EXAMPLE_INVOICE,
  status,
  total: '123.45',
  currency: 'usd',
  customer_id: EXAMPLE_CUSTOMER,
  due_at: '2026-12-24T00:00:00.000Z',
});
const paymentExample = (reason: string): z.infer<typeof payment> => ({
  tenant_id: EXAMPLE_TENANT,
  payment_id: 'pi_3Pb2024AbCdEf',
  invoice_id: EXAMPLE_INVOICE,
  customer_id: EXAMPLE_CUSTOMER,
  amount: '49.00',
  currency: 'usd',
  reason,
});
const customerExample: z.infer<typeof customer> = {
  tenant_id: EXAMPLE_TENANT,
  id: EXAMPLE_CUSTOMER,
  external_id: 'crm-4711',
  name: 'Acme Corp',
  email: 'billing@acme.example',
  domain: 'acme.example',
  health_score: 72,
  health_status: 'neutral',
  churn_probability: 0.18,
  churn_risk_level: 'low',
  created_at: '2026-09-01T10:00:00.000Z',
  updated_at: '2026-11-20T06:00:00.000Z',
};
const alertExample = (status: 'open' | 'resolved'): z.infer<typeof alert> => ({
  tenant_id: EXAMPLE_TENANT,
  id: '3e2d1c0b-9a8f-4e7d-8c6b-5a4f3e2d1c0b',
  customer_id: EXAMPLE_CUSTOMER,
  alert_type: 'health_drop',
  severity: 'high',
  status,
  title: 'Health dropped by 18 points',
  message: 'Acme Corp fell from 72 to 54 in seven days; usage is the weakest dimension.',
  details: { previous_score: 72, score: 54, window_days: 7 },
  snoozed_until: null,
  acknowledged_at: null,
  resolved_at: status === 'resolved' ? '2026-11-22T08:00:00.000Z' : null,
  created_at: '2026-11-20T06:00:00.000Z',
  updated_at: status === 'resolved' ? '2026-11-22T08:00:00.000Z' : '2026-11-20T06:00:00.000Z',
});

export interface EventDefinition<S extends z.ZodType = z.ZodType> {
  description: string;
  payload: S;
  example: z.infer<S>;
}

/** An event type: its payload's schema and an example, which must fit it. */
const defineEvent = <S extends z.ZodType>(description: string, payload: S, example: z.infer<S>): EventDefinition<S> => ({
  description,
  payload,
  example,
});

export const EVENTS = {
  'invoice.created': defineEvent('A draft invoice was created.', invoice, invoiceExample('draft')),
  'invoice.sent': defineEvent('An invoice was sent.', invoice, invoiceExample('sent')),
  'invoice.paid': defineEvent('An invoice was paid.', invoice, invoiceExample('paid')),
  'invoice.overdue': defineEvent('An invoice is overdue.', invoice, invoiceExample('overdue')),
  'payment.failed': defineEvent('A payment failed.', payment, paymentExample('Your card was declined.')),
  'payment.refunded': defineEvent('A payment was refunded.', payment, paymentExample('requested_by_customer')),
  'subscription.trial_extended': defineEvent(
    'The payment processor moved trial_end later on an existing trial.',
    z.object({ tenant_id: uuid, subscription_id: uuid, customer_id: uuid.nullable(), previous_trial_end: time, trial_end: time }),
    {
      tenant_id: EXAMPLE_TENANT,
      subscription_id: '7a6b5c4d-3e2f-4a1b-9c8d-7e6f5a4b3c2d',
      customer_id: EXAMPLE_CUSTOMER,
      previous_trial_end: '2026-12-01T00:00:00.000Z',
      trial_end: '2026-12-15T00:00:00.000Z',
    },
  ),
  'customer.created': defineEvent('A customer was created.', customer, customerExample),
  'customer.health_changed': defineEvent(
    'A customer’s health score or status changed.',
    customer.extend({
      previous_health_score: z.number().int().min(0).max(100).nullable(),
      previous_health_status: values(HealthStatus).nullable(),
    }),
    { ...customerExample, health_score: 54, health_status: 'at_risk', previous_health_score: 72, previous_health_status: 'neutral' },
  ),
  'customer.deleted': defineEvent(
    'A customer was erased; only its ids are sent.',
    z.object({ tenant_id: uuid, id: uuid, external_id: z.string().nullable() }),
    {
      tenant_id: EXAMPLE_TENANT,
      id: EXAMPLE_CUSTOMER,
      external_id: 'crm-4711',
    },
  ),
  'churn_prediction.updated': defineEvent(
    'A customer’s churn prediction changed.',
    z.object({
      tenant_id: uuid,
      customer_id: uuid,
      probability: z.number().min(0).max(1),
      risk_level: values(RiskLevel),
      risk_factors: z.array(z.object({ code: z.string(), description: z.string(), impact: z.number() })),
      recommended_interventions: z.array(
        z.object({ code: z.string(), title: z.string(), description: z.string(), priority: z.enum(['high', 'medium', 'low']) }),
      ),
      model_version: z.string(),
      predicted_at: time,
      previous_probability: z.number().min(0).max(1).nullable(),
    }),
    {
      tenant_id: EXAMPLE_TENANT,
      customer_id: EXAMPLE_CUSTOMER,
      probability: 0.42,
      risk_level: 'medium',
      risk_factors: [{ code: 'usage_decline', description: 'Product usage fell by half over 30 days', impact: 0.61 }],
      recommended_interventions: [
        {
          code: 'low_usage',
          title: 'Run an adoption session',
          description: 'Walk the team through the features they stopped using.',
          priority: 'high',
        },
      ],
      model_version: 'default-v1',
      predicted_at: '2026-11-20T06:00:00.000Z',
      previous_probability: 0.18,
    },
  ),
  'alert.created': defineEvent('An alert was raised.', alert, alertExample('open')),
  'alert.resolved': defineEvent('An alert was resolved.', alert, alertExample('resolved')),
  'endpoint.disabled': defineEvent(
    'One of the tenant’s endpoints was disabled after failing.',
    z.object({ tenant_id: uuid, id: uuid, url: z.string(), enabled: z.literal(false), disabled_reason: z.string() }),
    {
      tenant_id: EXAMPLE_TENANT,
      id: '5c4b3a29-1807-4f6e-8d5c-4b3a29180706',
      url: 'https://hooks.acme.example/health',
      enabled: false,
      disabled_reason: 'failing for 5 days',
    },
  ),
} as const;

export type EventName = keyof typeof EVENTS;
export type PayloadOf<N extends EventName> = z.infer<(typeof EVENTS)[N]['payload']>;

export const EVENT_NAMES = Object.keys(EVENTS) as EventName[];
export const isEventName = (name: string): name is EventName => Object.hasOwn(EVENTS, name);

/** The JSON Schema (2020-12, as OpenAPI 3.1 reads it) of an event type's payload. */
export const payloadJsonSchema = (name: EventName): Record<string, unknown> => {
  const { $schema: _, ...schema } = z.toJSONSchema(EVENTS[name].payload, { target: 'draft-2020-12', io: 'output' }) as Record<
    string,
    unknown
  >;
  return schema;
};
