import { z } from 'zod';
import { amount } from '../../contract/money.ts';
import { HEALTH_STATUSES, INVOICE_STATUSES, PROVIDERS, RISK_LEVELS } from '../../contract/enums.ts';
import {
  alert,
  alertSample,
  churnDrivers,
  churnPrediction,
  circuitSample,
  customerListItem,
  customerSample,
  healthDrivers,
  intervention,
  webhookCircuit,
} from '../../contract/entities.ts';
import { serialize, type SourceOf } from '../../contract/serialize.ts';
import { sequenceSubject, type SequenceSubject } from '../../contract/sequence-subject.ts';
import { probability, score, time, uuid } from '../../contract/wire.ts';

// The outbound event types, each with the schema of its payload and an example: the one list behind
// `enqueueEvents` (a misspelt name or a payload of the wrong shape does not compile), the catalog that
// `GET /api/v1/webhook-event-types` serves, the Test delivery's sample, and the `webhooks` section of
// /openapi.json. A record's payload is its REST shape (src/contract/entities.ts) with the tenant_id
// (docs/decisions.md §5), and its example is the entity's sample written beside the shape; examples go
// through the same serializer as what is sent.

const tenant = { tenant_id: uuid };

const invoice = z.object({
  ...tenant,
  invoice_id: uuid,
  status: z.enum(INVOICE_STATUSES),
  total: amount,
  currency: z.string().describe('ISO 4217, lower case.'),
  customer_id: uuid.nullable(),
  due_at: time.nullable(),
});

const payment = z.object({
  ...tenant,
  payment_id: z.string().describe("The provider's id of the payment (or of the invoice, when the provider names no payment)."),
  invoice_id: uuid.nullable(),
  customer_id: uuid.nullable(),
  amount,
  currency: z.string(),
  reason: z.string().nullable(),
});

const customer = z.object({ ...tenant, ...customerListItem.shape });
const alertPayload = z.object({ ...tenant, ...alert.shape });
const prediction = z.object({
  ...tenant,
  ...churnPrediction.shape,
  probability,
  risk_level: z.enum(RISK_LEVELS),
  recommended_interventions: z.array(intervention.extend({ priority: z.enum(['high', 'medium', 'low']) })),
  model_version: z.string(),
  predicted_at: time,
  previous_probability: probability.nullable(),
  drivers: churnDrivers,
});

// The examples, as domain values put through the serializer like every payload sent.
const EXAMPLE_TENANT = '6f1c2a9e-3d4b-4c8a-9e1f-2a3b4c5d6e7f';
const EXAMPLE_CUSTOMER = customerSample.id;
const EXAMPLE_INVOICE = '9d4c1b2a-7e6f-4a5b-8c9d-0e1f2a3b4c5d';

const invoiceExample = (status: z.infer<typeof invoice>['status']) =>
  serialize(invoice, {
    tenantId: EXAMPLE_TENANT,
    invoiceId: EXAMPLE_INVOICE,
    status,
    total: '123.45',
    currency: 'usd',
    customerId: EXAMPLE_CUSTOMER,
    dueAt: new Date('2026-12-24T00:00:00.000Z'),
  });
const paymentExample = (reason: string) =>
  serialize(payment, {
    tenantId: EXAMPLE_TENANT,
    paymentId: 'pi_3Pb2024AbCdEf',
    invoiceId: EXAMPLE_INVOICE,
    customerId: EXAMPLE_CUSTOMER,
    amount: '49.00',
    currency: 'usd',
    reason,
  });
const sampleCustomer: SourceOf<z.infer<typeof customer>> = { tenantId: EXAMPLE_TENANT, ...customerSample };
const RESOLVED_AT = new Date('2026-11-22T08:00:00.000Z');
const alertExample = (status: 'open' | 'resolved') =>
  serialize(
    alertPayload,
    status === 'open'
      ? { tenantId: EXAMPLE_TENANT, ...alertSample }
      : { tenantId: EXAMPLE_TENANT, ...alertSample, status, resolvedAt: RESOLVED_AT, updatedAt: RESOLVED_AT },
  );

export interface EventDefinition<S extends z.ZodType = z.ZodType> {
  description: string;
  payload: S;
  example: z.infer<S>;
  /**
   * What the event is numbered under (docs/receiving-webhooks.md, "Order and sequence numbers"): its
   * customer for anything about a customer, its invoice for invoice and payment events.
   */
  sequenceSubject: (payload: z.infer<S>) => SequenceSubject;
}

/** An event type: its payload's schema, an example, which must fit it, and the subject it is numbered under. */
const defineEvent = <S extends z.ZodType>(
  description: string,
  payload: S,
  example: z.infer<S>,
  subjectOf: (payload: z.infer<S>) => SequenceSubject,
): EventDefinition<S> => ({ description, payload, example, sequenceSubject: subjectOf });

