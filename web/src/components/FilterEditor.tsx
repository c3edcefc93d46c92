import { useState } from 'react';
import { useQuery } from 'urql';
import { graphql } from '../gql/index.ts';

// An endpoint's payload filters (docs/receiving-webhooks.md, "Filters"): the JSON the API takes, editable as
// text, and a row that writes one condition into it from the fields of the event type's payload schema. The
// server checks the whole on save and names each problem by its path.

const EventTypeSchemasDoc = graphql(`
  query WebhookEventTypeSchemas {
    webhookEventTypes {
      name
      schema
    }
  }
`);

const OPERATORS = [
  { op: 'eq', label: 'is' },
  { op: 'ne', label: 'is not' },
  { op: 'in', label: 'is one of' },
  { op: 'not_in', label: 'is none of' },
  { op: 'gt', label: '>' },
  { op: 'gte', label: '≥' },
  { op: 'lt', label: '<' },
  { op: 'lte', label: '≤' },
] as const;
type Operator = (typeof OPERATORS)[number]['op'];
const LISTS: readonly Operator[] = ['in', 'not_in'];
const NUMERIC: readonly Operator[] = ['gt', 'gte', 'lt', 'lte'];

interface Field {
  path: string;
  type: 'string' | 'number' | 'boolean';
  values?: string[];
}

type Schema = { type?: string | string[]; enum?: unknown[]; anyOf?: Schema[]; properties?: Record<string, Schema> };

/** A schema's scalar type, through `anyOf` with null. */
function scalarOf(s: Schema): Pick<Field, 'type' | 'values'> | null {
  const options = s.anyOf ?? [s];
  for (const o of options) {
    const types = Array.isArray(o.type) ? o.type : [o.type];
    if (types.includes('number') || types.includes('integer')) return { type: 'number' };
    if (types.includes('boolean')) return { type: 'boolean' };
    if (types.includes('string')) return { type: 'string', values: o.enum?.map(String) };
  }
  return null;
}

/** The fields a filter can name: scalar properties, and those of object properties one level down (`a.b`). */
export function filterableFields(schema: Schema): Field[] {
  const out: Field[] = [];
  for (const [name, prop] of Object.entries(schema.properties ?? {})) {
    const scalar = scalarOf(prop);
    if (scalar) out.push({ path: name, ...scalar });
    const object = (prop.anyOf ?? [prop]).find((o) => o.properties);
    for (const [inner, p] of Object.entries(object?.properties ?? {})) {
      const s = scalarOf(p);
      if (s) out.push({ path: `${name}.${inner}`, ...s });
    }
  }
  return out;
}

/** The value typed, as the field's type reads it; a list for `in` and `not_in`. */
function valueOf(text: string, field: Field, op: Operator): unknown {
  const one = (t: string) => {
    const v = t.trim();
    if (field.type === 'number' || NUMERIC.includes(op)) return Number(v);
    if (field.type === 'boolean') return v === 'true';
    return v;
  };
  return LISTS.includes(op)
    ? text
        .split(',')
        .filter((t) => t.trim() !== '')
        .map(one)
    : one(text);
}

export function FilterEditor({ events, value, onChange }: { events: string[]; value: string; onChange: (text: string) => void }) {
  const [{ data }] = useQuery({ query: EventTypeSchemasDoc });
  const [type, setType] = useState('');
  const [path, setPath] = useState('');
  const [op, setOp] = useState<Operator>('eq');
  const [text, setText] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const eventType = events.includes(type) ? type : (events[0] ?? '');
  const schema = data?.webhookEventTypes.find((t) => t.name === eventType)?.schema as Schema | undefined;
  const fields = schema ? filterableFields(schema) : [];
  const field = fields.find((f) => f.path === path) ?? fields[0];

  const add = () => {
    if (!field || !eventType) return;
    let filters: Record<string, Record<string, Record<string, unknown>>>;
    try {
      filters = value.trim() === '' ? {} : JSON.parse(value);
    } catch {
      setProblem('The filters below are not valid JSON: fix them before adding a condition.');
      return;
    }
    setProblem(null);
    filters[eventType] ??= {};
    filters[eventType][field.path] = { ...filters[eventType][field.path], [op]: valueOf(text, field, op) };
    onChange(JSON.stringify(filters, null, 2));
    setText('');
  };

  return (
    <fieldset className="filter-editor">
      <legend>Filters: send an event only when its payload matches</legend>
      <div className="filter-row">
        <label className="field">
          <span>Event type</span>
          <select value={eventType} onChange={(e) => setType(e.target.value)} aria-label="Filter event type">
            {events.map((e) => (
              <option key={e}>{e}</option>
            ))}
          </select>
        </label>
        <label className="field">
          <span>Field</span>
          <select value={field?.path ?? ''} onChange={(e) => setPath(e.target.value)} aria-label="Filter field">
            {fields.map((f) => (
              <option key={f.path}>{f.path}</option>
            ))}
          </select>
        </label>
        <label className="field">
          <span>Condition</span>
          <select value={op} onChange={(e) => setOp(e.target.value as Operator)} aria-label="Filter operator">
            {OPERATORS.map((o) => (
              <option key={o.op} value={o.op}>
                {o.label}
              </option>
            ))}
          </select>
        </label>
        <label className="field">
          <span>{LISTS.includes(op) ? 'Values, separated by commas' : 'Value'}</span>
          <input
            value={text}
            onChange={(e) => setText(e.target.value)}
            aria-label="Filter value"
            list={field?.values ? `values-${field.path}` : undefined}
            placeholder={field?.values?.slice(0, 3).join(', ')}
          />
          {field?.values ? (
            <datalist id={`values-${field.path}`}>
              {field.values.map((v) => (
                <option key={v} value={v} />
              ))}
            </datalist>
          ) : null}
        </label>
        <button type="button" onClick={add} disabled={!field || text.trim() === ''}>
          Add condition
        </button>
      </div>
      {problem ? (
        <p className="form-error" role="alert">
          {problem}
        </p>
      ) : null}
      <label className="field">
        <span>Filters (JSON; empty sends every event of the types above)</span>
        <textarea className="mono" rows={6} value={value} onChange={(e) => onChange(e.target.value)} spellCheck={false} name="filters" />
      </label>
    </fieldset>
  );
}

/** The filters in words, for the endpoint's summary: "alert.created when severity is one of high, critical". */
export function describeFilters(filters: unknown): string[] {
  if (!filters || typeof filters !== 'object') return [];
  return Object.entries(filters as Record<string, Record<string, Record<string, unknown>>>).map(([type, conditions]) => {
    const parts = Object.entries(conditions).flatMap(([path, ops]) =>
      Object.entries(ops).map(([op, v]) => {
        const label = OPERATORS.find((o) => o.op === op)?.label ?? op;
        return `${path} ${label} ${Array.isArray(v) ? v.join(', ') : String(v)}`;
      }),
    );
    return `${type} when ${parts.join(' and ')}`;
  });
}
