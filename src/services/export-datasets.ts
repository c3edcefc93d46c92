import { DIMENSIONS, type ExportDataset } from '../contract/enums.ts';
import { CUSTOMER_FIELDS, type CustomerFieldName, sqlOf } from '../contract/customer-fields.ts';

// What the exports hold (docs/data-lifecycle.md): each dataset's table, keyset order and columns. The one
// list of them: the export service writes its CSV header from it, and the page reader (export-pages.ts),
// on the export threads or in the process, selects and names the columns from it.

export interface Column {
  name: string;
  sql: string;
  /** For the documentation of the workspace datasets. */
  description?: string;
}

export interface Dataset {
  /** What the records hold; the workspace datasets' descriptions are the contract's (EXPORT_DATASET_CONTENTS). */
  description?: string;
  from: string;
  /** Columns naming the tenant and (for a customer's own export) the customer. */
  tenant: string;
  customer: string;
  /** Keyset order, unique together and led by an index that starts with the tenant's column. */
  key: string[];
  order?: 'asc' | 'desc';
  /** The column `since` and `until` bound, if the dataset has a time. */
  time?: string;
  columns: Column[];
}

/** The export's columns of a customer's own fields, in the list's order, each followed by the `after` columns named for it. */
function customerColumns(after: Partial<Record<CustomerFieldName, Column[]>>): Column[] {
  return (Object.keys(CUSTOMER_FIELDS) as CustomerFieldName[]).flatMap((name) => [
    { name, sql: `c.${sqlOf(name)}`, description: CUSTOMER_FIELDS[name].exported },
    ...(after[name] ?? []),
  ]);
}

