import type {
  AlertItemFragment,
  AuditEventItemFragment,
  ChurnModelDetailFragment,
  CustomerHealthHistoryQuery,
  RecordChurnOutcomeMutation,
  TrainChurnModelMutation,
  WeightsFragment,
  DeliveryItemFragment,
  EndpointItemFragment,
  CustomerChurnPredictionQuery,
  CustomerDetailFragment,
  CustomerHealthQuery,
  CustomerListItemFragment,
} from './generated/operations.ts';

// GraphQL speaks camelCase; the REST API speaks snake_case (docs/decisions.md §1). These are the only
// places where the two meet.

export const customerItem = (c: CustomerListItemFragment) => ({
  id: c.id,
  external_id: c.externalId,
  name: c.name,
  email: c.email,
  domain: c.domain,
  health_score: c.healthScore,
  health_status: c.healthStatus,
  churn_probability: c.churnProbability,
  churn_risk_level: c.churnRiskLevel,
  created_at: c.createdAt,
  updated_at: c.updatedAt,
});

export const customerDetail = (c: CustomerDetailFragment) => ({
  ...customerItem(c),
  identities: c.identities.map((i) => ({ provider: i.provider, external_id: i.externalId })),
});

type Health = NonNullable<CustomerHealthQuery['customer']>['health'];
export const health = (h: Health) => ({
  customer_id: h.customerId,
  score: h.score,
  status: h.status,
  computed_at: h.computedAt,
  trend: { change_7d: h.trend.d7, change_30d: h.trend.d30 },
  weakest_dimension: h.weakestDimension,
  dimensions: h.dimensions.map((d) => ({
    key: d.key,
    score: d.score,
    weight: d.weight,
    contribution: d.contribution,
    trend: d.trend,
    signals: d.signals,
  })),
});

type Churn = NonNullable<CustomerChurnPredictionQuery['customer']>['churnPrediction'];
export const churn = (c: Churn) => ({
  customer_id: c.customerId,
  probability: c.probability,
  risk_level: c.riskLevel,
  risk_factors: c.riskFactors,
  recommended_interventions: c.recommendedInterventions,
  model_version: c.modelVersion,
  predicted_at: c.predictedAt,
});

export const alert = (a: AlertItemFragment) => ({
  id: a.id,
  customer_id: a.customerId,
  alert_type: a.alertType,
  severity: a.severity,
  status: a.status,
  title: a.title,
  message: a.message,
  details: a.details,
  snoozed_until: a.snoozedUntil,
  acknowledged_at: a.acknowledgedAt,
  resolved_at: a.resolvedAt,
  created_at: a.createdAt,
  updated_at: a.updatedAt,
});

export const page = <T, R>(conn: { nodes: T[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } }, map: (t: T) => R) => ({
  data: conn.nodes.map(map),
  has_more: conn.pageInfo.hasNextPage,
  next_cursor: conn.pageInfo.endCursor,
});

export const endpoint = (e: EndpointItemFragment) => ({
  id: e.id,
  url: e.url,
  description: e.description,
  events: e.events,
  enabled: e.enabled,
  disabled_reason: e.disabledReason,
  created_at: e.createdAt,
  updated_at: e.updatedAt,
});

export const delivery = (d: DeliveryItemFragment) => ({
  id: d.id,
  endpoint_id: d.endpointId,
  event: d.eventType,
  test: d.isTest,
  status: d.status,
  attempts: d.attempts,
  next_attempt_at: d.nextAttemptAt,
  last_status_code: d.lastStatusCode,
  last_error: d.lastError,
  created_at: d.createdAt,
  attempt_log: d.attemptLog.map((a) => ({
    attempt: a.attempt,
    started_at: a.startedAt,
    duration_ms: a.durationMs,
    status_code: a.statusCode,
    error: a.error,
    response_body: a.responseBody,
  })),
});

type HistoryPoint = NonNullable<CustomerHealthHistoryQuery['customer']>['healthHistory']['nodes'][number];
export const historyPoint = (p: HistoryPoint) => ({
  date: p.day,
  score: p.score,
  status: p.status,
  dimensions: { usage: p.usage, engagement: p.engagement, support: p.support, billing: p.billing, growth: p.growth },
  churn_probability: p.churnProbability,
  computed_at: p.computedAt,
});

export const weights = (w: WeightsFragment) => ({
  usage: w.usage,
  engagement: w.engagement,
  support: w.support,
  billing: w.billing,
  growth: w.growth,
  is_default: w.isDefault,
});

export const churnModel = (m: ChurnModelDetailFragment) => ({
  model_version: m.modelVersion,
  trained_at: m.trainedAt,
  intercept: m.intercept,
  features: m.features,
  metrics: m.metrics && {
    samples: m.metrics.samples,
    churned: m.metrics.churned,
    holdout: m.metrics.holdout,
    auc: m.metrics.auc,
    brier: m.metrics.brier,
    baseline: { model_version: m.metrics.baselineModelVersion, auc: m.metrics.baselineAuc, brier: m.metrics.baselineBrier },
  },
});

export const training = (r: TrainChurnModelMutation['trainChurnModel']) => ({
  model_version: r.modelVersion,
  trained_at: r.trainedAt,
  samples: r.samples,
  churned: r.churned,
  holdout: r.holdout,
  auc: r.auc,
  brier: r.brier,
  activated: r.activated,
  baseline: { model_version: r.baselineModelVersion, auc: r.baselineAuc, brier: r.baselineBrier },
});

export const churnOutcome = (o: RecordChurnOutcomeMutation['recordChurnOutcome']) => ({
  customer_id: o.customerId,
  churned: o.churned,
  at: o.at,
  source: o.source,
  created_at: o.createdAt,
});

export const auditEvent = (e: AuditEventItemFragment) => ({
  id: e.id,
  occurred_at: e.occurredAt,
  action: e.action,
  actor_type: e.actorType,
  actor_id: e.actorId ?? null,
  actor_label: e.actorLabel ?? null,
  client_address: e.clientAddress ?? null,
  request_id: e.requestId ?? null,
  target_type: e.targetType ?? null,
  target_id: e.targetId ?? null,
  changes: e.changes,
});