// The subjects, one rule per kind of payload. A payment is its invoice's where known, else its customer's;
// a trial extension its customer's, else its subscription's (the migration that numbered the events written
// before numbering existed applies the same rules: prisma/migrations/20261129120000_outbound_sequence).
const ofInvoice = (p: { invoice_id: string }) => sequenceSubject('invoice', p.invoice_id);
const ofPayment = (p: { invoice_id: string | null; customer_id: string | null; payment_id: string }) =>
  p.invoice_id !== null
    ? sequenceSubject('invoice', p.invoice_id)
    : p.customer_id !== null
      ? sequenceSubject('customer', p.customer_id)
      : sequenceSubject('payment', p.payment_id);
const ofCustomerRecord = (p: { id: string }) => sequenceSubject('customer', p.id);
const ofItsCustomer = (p: { customer_id: string }) => sequenceSubject('customer', p.customer_id);

const healthChanged = customer.extend({
  previous_health_score: score.nullable(),
  previous_health_status: z.enum(HEALTH_STATUSES).nullable(),
  drivers: healthDrivers,
});
const trialExtended = z.object({
  ...tenant,
  subscription_id: uuid,
  customer_id: uuid.nullable(),
  previous_trial_end: time,
  trial_end: time,
});
const customerDeleted = z.object({ ...tenant, id: uuid, external_id: z.string().nullable() });
const integrationSilence = z.object({
  ...tenant,
  provider: z.enum(PROVIDERS),
  last_event_at: time.nullable().describe('The last event received from the provider.'),
  usual_gap_seconds: z
    .number()
    .nullable()
    .describe('The longest wait between its events over the last 14 days, before this silence: its usual cadence.'),
  silent_since: time.describe('When the silence was flagged.'),
  resumed_at: time.nullable().describe('When its events came back; null while it is silent.'),
});
const ofIntegration = (p: { provider: string }) => sequenceSubject('integration', p.provider);
const silenceExample = (resumed: boolean) =>
  serialize(integrationSilence, {
    tenantId: EXAMPLE_TENANT,
    provider: 'stripe',
    lastEventAt: new Date('2026-11-20T09:12:00.000Z'),
    usualGapSeconds: 14_400,
    silentSince: new Date('2026-11-20T21:12:30.000Z'),
    resumedAt: resumed ? new Date('2026-11-21T08:03:00.000Z') : null,
  });
const endpointDisabled = z.object({ ...tenant, id: uuid, url: z.string(), enabled: z.literal(false), disabled_reason: z.string() });
const endpointCircuit = z.object({ ...tenant, id: uuid, url: z.string(), circuit: webhookCircuit });
const EXAMPLE_ENDPOINT = '5c4b3a29-1807-4f6e-8d5c-4b3a29180706';

