// The one serializer from domain values to the wire: REST answers (from GraphQL results), webhook payloads
// (from database rows) and the catalog's examples all go through it. It walks the shape, so the shape
// alone decides which fields are sent and how they are named: `health_score` is read from `healthScore`,
// dates become ISO 8601 strings, a missing nullable value becomes null.
import type { z } from 'zod';
import type { Time } from './wire.ts';

/** A snake_case name in camelCase. */
export type Camel<S extends string> = S extends `${infer H}_${infer T}` ? `${H}${Capitalize<Camel<T>>}` : S;

/**
 * What `serialize` reads for a wire type: the same fields in camelCase, a time as a Date or a string
 * (`D`). A field added to a shape is then demanded by the compiler from every source of it.
 */
export type SourceOf<T, D = Date | string> = [number | string] extends [NonNullable<T>]
  ? unknown // a JSON scalar of any kind (GraphQL's JSON)
  : T extends Time
    ? D
    : T extends string
      ? T
      : T extends readonly (infer U)[]
        ? readonly SourceOf<U, D>[]
        : T extends object
          ? string extends keyof T
            ? unknown
            : { [K in keyof T as K extends string ? Camel<K> : K]: SourceOf<T[K], D> }
          : T;

/** A shape's fields as a database row gives them (src/db/columns.ts): times are Dates. */
export type RowOf<T> = SourceOf<T, Date>;

export const camelCase = (key: string) => key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

type Convert = (value: any) => unknown;
const compiled = new WeakMap<z.ZodType, Convert>();

const leaf: Convert = (v) => (v instanceof Date ? v.toISOString() : v);

function converterOf(shape: z.ZodType): Convert {
  let convert = compiled.get(shape);
  if (convert) return convert;
  const def = (shape as unknown as { _zod: { def: any } })._zod.def;
  switch (def.type) {
    case 'nullable':
    case 'default': {
      const inner = converterOf(def.innerType);
      convert = (v) => (v === null || v === undefined ? null : inner(v));
      break;
    }
    case 'optional': {
      const inner = converterOf(def.innerType);
      convert = (v) => (v === undefined ? undefined : inner(v));
      break;
    }
    case 'object': {
      const fields = Object.entries<z.ZodType>(def.shape).map(([key, field]) => [key, camelCase(key), converterOf(field)] as const);
      convert = (v) => {
        const out: Record<string, unknown> = {};
        for (const [key, from, c] of fields) {
          const value = c(v[from]);
          if (value !== undefined) out[key] = value;
        }
        return out;
      };
      break;
    }
    case 'array': {
      const element = converterOf(def.element);
      convert = (v) => (v as unknown[]).map(element);
      break;
    }
    default:
      convert = leaf;
  }
  compiled.set(shape, convert);
  return convert;
}

/** A domain value in the shape's wire form. */
export const serialize = <S extends z.ZodType>(shape: S, source: SourceOf<z.output<S>>): z.output<S> =>
  converterOf(shape)(source) as z.output<S>;

/** The fields of an object shape as the domain names them, to select them as such (`src/db/columns.ts`). */
export function fieldsOf(shape: z.ZodObject): { key: string; from: string; enum: boolean }[] {
  return Object.entries<z.ZodType>(shape.shape).map(([key, field]) => {
    let def = (field as unknown as { _zod: { def: any } })._zod.def;
    while (def.innerType) def = def.innerType._zod.def;
    return { key, from: camelCase(key), enum: def.type === 'enum' };
  });
}

/** A request body's keys as the domain names them (`external_id` → `externalId`), deeply; free-form objects stay as sent. */
export type CamelKeys<T> = T extends string | number | boolean | null | undefined
  ? T
  : T extends readonly (infer U)[]
    ? CamelKeys<U>[]
    : T extends object
      ? string extends keyof T
        ? T
        : { [K in keyof T as K extends string ? Camel<K> : K]: CamelKeys<T[K]> }
      : T;

/** The inverse of `serialize` for what callers send: the GraphQL operation's input from a REST body. */
export function camelKeys<T>(value: T, freeForm: ReadonlySet<string> = FREE_FORM): CamelKeys<T> {
  if (Array.isArray(value)) return value.map((v) => camelKeys(v, freeForm)) as CamelKeys<T>;
  if (!value || typeof value !== 'object') return value as CamelKeys<T>;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [camelCase(k), freeForm.has(k) ? v : camelKeys(v, freeForm)]),
  ) as CamelKeys<T>;
}
/** Fields whose value is the caller's own JSON, never renamed. */
const FREE_FORM: ReadonlySet<string> = new Set(['properties', 'filters']);
