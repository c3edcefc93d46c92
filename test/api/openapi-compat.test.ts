import { describe, expect, it } from 'vitest';
import { breakingChanges } from '../../scripts/openapi-compat.ts';

const doc = (op: Record<string, unknown>, schemas: Record<string, unknown> = {}) => ({
  openapi: '3.0.3',
  paths: { '/things/{id}': { get: { operationId: 'getThing', ...op } } },
  components: { schemas },
});
const thing = (props: Record<string, unknown>, required: string[] = Object.keys(props)) => ({
  responses: { '200': { content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } } } },
  schemas: { Thing: { type: 'object', properties: props, required } },
});
const withThing = (props: Record<string, unknown>, required?: string[], extra: Record<string, unknown> = {}) => {
  const t = thing(props, required);
  return doc({ responses: t.responses, ...extra }, t.schemas);
};

describe('breaking changes between two descriptions', () => {
  it('finds none when a response only gains a field', () => {
    expect(breakingChanges(withThing({ a: { type: 'string' } }), withThing({ a: { type: 'string' }, b: { type: 'integer' } }))).toEqual([]);
  });

  it('reads 3.0 nullable and a 3.1 type union with null as the same type', () => {
    const before = withThing({ a: { type: 'string', nullable: true } });
    const after = { ...withThing({ a: { type: ['string', 'null'] } }), openapi: '3.1.0' };
    expect(breakingChanges(before, after)).toEqual([]);
  });

  it('reports a removed response field, one no longer always present, and one that may now be null', () => {
    const before = withThing({ a: { type: 'string' }, b: { type: 'string' }, c: { type: 'string' } });
    const after = withThing({ b: { type: 'string' }, c: { type: 'string', nullable: true } }, ['c']);
    expect(breakingChanges(before, after)).toEqual([
      'GET /things/{id} 200.a: removed',
      'GET /things/{id} 200.b: no longer always present',
      'GET /things/{id} 200.c: type string became string|null',
    ]);
  });

  it('reports a removed operation, a renamed operationId and a new required parameter', () => {
    const param = { parameters: [{ in: 'query', name: 'q', required: true, schema: { type: 'string' } }] };
    expect(breakingChanges(doc({}), { ...doc({}), paths: {} })).toEqual(['GET /things/{id}: removed']);
    expect(breakingChanges(doc({}), doc({ operationId: 'fetchThing' }))).toEqual([
      'GET /things/{id}: operationId getThing became fetchThing',
    ]);
    expect(breakingChanges(doc({}), doc(param))).toEqual(['GET /things/{id}: new required parameter query:q']);
  });

  it('reports a request enum value no longer accepted and a newly required body field', () => {
    const body = (status: string[], required: string[]) => ({
      requestBody: {
        content: {
          'application/json': {
            schema: { type: 'object', properties: { s: { type: 'string', enum: status }, n: { type: 'string' } }, required },
          },
        },
      },
    });
    expect(breakingChanges(doc(body(['a', 'b'], [])), doc(body(['a'], ['n'])))).toEqual([
      'GET /things/{id} request.s: no longer accepts "b"',
      'GET /things/{id} request.n: newly required',
    ]);
  });
});
