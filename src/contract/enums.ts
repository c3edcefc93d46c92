// The one table of the domain's enumerations. Those PostgreSQL stores as enum types come from
// prisma/schema.prisma through Prisma's generated objects; the two it stores as text are listed here.
// The GraphQL enums (src/schema/enums.ts), the REST and webhook schemas (src/contract/entities.ts), the CLI's
// options and the dashboard (through the generated GraphQL types) all read these lists.
import * as db from '../generated/prisma/enums.ts';

const valuesOf = <T extends Record<string, string>>(e: T) => Object.values(e) as [T[keyof T], ...T[keyof T][]];

export const PLANS = valuesOf(db.Plan);
export const ROLES = valuesOf(db.Role);
export const HEALTH_STATUSES = valuesOf(db.HealthStatus);
export const RISK_LEVELS = valuesOf(db.RiskLevel);
export const ALERT_STATUSES = valuesOf(db.AlertStatus);
export const ALERT_SEVERITIES = valuesOf(db.AlertSeverity);
export const ALERT_TYPES = valuesOf(db.AlertType);
export const INVOICE_STATUSES = valuesOf(db.InvoiceStatus);
export const DELIVERY_STATUSES = valuesOf(db.DeliveryStatus);
/** A webhook endpoint's circuit breaker (docs/receiving-webhooks.md, "Circuit breaker"). */
export const CIRCUIT_STATES = valuesOf(db.CircuitState);

/**
 * The inbound providers. Each needs a spec (src/ingest/providers: verification, normalizer, replay signing,
 * its /openapi.json description) and a guide in the dashboard (web/src/lib/providers.ts): both are typed
 * records keyed by provider, so a name added here and not there does not compile. docs/inbound-webhooks.md
 * lists them in one table, which a test checks against this list.
 */
export const PROVIDERS = ['stripe', 'github', 'slack', 'discord', 'intercom', 'meta_ads'] as const;
/**
 * Which churn model is in use (docs/scoring.md): the documented default coefficients, a model trained on the
 * tenant's labels, or the default's coefficients with probabilities calibrated on those labels.
 */
export const CHURN_MODEL_KINDS = ['default', 'trained', 'calibrated_default'] as const;
export type ChurnModelKind = (typeof CHURN_MODEL_KINDS)[number];
/** Where a churn training stands: fitting, its model stored, or failed with an error code. */
export const TRAINING_STATUSES = ['running', 'succeeded', 'failed'] as const;
export type TrainingStatus = (typeof TRAINING_STATUSES)[number];
/**
 * How an endpoint's deliveries are signed (docs/receiving-webhooks.md): `v0`, our own headers and hex HMAC,
 * the default; `standard`, the Standard Webhooks headers with `v1,` HMAC and `v1a,` Ed25519 signatures.
 */
export const SIGNATURE_SCHEMES = ['v0', 'standard'] as const;
export type SignatureScheme = (typeof SIGNATURE_SCHEMES)[number];
/**
 * The windows an endpoint's delivery figures are read over (GET /api/v1/webhook-endpoints/{id}/stats): the last
 * hour, in points of five minutes, or the last day, in points of an hour.
 */
export const STATS_WINDOWS = {
  hour: { seconds: 3600, pointSeconds: 300 },
  day: { seconds: 86_400, pointSeconds: 3600 },
} as const;
export type StatsWindow = keyof typeof STATS_WINDOWS;
export const STATS_WINDOW_NAMES = Object.keys(STATS_WINDOWS) as [StatsWindow, ...StatsWindow[]];
/** The five health dimensions, in the order the API lists them (docs/scoring.md). */
export const DIMENSIONS = ['usage', 'engagement', 'support', 'billing', 'growth'] as const;
/** What feeds a score's inputs (docs/scoring.md, "Why it moved"): a dimension's signals, activity of any kind, the history, the tenant's settings, or time passing. */
export const INPUT_GROUPS = ['usage', 'engagement', 'support', 'billing', 'growth', 'activity', 'history', 'settings', 'time'] as const;
/** What a score change cites: an inbound provider event, a usage event of the events API, another recorded signal, or a change made over the API. */
export const CHANGE_SOURCE_TYPES = ['provider_event', 'usage_event', 'signal', 'api_change'] as const;

/**
 * The datasets a workspace exports, with what each holds (the REST description states it); the export's
 * datasets (src/services/export-datasets.ts) are typed `Record<ExportDataset, …>`, so a name added here must be read there.
 */
export const EXPORT_DATASET_CONTENTS = {
  customers: 'Customers with their identities, current health and churn prediction',
  health_history: 'One health point per customer and day',
  alerts: 'Alerts, open and closed',
  signals: 'Signals (within the signal retention; older days are kept only as daily aggregates)',
  churn_outcomes: 'Churn labels: every outcome recorded for a customer, posted or from a cancelled subscription',
} as const;
export type ExportDataset = keyof typeof EXPORT_DATASET_CONTENTS;
export const EXPORT_DATASETS = Object.keys(EXPORT_DATASET_CONTENTS) as [ExportDataset, ...ExportDataset[]];
export const EXPORT_FORMATS = ['ndjson', 'csv'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export type Plan = db.Plan;
export type Role = db.Role;
export type HealthStatus = db.HealthStatus;
export type RiskLevel = db.RiskLevel;
export type AlertStatus = db.AlertStatus;
export type AlertSeverity = db.AlertSeverity;
export type AlertType = db.AlertType;
export type InvoiceStatus = db.InvoiceStatus;
export type ProviderName = (typeof PROVIDERS)[number];
export type DimensionKey = (typeof DIMENSIONS)[number];

export const isProvider = (p: string): p is ProviderName => (PROVIDERS as readonly string[]).includes(p);
