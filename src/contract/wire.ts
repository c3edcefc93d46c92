// The building blocks of the wire shapes (src/contract/entities.ts, src/contract/requests.ts), and how a
// shape becomes the JSON Schema that Fastify validates and serialises with and that /openapi.json shows.
// A shape is a zod schema; the JSON Schema derived from it carries the shape's type for the compiler
// only, so route handlers get their body, query and reply types from it (ContractTypeProvider).
import type { FastifyTypeProvider } from 'fastify';
import { z } from 'zod';

export const uuid = z.uuid();
/** ISO 8601 with an offset; the API sends UTC (`…Z`). Branded, so the serializer's sources may give a Date. */
export const time = z.iso.datetime({ offset: true }).brand<'DateTime'>();
export type Time = z.output<typeof time>;
export const score = z.number().int().min(0).max(100);
export const probability = z.number().min(0).max(1);
/** Free-form JSON object (alert details, audit changes). */
export const jsonObject = z.record(z.string(), z.unknown());

/**
 * Text whose values the description lists, where the domain types it as plain text (GraphQL exposes it as
 * String): the list is documentation for clients, not a type the compiler holds sources to.
 */
export const listedText = (values: readonly string[]) => z.string().meta({ enum: [...values] });

type Json = Record<string, any>;

declare const TYPE: unique symbol;
/** A JSON Schema that also carries, for the compiler only, the type of the values it describes. */
export type Typed<T> = Json & { readonly [TYPE]?: { readonly value: T } };

/** Fastify's types for a route whose schemas are `Typed`: its body, query, params and replies are theirs. */
export interface ContractTypeProvider extends FastifyTypeProvider {
  validator: this['schema'] extends { readonly [TYPE]?: { readonly value: infer T } } ? T : unknown;
  serializer: this['schema'] extends { readonly [TYPE]?: { readonly value: infer T } } ? T : unknown;
}

/**
 * The JSON Schema of a shape as the routes and /openapi.json use it: OpenAPI 3.0 style (`nullable`, which
 * the 3.1 description turns into type unions), formats without the regular expressions zod adds for them
 * (Ajv checks the formats) and without the safe-integer bounds it gives every integer, a nullable enum
 * listing null as OpenAPI 3.0 requires, free-form objects as `additionalProperties: true`. Objects list every property that is not optional as required.
 */
export function jsonSchemaOf(shape: z.ZodType): Json {
  const { $schema: _, ...json } = z.toJSONSchema(shape, { target: 'openapi-3.0', io: 'input', reused: 'inline' }) as Json;
  return tidy(json) as Json;
}

function tidy(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(tidy);
  if (!node || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node as Json)) {
    if (k === 'enum' || k === 'examples' || k === 'default' || k === 'const') out[k] = v;
    else if (k === 'additionalProperties' && v && typeof v === 'object' && Object.keys(v).length === 0) out[k] = true;
    else if (k === 'propertyNames') continue;
    else if (k === 'properties') out[k] = Object.fromEntries(Object.entries(v as Json).map(([name, p]) => [name, tidy(p)]));
    else out[k] = tidy(v);
  }
  if (out.format && out.pattern) delete out.pattern;
  // zod bounds every integer by the safe range; the API says nothing about it.
  if (out.minimum === Number.MIN_SAFE_INTEGER) delete out.minimum;
  if (out.maximum === Number.MAX_SAFE_INTEGER) delete out.maximum;
  if (out.nullable === true && Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
  return ordered(out);
}

// Keywords in the order the description has always listed them, so a regenerated openapi.json differs only
// where a schema does.
const ORDER = [
  '$id',
  'type',
  'format',
  'pattern',
  'minimum',
  'maximum',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'items',
  'enum',
  'default',
];
const OBJECT_ORDER = ['properties', 'required', 'minProperties', 'additionalProperties'];
function ordered(node: Json): Json {
  const isObject = 'properties' in node;
  const keys = [
    ...ORDER.slice(0, 2),
    ...(isObject ? ['description'] : []),
    ...ORDER.slice(2),
    ...OBJECT_ORDER,
    ...Object.keys(node).filter((k) => !ORDER.includes(k) && !OBJECT_ORDER.includes(k) && k !== 'description'),
    ...(isObject ? [] : ['description']),
  ];
  return Object.fromEntries(keys.filter((k) => k in node).map((k) => [k, node[k]]));
}

/** A shape's JSON Schema for a route (body, query, params, an inline reply), with extra keywords such as `examples`. */
export const schemaOf = <S extends z.ZodType>(shape: S, extra: Json = {}): Typed<z.output<S>> => ({ ...jsonSchemaOf(shape), ...extra });

/** A shape shared by several routes: one component of /openapi.json, referred to by name. */
export interface Component<S extends z.ZodType = z.ZodType> {
  name: string;
  shape: S;
  /** The JSON Schema registered with Fastify (`app.addSchema`). */
  schema: Json;
  /** A reference to it for a route's reply. */
  ref: Typed<z.output<S>>;
}

export const component = <S extends z.ZodType>(name: string, shape: S): Component<S> => ({
  name,
  shape,
  schema: { $id: name, ...jsonSchemaOf(shape) },
  ref: { $ref: `${name}#` },
});

/** A page of items: `{ data, has_more, next_cursor }`. */
export const pageOf = <S extends z.ZodType>(item: S) =>
  z.object({ data: z.array(item), has_more: z.boolean(), next_cursor: z.string().nullable() });

/** The reply schema of a page of a component's items. */
export const pageRef = <S extends z.ZodType>(c: Component<S>): Typed<z.output<ReturnType<typeof pageOf<S>>>> => {
  const { data: _, ...rest } = jsonSchemaOf(pageOf(z.null())).properties;
  return {
    type: 'object',
    properties: { data: { type: 'array', items: c.ref }, ...rest },
    required: ['data', 'has_more', 'next_cursor'],
  };
};
