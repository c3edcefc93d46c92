// The retention windows a tenant may set (docs/data-lifecycle.md), each with its default and bounds, in one
// place: the REST and GraphQL settings validate against them and state them, the worker applies them
// (src/lifecycle/retention.ts) and scoring relies on the signals' minimum (src/scoring/signal-rollups.ts).

export interface RetentionSetting {
  /** The default, in days. */
  days: number;
  min: number;
  max: number;
  what: string;
}

export const RETENTION_SETTINGS = {
  inboundBodies: {
    days: 30,
    // GitHub redeliveries are recognised by the body's hash for 7 days; it goes with the body.
    min: 7,
    max: 365,
    what: 'Raw inbound request bodies; the event’s metadata stays',
  },
  signals: {
    days: 400,
    // Live scoring reads 90 days of signals and training compares with 30 days before that: raw rows
    // always cover both, so rolled-up days never change a live score.
    min: 120,
    max: 1825,
    what: 'Signals (then rolled up into daily aggregates) and inbound events’ metadata',
  },
  deliveries: {
    days: 30,
    min: 1,
    max: 90,
    what: 'Outbound events, settled deliveries and their attempts with response excerpts',
  },
  auditEvents: {
    days: 730,
    // The database refuses to delete younger audit events whatever is configured.
    min: 365,
    max: 3650,
    what: 'Audit log',
  },
} as const satisfies Record<string, RetentionSetting>;

export type RetentionKey = keyof typeof RETENTION_SETTINGS;
export type Retention = Record<RetentionKey, number>;
export const RETENTION_KEYS = Object.keys(RETENTION_SETTINGS) as [RetentionKey, ...RetentionKey[]];

type Snake<S extends string> = S extends `${infer H}${infer T}` ? `${H extends Lowercase<H> ? H : `_${Lowercase<H>}`}${Snake<T>}` : S;

/** A setting's name on the wire (`inboundBodies` → `inbound_bodies`). */
export const retentionField = <K extends RetentionKey>(key: K) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`) as Snake<K>;