export const DATASETS = {
  customers: {
    // A page of customers looks up its own snapshots and predictions: OFFSET 0 keeps the planner from
    // merging each whole table in from its start, which made every page slower than the one before.
    from: `customers c LEFT JOIN LATERAL (SELECT * FROM health_snapshots WHERE customer_id = c.id OFFSET 0) h ON true
           LEFT JOIN LATERAL (SELECT * FROM churn_predictions WHERE customer_id = c.id OFFSET 0) p ON true`,
    tenant: 'c.tenant_id',
    customer: 'c.id',
    key: ['c.created_at', 'c.id'],
    order: 'desc',
    // The customer's own fields (the contract's list), with what it has beside them after some of them.
    columns: customerColumns({
      domain: [
        {
          name: 'identities',
          sql: `(SELECT coalesce(jsonb_agg(jsonb_build_object('provider', i.provider, 'external_id', i.external_id) ORDER BY i.created_at), '[]'::jsonb)
               FROM customer_identities i WHERE i.customer_id = c.id)`,
          description: 'Accounts at providers, as JSON',
        },
      ],
      health_status: [
        ...DIMENSIONS.map((d) => ({
          name: `${d}_score`,
          sql: `(SELECT (x->>'score')::float8 FROM jsonb_array_elements(h.dimensions) x WHERE x->>'key' = '${d}')`,
          description: `The ${d} dimension's score`,
        })),
        { name: 'weakest_dimension', sql: 'h.weakest_dimension', description: 'The lowest-scoring dimension' },
        { name: 'trend_7d', sql: 'h.trend_7d', description: 'Score change over 7 days' },
        { name: 'trend_30d', sql: 'h.trend_30d', description: 'Score change over 30 days' },
        { name: 'health_computed_at', sql: 'h.computed_at', description: 'When the health was computed' },
      ],
      churn_risk_level: [
        { name: 'churn_model_version', sql: 'p.model_version', description: 'The model behind the prediction' },
        { name: 'churn_predicted_at', sql: 'p.predicted_at', description: 'When the prediction was made' },
      ],
    }),
  },
  health_history: {
    from: 'health_history h',
    tenant: 'h.tenant_id',
    customer: 'h.customer_id',
    key: ['h.customer_id', 'h.day'],
    time: 'h.day',
    columns: [
      { name: 'customer_id', sql: 'h.customer_id', description: 'Customer id' },
      { name: 'day', sql: `to_char(h.day, 'YYYY-MM-DD')`, description: 'UTC day' },
      { name: 'score', sql: 'h.score', description: 'Health score' },
      { name: 'status', sql: 'h.status::text', description: 'Health status' },
      ...DIMENSIONS.map((d) => ({ name: d, sql: `h.${d}`, description: `The ${d} dimension's score` })),
      { name: 'churn_probability', sql: 'h.churn_probability', description: 'Churn probability that day' },
    ],
  },
  alerts: {
    from: 'alerts a',
    tenant: 'a.tenant_id',
    customer: 'a.customer_id',
    key: ['a.created_at', 'a.id'],
    order: 'desc',
    time: 'a.created_at',
    columns: [
      { name: 'id', sql: 'a.id', description: 'Alert id' },
      { name: 'customer_id', sql: 'a.customer_id', description: 'Customer id' },
      { name: 'alert_type', sql: 'a.alert_type::text', description: 'Type' },
      { name: 'severity', sql: 'a.severity::text', description: 'Severity' },
      { name: 'status', sql: 'a.status::text', description: 'Status' },
      { name: 'title', sql: 'a.title', description: 'Title' },
      { name: 'message', sql: 'a.message', description: 'Message' },
      { name: 'details', sql: 'a.details', description: 'The values that raised it, as JSON' },
      { name: 'created_at', sql: 'a.created_at', description: 'Raised' },
      { name: 'acknowledged_at', sql: 'a.acknowledged_at', description: 'Acknowledged' },
      { name: 'snoozed_until', sql: 'a.snoozed_until', description: 'Snoozed until' },
      { name: 'resolved_at', sql: 'a.resolved_at', description: 'Resolved' },
      { name: 'resolved_by', sql: 'a.resolved_by', description: 'system or user' },
    ],
  },
  signals: {
    from: 'signals s',
    tenant: 's.tenant_id',
    customer: 's.customer_id',
    key: ['s.occurred_at', 's.id'],
    time: 's.occurred_at',
    columns: [
      { name: 'id', sql: 's.id', description: 'Signal id' },
      { name: 'customer_id', sql: 's.customer_id', description: 'Customer id, or empty when not attributed' },
      { name: 'source', sql: 's.source', description: 'Provider or api' },
      { name: 'kind', sql: 's.kind', description: 'What happened' },
      { name: 'occurred_at', sql: 's.occurred_at', description: 'When' },
      { name: 'value', sql: 's.value', description: 'Value' },
      { name: 'sentiment', sql: 's.sentiment', description: 'Sentiment -1..1 where the source carries text' },
      { name: 'attributes', sql: 's.attributes', description: 'Details, as JSON' },
    ],
  },
  churn_outcomes: {
    from: 'churn_outcomes o',
    tenant: 'o.tenant_id',
    customer: 'o.customer_id',
    key: ['o.customer_id', 'o.at', 'o.id'],
    time: 'o.at',
    columns: [
      { name: 'customer_id', sql: 'o.customer_id', description: 'Customer id' },
      { name: 'churned', sql: 'o.churned', description: 'Churned (true) or retained (false)' },
      { name: 'at', sql: 'o.at', description: 'When the outcome happened' },
      { name: 'source', sql: 'o.source', description: '`api` for a posted label, `stripe` for a cancelled subscription' },
      { name: 'recorded_at', sql: 'o.created_at', description: 'When it was recorded' },
    ],
  },
} as const satisfies Record<ExportDataset, Dataset>;

