// Payloads of the record events (docs/decisions.md §5: "the record as the REST API returns it", with the
// tenant_id), built from domain values in one place for every writer of the outbox.

const iso = (d: Date | string | null) => (d === null ? null : typeof d === 'string' ? d : d.toISOString());

export interface CustomerRecord {
  id: string;
  tenantId: string;
  externalId: string | null;
  name: string;
  email: string | null;
  domain: string | null;
  healthScore: number | null;
  healthStatus: string | null;
  churnProbability: number | null;
  churnRiskLevel: string | null;
  createdAt: Date | string;
  updatedAt: Date | string;
}

export const customerPayload = (c: CustomerRecord) => ({
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
  alertType: string;
  severity: string;
  status: string;
  title: string;
  message: string;
  details: unknown;
  snoozedUntil: Date | null;
  acknowledgedAt: Date | null;
  resolvedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export const alertPayload = (a: AlertRecord) => ({
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

export const alertEvent = (type: 'alert.created' | 'alert.resolved', a: AlertRecord) => ({
  tenantId: a.tenantId,
  type,
  subject: a.id,
  // A reopened alert can resolve again: each resolution is its own event.
  dedupKey: type === 'alert.created' ? `${type}:${a.id}` : `${type}:${a.id}:${iso(a.resolvedAt)}`,
  payload: alertPayload(a),
});
