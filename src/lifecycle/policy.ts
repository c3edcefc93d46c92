import type { RetentionKey } from '../contract/retention.ts';

// Where the tenants table keeps each retention override (null: the default of src/contract/retention.ts),
// for the settings service and the retention pass alike; and what is kept alike for every tenant.

export const RETENTION_COLUMNS: Record<RetentionKey, string> = {
  inboundBodies: 'inbound_body_retention_days',
  signals: 'signal_retention_days',
  deliveries: 'delivery_retention_days',
  auditEvents: 'audit_retention_days',
};

/** Kept for every tenant alike. */
export const FIXED_RETENTION = {
  /** Daily health history points. */
  healthHistoryDays: 400,
  /** Stored answers of idempotent requests. */
  idempotencyKeyDays: 30,
  /** Per-endpoint delivery figures, a row per endpoint and minute: the API reads the last day of them. */
  deliveryFiguresDays: 2,
} as const;