/** The records of one customer's access-request export, in the order written. */
export const SUBJECT_RECORDS = {
  customer: DATASETS.customers,
  health_history: DATASETS.health_history,
  alert: DATASETS.alerts,
  signal: DATASETS.signals,
  signal_rollup: {
    description: 'Daily aggregates of signals older than the retention',
    from: 'signal_rollups r',
    tenant: 'r.tenant_id',
    customer: 'r.customer_id',
    key: ['r.id'],
    columns: [
      { name: 'day', sql: `to_char(r.day, 'YYYY-MM-DD')`, description: 'UTC day' },
      { name: 'source', sql: 'r.source', description: 'Provider or api' },
      { name: 'kind', sql: 'r.kind', description: 'What happened' },
      { name: 'value', sql: 'r.value', description: 'Value' },
      { name: 'signals', sql: 'r.signals', description: 'How many signals' },
    ],
  },
  churn_prediction: {
    description: 'The latest churn prediction with its factors',
    from: 'churn_predictions p',
    tenant: 'p.tenant_id',
    customer: 'p.customer_id',
    key: ['p.id'],
    columns: [
      { name: 'probability', sql: 'p.probability' },
      { name: 'risk_level', sql: 'p.risk_level::text' },
      { name: 'risk_factors', sql: 'p.risk_factors' },
      { name: 'recommended_interventions', sql: 'p.recommended_interventions' },
      { name: 'features', sql: 'p.features' },
      { name: 'model_version', sql: 'p.model_version' },
      { name: 'predicted_at', sql: 'p.predicted_at' },
    ],
  },
  health: {
    description: 'The latest health computation with every dimension',
    from: 'health_snapshots h',
    tenant: 'h.tenant_id',
    customer: 'h.customer_id',
    key: ['h.id'],
    columns: [
      { name: 'score', sql: 'h.score' },
      { name: 'status', sql: 'h.status::text' },
      { name: 'dimensions', sql: 'h.dimensions' },
      { name: 'computed_at', sql: 'h.computed_at' },
    ],
  },
  churn_outcome: {
    description: 'Labels for churn training',
    from: 'churn_outcomes o',
    tenant: 'o.tenant_id',
    customer: 'o.customer_id',
    key: ['o.id'],
    columns: [
      { name: 'churned', sql: 'o.churned' },
      { name: 'at', sql: 'o.at' },
      { name: 'source', sql: 'o.source' },
    ],
  },
  invoice: {
    description: 'Invoices',
    from: 'invoices i',
    tenant: 'i.tenant_id',
    customer: 'i.customer_id',
    key: ['i.id'],
    columns: [
      { name: 'id', sql: 'i.id' },
      { name: 'provider', sql: 'i.provider' },
      { name: 'external_id', sql: 'i.external_id' },
      { name: 'status', sql: 'i.status::text' },
      { name: 'total_minor', sql: 'i.total_minor::text' },
      { name: 'currency', sql: 'i.currency' },
      { name: 'due_at', sql: 'i.due_at' },
      { name: 'paid_at', sql: 'i.paid_at' },
      { name: 'created_at', sql: 'i.created_at' },
    ],
  },
  subscription: {
    description: 'Subscriptions',
    from: 'subscriptions u',
    tenant: 'u.tenant_id',
    customer: 'u.customer_id',
    key: ['u.id'],
    columns: [
      { name: 'id', sql: 'u.id' },
      { name: 'provider', sql: 'u.provider' },
      { name: 'external_id', sql: 'u.external_id' },
      { name: 'status', sql: 'u.status' },
      { name: 'trial_end', sql: 'u.trial_end' },
      { name: 'seats', sql: 'u.seats' },
      { name: 'created_at', sql: 'u.created_at' },
    ],
  },
  inbound_event: {
    description: 'Raw provider events that produced its signals, with their bodies while they are kept',
    from: `inbox_events e JOIN (SELECT DISTINCT inbox_event_id, customer_id FROM signals WHERE inbox_event_id IS NOT NULL) s ON s.inbox_event_id = e.id`,
    tenant: 'e.tenant_id',
    customer: 's.customer_id',
    key: ['e.id'],
    columns: [
      { name: 'id', sql: 'e.id' },
      { name: 'provider', sql: 'e.provider' },
      { name: 'event_type', sql: 'e.event_type' },
      { name: 'received_at', sql: 'e.received_at' },
      { name: 'body', sql: `nullif(e.body, '')` },
    ],
  },
} satisfies Record<string, Dataset>;

export type SubjectRecord = keyof typeof SUBJECT_RECORDS;