export const EVENTS = {
  'invoice.created': defineEvent(
    'An invoice came into being: sent once per invoice, when first heard of, its status as it then is (usually draft).',
    invoice,
    invoiceExample('draft'),
    ofInvoice,
  ),
  'invoice.sent': defineEvent('An invoice was sent.', invoice, invoiceExample('sent'), ofInvoice),
  'invoice.paid': defineEvent('An invoice was paid.', invoice, invoiceExample('paid'), ofInvoice),
  'invoice.overdue': defineEvent('An invoice is overdue.', invoice, invoiceExample('overdue'), ofInvoice),
  'payment.failed': defineEvent('A payment failed.', payment, paymentExample('Your card was declined.'), ofPayment),
  'payment.refunded': defineEvent('A payment was refunded.', payment, paymentExample('requested_by_customer'), ofPayment),
  'subscription.trial_extended': defineEvent(
    'The payment processor moved trial_end later on an existing trial.',
    trialExtended,
    serialize(trialExtended, {
      tenantId: EXAMPLE_TENANT,
      subscriptionId: '7a6b5c4d-3e2f-4a1b-9c8d-7e6f5a4b3c2d',
      customerId: EXAMPLE_CUSTOMER,
      previousTrialEnd: new Date('2026-12-01T00:00:00.000Z'),
      trialEnd: new Date('2026-12-15T00:00:00.000Z'),
    }),
    (p) => (p.customer_id !== null ? sequenceSubject('customer', p.customer_id) : sequenceSubject('subscription', p.subscription_id)),
  ),
  'customer.created': defineEvent('A customer was created.', customer, serialize(customer, sampleCustomer), ofCustomerRecord),
  'customer.health_changed': defineEvent(
    'A customer’s health score or status changed.',
    healthChanged,
    serialize(healthChanged, {
      ...sampleCustomer,
      healthScore: 54,
      healthStatus: 'at_risk',
      previousHealthScore: 72,
      previousHealthStatus: 'neutral',
      drivers: {
        since: new Date('2026-11-13T06:00:00.000Z'),
        top: [
          { input: 'failedPayments30d', label: 'Failed payments (30 days)', group: 'billing', score: -11 },
          { input: 'usageUnits7d', label: 'Product events and code activity (7 days)', group: 'usage', score: -6 },
        ],
        other: -1,
      },
    }),
    ofCustomerRecord,
  ),
  'customer.deleted': defineEvent(
    'A customer was erased; only its ids are sent.',
    customerDeleted,
    serialize(customerDeleted, { tenantId: EXAMPLE_TENANT, id: EXAMPLE_CUSTOMER, externalId: 'crm-4711' }),
    ofCustomerRecord,
  ),
  'churn_prediction.updated': defineEvent(
    'A customer’s churn prediction changed.',
    prediction,
    serialize(prediction, {
      tenantId: EXAMPLE_TENANT,
      customerId: EXAMPLE_CUSTOMER,
      probability: 0.42,
      riskLevel: 'medium',
      riskFactors: [{ code: 'usage_decline', description: 'Product usage fell by half over 30 days', impact: 0.61 }],
      recommendedInterventions: [
        {
          code: 'low_usage',
          title: 'Run an adoption session',
          description: 'Walk the team through the features they stopped using.',
          priority: 'high',
        },
      ],
      modelVersion: 'default-v2',
      predictedAt: new Date('2026-11-20T06:00:00.000Z'),
      previousProbability: 0.18,
      drivers: {
        since: new Date('2026-11-13T06:00:00.000Z'),
        top: [
          { input: 'usageUnits30d', label: 'Product events and code activity (30 days)', group: 'usage', churnProbability: 0.17 },
          { input: 'failedPayments30d', label: 'Failed payments (30 days)', group: 'billing', churnProbability: 0.06 },
        ],
        other: 0.01,
      },
    }),
    ofItsCustomer,
  ),
  'alert.created': defineEvent('An alert was raised.', alertPayload, alertExample('open'), ofItsCustomer),
  'alert.resolved': defineEvent('An alert was resolved.', alertPayload, alertExample('resolved'), ofItsCustomer),
  'integration.silent': defineEvent(
    'A provider went silent: nothing received from it for three times its usual longest wait (at least an hour). Sent once per silence.',
    integrationSilence,
    silenceExample(false),
    ofIntegration,
  ),
  'integration.resumed': defineEvent(
    'A provider that had gone silent sends events again.',
    integrationSilence,
    silenceExample(true),
    ofIntegration,
  ),
  'endpoint.disabled': defineEvent(
    'One of the tenant’s endpoints was disabled after failing.',
    endpointDisabled,
    serialize(endpointDisabled, {
      tenantId: EXAMPLE_TENANT,
      id: EXAMPLE_ENDPOINT,
      url: 'https://hooks.acme.example/health',
      enabled: false,
      disabledReason: 'failing for 5 days',
    }),
    (p) => sequenceSubject('endpoint', p.id),
  ),
  'endpoint.circuit_opened': defineEvent(
    'The circuit breaker of one of the tenant’s endpoints opened: too many of its recent attempts failed, so its deliveries wait (none is dropped) and only a probe is sent after `circuit.next_probe_at`.',
    endpointCircuit,
    serialize(endpointCircuit, {
      tenantId: EXAMPLE_TENANT,
      id: EXAMPLE_ENDPOINT,
      url: 'https://hooks.acme.example/health',
      circuit: circuitSample,
    }),
    (p) => sequenceSubject('endpoint', p.id),
  ),
  'endpoint.circuit_closed': defineEvent(
    'The circuit breaker of one of the tenant’s endpoints closed again: a probe was delivered, and the deliveries it held are being sent.',
    endpointCircuit,
    serialize(endpointCircuit, {
      tenantId: EXAMPLE_TENANT,
      id: EXAMPLE_ENDPOINT,
      url: 'https://hooks.acme.example/health',
      circuit: { state: 'closed', openedAt: null, nextProbeAt: null, failureRate: null, recentAttempts: 0 },
    }),
    (p) => sequenceSubject('endpoint', p.id),
  ),
} as const;

export type EventName = keyof typeof EVENTS;
export type PayloadOf<N extends EventName> = z.infer<(typeof EVENTS)[N]['payload']>;

export const EVENT_NAMES = Object.keys(EVENTS) as EventName[];
export const isEventName = (name: string): name is EventName => Object.hasOwn(EVENTS, name);

/** The events that change what a customer's row and health page show: the dashboard hears of them live. */
export const CUSTOMER_CHANGE_EVENTS = [
  'customer.health_changed',
  'churn_prediction.updated',
  'alert.created',
  'alert.resolved',
] as const satisfies readonly EventName[];

/** The subject an event of this type and payload is numbered under. */
export const sequenceSubjectOf = <N extends EventName>(type: N, payload: PayloadOf<N>): SequenceSubject =>
  (EVENTS[type].sequenceSubject as (p: PayloadOf<N>) => SequenceSubject)(payload);

/** The JSON Schema (2020-12, as OpenAPI 3.1 reads it) of an event type's payload. */
export const payloadJsonSchema = (name: EventName): Record<string, unknown> => {
  const { $schema: _, ...schema } = z.toJSONSchema(EVENTS[name].payload, { target: 'draft-2020-12', io: 'output' }) as Record<
    string,
    unknown
  >;
  return schema;
};
