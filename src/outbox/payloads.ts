// Payloads of the events sent for records (docs/decisions.md §5: the record as the REST API returns it, with the
// tenant_id), built from domain values for every writer of the outbox. Their shapes are the registry's
// (src/outbox/events.ts): a field added here and not there, or the other way round, does not compile.
import type { OutboxInput } from './enqueue.ts';
import type { PayloadOf } from './events.ts';
import { formatAmount } from './money.ts';

type CustomerPayload = PayloadOf<'customer.created'>;
type AlertPayload = PayloadOf<'alert.created'>;

const iso = <T extends Date | string | null>(d: T): T extends null ? null : string =>
  (d === null ? null : typeof d === 'string' ? d : (d as Date).toISOString()) as T extends null ? null : string;

export interface CustomerRecord {
  id: string;
  tenantId: string;
  externalId: string | null;
  name: string;
  email: string | null;
  domain: string | null;
  healthScore: number | null;
  healthStatus: CustomerPayload['health_status'];
  churnProbability: number | null;
  churnRiskLevel: CustomerPayload['churn_risk_level'];
  createdAt: Date | string;
  updatedAt: Date | string;
}

export const customerPayload = (c: CustomerRecord): CustomerPayload => ({
  tenant_id: c.tenantId,
  id: c.id,
  external_id: c.externalId,
  name: c.name,
  email: c.email,
  domain: c.domain,
  health_score: c.healthScore,
  health_status: c.healthStatus,
  churn_probability: c.churnProbability,
  churn_risk_level: c.churnRiskLevel,
  created_at: iso(c.createdAt),
  updated_at: iso(c.updatedAt),
});

export interface AlertRecord {
  id: string;
  tenantId: string;
  customerId: string;
  alertType: AlertPayload['alert_type'];
  severity: AlertPayload['severity'];
  status: AlertPayload['status'];
  title: string;
  message: string;
  details: AlertPayload['details'];
  snoozedUntil: Date | null;
  acknowledgedAt: Date | null;
  resolvedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export const alertPayload = (a: AlertRecord): AlertPayload => ({
  tenant_id: a.tenantId,
  id: a.id,
  customer_id: a.customerId,
  alert_type: a.alertType,
  severity: a.severity,
  status: a.status,
  title: a.title,
  message: a.message,
  details: a.details,
  snoozed_until: iso(a.snoozedUntil),
  acknowledged_at: iso(a.acknowledgedAt),
  resolved_at: iso(a.resolvedAt),
  created_at: iso(a.createdAt),
  updated_at: iso(a.updatedAt),
});

export const alertEvent = (type: 'alert.created' | 'alert.resolved', a: AlertRecord): OutboxInput =>
  type === 'alert.created'
    ? { tenantId: a.tenantId, type, subject: a.id, dedupKey: `${type}:${a.id}`, payload: alertPayload(a) }
    : // A reopened alert can resolve again: each resolution is its own event.
      { tenantId: a.tenantId, type, subject: a.id, dedupKey: `${type}:${a.id}:${iso(a.resolvedAt)}`, payload: alertPayload(a) };

export interface InvoiceRecord {
  id: string;
  tenantId: string;
  status: PayloadOf<'invoice.created'>['status'];
  totalMinor: bigint;
  currency: string;
  customerId: string | null;
  dueAt: Date | null;
}

/** The invoice events' payload, for the provider's changes and the overdue pass alike. */
export const invoicePayload = (inv: InvoiceRecord): PayloadOf<'invoice.created'> => ({
  tenant_id: inv.tenantId,
  invoice_id: inv.id,
  status: inv.status,
  total: formatAmount(inv.totalMinor, inv.currency),
  currency: inv.currency,
  customer_id: inv.customerId,
  due_at: iso(inv.dueAt),
});
