// The live list of subscribable events (docs/decisions.md §5), behind the endpoint picker and
// GET /api/v1/webhook-event-types. `sample` builds the payload a Test delivery sends.

export interface EventType {
  name: string;
  description: string;
  sample: (tenantId: string) => Record<string, unknown>;
}

const uuid = () => globalThis.crypto.randomUUID();
const invoice = (status: string) => (tenantId: string) => ({
  tenant_id: tenantId,
  invoice_id: uuid(),
  status,
  total: '123.45',
  currency: 'usd',
  customer_id: uuid(),
  due_at: new Date(Date.now() + 30 * 86_400_000).toISOString(),
});
const payment = (reason: string) => (tenantId: string) => ({
  tenant_id: tenantId,
  payment_id: 'pi_sample',
  invoice_id: uuid(),
  customer_id: uuid(),
  amount: '49.00',
  currency: 'usd',
  reason,
});
const customerRecord = (tenantId: string) => ({
  tenant_id: tenantId,
  id: uuid(),
  external_id: 'sample-1',
  name: 'Sample Customer',
  email: 'ops@sample.example',
  domain: 'sample.example',
  health_score: 72,
  health_status: 'neutral',
  churn_risk_level: 'medium',
  created_at: new Date().toISOString(),
  updated_at: new Date().toISOString(),
});

const alertRecord = (status: string) => (tenantId: string) => ({
  tenant_id: tenantId,
  id: uuid(),
  customer_id: uuid(),
  alert_type: 'health_drop',
  severity: 'high',
  status,
  title: 'Health dropped',
  message: 'Sample alert',
  created_at: new Date().toISOString(),
});

export const EVENT_TYPES: EventType[] = [
  { name: 'invoice.created', description: 'A draft invoice was created.', sample: invoice('draft') },
  { name: 'invoice.sent', description: 'An invoice was sent.', sample: invoice('sent') },
  { name: 'invoice.paid', description: 'An invoice was paid.', sample: invoice('paid') },
  { name: 'invoice.overdue', description: 'An invoice is overdue.', sample: invoice('overdue') },
  { name: 'payment.failed', description: 'A payment failed.', sample: payment('card_declined') },
  { name: 'payment.refunded', description: 'A payment was refunded.', sample: payment('requested_by_customer') },
  {
    name: 'subscription.trial_extended',
    description: 'The payment processor moved trial_end later on an existing trial.',
    sample: (tenantId) => ({
      tenant_id: tenantId,
      subscription_id: uuid(),
      customer_id: uuid(),
      previous_trial_end: new Date(Date.now() + 7 * 86_400_000).toISOString(),
      trial_end: new Date(Date.now() + 14 * 86_400_000).toISOString(),
    }),
  },
  { name: 'customer.created', description: 'A customer was created.', sample: customerRecord },
  { name: 'customer.health_changed', description: 'A customer’s health score or status changed.', sample: customerRecord },
  {
    name: 'churn_prediction.updated',
    description: 'A customer’s churn prediction changed.',
    sample: (tenantId) => ({
      tenant_id: tenantId,
      customer_id: uuid(),
      probability: 0.42,
      risk_level: 'medium',
      risk_factors: [],
      recommended_interventions: [],
      model_version: 'default-v1',
      predicted_at: new Date().toISOString(),
    }),
  },
  { name: 'alert.created', description: 'An alert was raised.', sample: alertRecord('open') },
  { name: 'alert.resolved', description: 'An alert was resolved.', sample: alertRecord('resolved') },
  {
    name: 'endpoint.disabled',
    description: 'One of the tenant’s endpoints was disabled after failing.',
    sample: (tenantId) => ({
      tenant_id: tenantId,
      id: uuid(),
      url: 'https://hooks.sample.example/in',
      enabled: false,
      disabled_reason: 'failing for 5 days',
    }),
  },
];

export const EVENT_NAMES = EVENT_TYPES.map((e) => e.name);
export const eventType = (name: string) => EVENT_TYPES.find((e) => e.name === name);
