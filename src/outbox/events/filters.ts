import { type FieldError, validationFailed } from '../../errors.ts';
import { isEventName, payloadJsonSchema } from './registry.ts';

/**
 * Payload filters of an endpoint's subscriptions (docs/receiving-webhooks.md, "Filters"): per event type,
 * conditions on payload fields that must all hold for the event to be sent. Each event type's filter is
 * compiled to one SQL/JSON path predicate, which PostgreSQL evaluates wherever a delivery is made or
 * re-armed, so there is one implementation of what a filter lets through.
 */
export type Scalar = string | number | boolean;
export type Condition = Partial<Record<Operator, Scalar | Scalar[]>>;
/** Event type → field path → condition. */
export type Filters = Record<string, Record<string, Condition>>;

const OPERATORS = ['eq', 'ne', 'in', 'not_in', 'gt', 'gte', 'lt', 'lte'] as const;
type Operator = (typeof OPERATORS)[number];
const COMPARISON: Record<Exclude<Operator, 'in' | 'not_in'>, string> = { eq: '==', ne: '!=', gt: '>', gte: '>=', lt: '<', lte: '<=' };
const NUMERIC: ReadonlySet<Operator> = new Set(['gt', 'gte', 'lt', 'lte']);

export const MAX_FIELDS_PER_EVENT = 10;
export const MAX_VALUES = 20;
const MAX_STRING = 200;

type JsonSchema = { type?: string | string[]; enum?: unknown[]; anyOf?: JsonSchema[]; properties?: Record<string, JsonSchema> };

/** The schemas a value of the field may follow (its own, or each branch of its anyOf). */
const branches = (s: JsonSchema): JsonSchema[] => (s.anyOf ? s.anyOf.flatMap(branches) : [s]);

function fieldSchema(event: string, path: string): JsonSchema | undefined {
  let at: JsonSchema | undefined = payloadJsonSchema(event as never) as JsonSchema;
  for (const key of path.split('.')) {
    at = at && branches(at).find((b) => b.properties && Object.hasOwn(b.properties, key))?.properties?.[key];
  }
  return at;
}

/** The JSON types a field's values take, numbers as `number`, and the values it is limited to, if any. */
function fieldTypes(s: JsonSchema): { types: Set<string>; values?: Set<unknown> } {
  const types = new Set<string>();
  let values: Set<unknown> | undefined;
  for (const b of branches(s)) {
    for (const t of [b.type ?? []].flat()) types.add(t === 'integer' ? 'number' : t);
    if (b.enum) values = new Set([...(values ?? []), ...b.enum]);
  }
  return { types, values };
}

const isScalar = (v: unknown): v is Scalar =>
  typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));

/**
 * Checks filters against the endpoint's events and each event's payload schema; a filter that could
 * never be checked (an unknown field, a value of another type than the field's, one the field cannot
 * take) is refused with every problem named. Returns the filters with empty ones dropped.
 */
