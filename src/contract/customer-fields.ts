// A customer's own fields, listed once (docs/architecture.md): the wire shape (entities.ts `customerListItem`,
// and with it the REST answers, /openapi.json and the webhook payloads) and the example customer, the GraphQL
// type (src/schema/customer.ts), the plain-SQL reads (src/services/customer-reads.ts) and the CSV/NDJSON export
// (src/services/export-datasets.ts) are made from this list; the REST facade's GraphQL fragment is checked against it
// (test/customers/customer-fields.test.ts). A field is its `customers` column of the same name.
import { z } from 'zod';
import { HEALTH_STATUSES, RISK_LEVELS } from './enums.ts';
import { probability, score, time, uuid } from './wire.ts';

/** What a field holds; each kind has one wire type, one GraphQL type and one SQL reading. */
export const FIELD_KINDS = {
  uuid,
  text: z.string(),
  score,
  probability,
  health_status: z.enum(HEALTH_STATUSES),
  risk_level: z.enum(RISK_LEVELS),
  time,
} as const;
export type FieldKind = keyof typeof FIELD_KINDS;

interface CustomerField {
  kind: FieldKind;
  nullable: boolean;
  /** Said in the GraphQL schema and /openapi.json. */
  description?: string;
  /** The export's column description. */
  exported: string;
  /** The value of the example customer (the webhook catalog's examples, the documentation's samples). */
  example: string | number;
}

const listed = (values: readonly string[]) => `${values.slice(0, -1).join(', ')} or ${values.at(-1)}`;

export const CUSTOMER_FIELDS = {
  id: { kind: 'uuid', nullable: false, exported: 'Customer id', example: '0b8e3f1a-5c2d-4e6f-8a9b-1c2d3e4f5a6b' },
  external_id: {
    kind: 'text',
    nullable: true,
    description: "The tenant's own id for this customer.",
    exported: 'Your id for the customer',
    example: 'crm-4711',
  },
  name: { kind: 'text', nullable: false, exported: 'Name', example: 'Acme Corp' },
  email: { kind: 'text', nullable: true, exported: 'Email', example: 'billing@acme.example' },
  domain: { kind: 'text', nullable: true, exported: 'Email domain', example: 'acme.example' },
  health_score: {
    kind: 'score',
    nullable: true,
    description: 'Current health score 0-100; null before the first computation.',
    exported: 'Health score 0-100',
    example: 72,
  },
  health_status: { kind: 'health_status', nullable: true, exported: listed(HEALTH_STATUSES), example: 'neutral' },
  churn_probability: { kind: 'probability', nullable: true, exported: 'Churn probability 0-1', example: 0.18 },
  churn_risk_level: { kind: 'risk_level', nullable: true, exported: listed(RISK_LEVELS), example: 'low' },
  created_at: { kind: 'time', nullable: false, exported: 'Created', example: '2026-09-01T10:00:00.000Z' },
  updated_at: { kind: 'time', nullable: false, exported: 'Last changed', example: '2026-11-20T06:00:00.000Z' },
} as const satisfies Record<string, CustomerField>;
export type CustomerFieldName = keyof typeof CUSTOMER_FIELDS;

type Fields = typeof CUSTOMER_FIELDS;
type WireOf<F extends CustomerField> = F['nullable'] extends true
  ? z.ZodNullable<(typeof FIELD_KINDS)[F['kind']]>
  : (typeof FIELD_KINDS)[F['kind']];

/** The wire shape's fields, each with its description. */
export const customerWireFields = Object.fromEntries(
  Object.entries(CUSTOMER_FIELDS).map(([name, f]: [string, CustomerField]) => {
    const base = FIELD_KINDS[f.kind];
    const wire = f.nullable ? base.nullable() : base;
    return [name, f.description ? wire.describe(f.description) : wire];
  }),
) as { [K in keyof Fields]: WireOf<Fields[K]> };

/** How a plain SQL read gives a field as the wire wants it: enum columns as their text. */
export const sqlOf = (name: CustomerFieldName): string => {
  const kind: FieldKind = CUSTOMER_FIELDS[name].kind;
  return kind === 'health_status' || kind === 'risk_level' ? `${name}::text` : name;
};
