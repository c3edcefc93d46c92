// How long each kind of data is kept (docs/data-lifecycle.md). The four a tenant may set have a default
// and bounds here, in one place: the settings API validates against them, the worker applies them, and
// the docs' table states them.

export interface RetentionSetting {
  /** The tenants column holding the tenant's override; null there means `days`. */
  column: string;
  days: number;
  min: number;
  max: number;
  what: string;
}

export const RETENTION_SETTINGS = {
  inboundBodies: {
    column: 'inbound_body_retention_days',
    days: 30,
    // GitHub redeliveries are recognised by the body's hash for 7 days; it goes with the body.
    min: 7,
    max: 365,
    what: 'Raw inbound request bodies; the event’s metadata stays',
  },
  signals: {
    column: 'signal_retention_days',
    days: 400,
    // Live scoring reads 90 days of signals and training compares with 30 days before that: raw rows
    // always cover both, so rolled-up days never change a live score.
    min: 120,
    max: 1825,
    what: 'Signals (then rolled up into daily aggregates) and inbound events’ metadata',
  },
  deliveries: {
    column: 'delivery_retention_days',
    days: 30,
    min: 1,
    max: 90,
    what: 'Outbound events, settled deliveries and their attempts with response excerpts',
  },
  auditEvents: {
    column: 'audit_retention_days',
    days: 730,
    // The database refuses to delete younger audit events whatever is configured.
    min: 365,
    max: 3650,
    what: 'Audit log',
  },
} as const satisfies Record<string, RetentionSetting>;

export type RetentionKey = keyof typeof RETENTION_SETTINGS;
export type Retention = Record<RetentionKey, number>;
export const RETENTION_KEYS = Object.keys(RETENTION_SETTINGS) as RetentionKey[];

/** Kept for every tenant alike. */
export const FIXED_RETENTION = {
  /** Daily health history points. */
  healthHistoryDays: 400,
  /** Stored answers of idempotent requests. */
  idempotencyKeyDays: 30,
} as const;

/** The workspace's deletion waits this long after the owner asks, and can be cancelled until then. */
export const DEFAULT_WORKSPACE_DELETION_DELAY_DAYS = 7;

const DAY_MS = 86_400_000;

/** The start of the UTC day of `t`. */
export const startOfDay = (t: Date): Date => new Date(Math.floor(t.getTime() / DAY_MS) * DAY_MS);

/**
 * Signals before this moment are rolled up: whole UTC days, `days` before today. Scoring decides which of its
 * windows reach rolled-up days with the same rule, so its results do not depend on whether the worker has run.
 */
export const signalCutoff = (now: Date, days: number): Date => new Date(startOfDay(now).getTime() - days * DAY_MS);