export function validateFilters(input: unknown, events: readonly string[]): Filters {
  const errors: FieldError[] = [];
  const fail = (path: string, message: string) => errors.push({ path: `filters.${path}`, message });
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw validationFailed([{ path: 'filters', message: 'must be an object keyed by event type' }]);
  }
  const out: Filters = {};
  for (const [event, fields] of Object.entries(input)) {
    if (!isEventName(event) || !events.includes(event)) {
      fail(event, `names an event the endpoint does not subscribe to; its events are: ${events.join(', ')}`);
      continue;
    }
    if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) {
      fail(event, 'must be an object keyed by payload field');
      continue;
    }
    const entries = Object.entries(fields as Record<string, unknown>);
    if (entries.length > MAX_FIELDS_PER_EVENT) fail(event, `at most ${MAX_FIELDS_PER_EVENT} fields`);
    for (const [field, condition] of entries) {
      const where = `${event}.${field}`;
      const schema = fieldSchema(event, field);
      if (!schema) {
        const known = Object.keys((payloadJsonSchema(event) as JsonSchema).properties ?? {});
        fail(where, `is not a field of the ${event} payload; its fields are: ${known.join(', ')}`);
        continue;
      }
      if (typeof condition !== 'object' || condition === null || Array.isArray(condition) || Object.keys(condition).length === 0) {
        fail(where, `must be an object of one or more of: ${OPERATORS.join(', ')}`);
        continue;
      }
      const { types, values } = fieldTypes(schema);
      for (const [op, value] of Object.entries(condition)) {
        const at = `${where}.${op}`;
        if (!(OPERATORS as readonly string[]).includes(op)) {
          fail(at, `is not an operator; use one of: ${OPERATORS.join(', ')}`);
          continue;
        }
        const list = op === 'in' || op === 'not_in';
        const items = list ? value : [value];
        if (list && (!Array.isArray(value) || value.length === 0 || value.length > MAX_VALUES)) {
          fail(at, `must be a list of 1 to ${MAX_VALUES} values`);
          continue;
        }
        if (!list && Array.isArray(value)) {
          fail(at, 'must be one value (use `in` for a list)');
          continue;
        }
        for (const v of items as unknown[]) {
          if (!isScalar(v)) fail(at, 'values are strings, numbers or booleans');
          else if (typeof v === 'string' && v.length > MAX_STRING) fail(at, `strings are at most ${MAX_STRING} characters`);
          else if (NUMERIC.has(op as Operator) && typeof v !== 'number') fail(at, 'compares numbers only');
          else if (!types.has(typeof v)) fail(at, `${JSON.stringify(v)} is not of the field's type (${[...types].join(' or ')})`);
          else if (values && !values.has(v)) fail(at, `${JSON.stringify(v)} is not a value the field takes: ${[...values].join(', ')}`);
        }
      }
      if (!errors.length) (out[event] ??= {})[field] = condition as Condition;
    }
  }
  if (errors.length) throw validationFailed(errors);
  return out;
}

/** A field path as a SQL/JSON path accessor, each key quoted (so any character in it is literal). */
const accessor = (field: string) =>
  `$${field
    .split('.')
    .map((k) => `.${JSON.stringify(k)}`)
    .join('')}`;
/** A value as a SQL/JSON path literal: JSON's string, number and boolean forms are the path language's. */
const literal = (v: Scalar) => JSON.stringify(v);
const typeName = (v: Scalar) => (typeof v === 'number' ? 'number' : typeof v);

/**
 * One event type's filter as a SQL/JSON path predicate. Every condition first requires the field to hold a
 * value of the condition's type, so a missing or null field, or one of another type, fails the condition
 * (`ne` and `not_in` included).
 */
export function filterPath(fields: Record<string, Condition>): string {
  const terms: string[] = [];
  for (const [field, condition] of Object.entries(fields)) {
    const f = accessor(field);
    for (const [op, value] of Object.entries(condition) as [Operator, Scalar | Scalar[]][]) {
      const items = [value].flat();
      const test =
        op === 'in' || op === 'not_in'
          ? `${op === 'not_in' ? '!' : ''}(${items.map((v) => `${f} == ${literal(v)}`).join(' || ')})`
          : `(${f} ${COMPARISON[op]} ${literal(value as Scalar)})`;
      const types = [...new Set(items.map(typeName))].map((t) => `${f}.type() == "${t}"`).join(' || ');
      terms.push(`((${types}) && ${test})`);
    }
  }
  return terms.join(' && ');
}

/** The compiled predicates the endpoint row keeps beside its filters: event type → path. */
export const filterPaths = (filters: Filters): Record<string, string> =>
  Object.fromEntries(Object.entries(filters).map(([event, fields]) => [event, filterPath(fields)]));

/**
 * SQL that is true when the endpoint (alias `e`) sends an event of type `type` with payload `payload`:
 * it has no filter for the type, or the type's predicate holds.
 */
export const passesFilterSql = (type: string, payload: string) =>
  `(e.filter_paths ->> ${type} IS NULL OR coalesce(jsonb_path_match(${payload}, (e.filter_paths ->> ${type})::jsonpath, '{}', true), false))`;
