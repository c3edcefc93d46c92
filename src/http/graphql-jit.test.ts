import { GraphQLError } from 'graphql';
import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { hotDocumentJit } from './graphql-jit.ts';

function server(compileAfterRuns: number) {
  let compiled = 0;
  const yoga = createYoga({
    schema: createSchema({
      typeDefs: 'type Query { greet(name: String!): String!, n: Int!, fails: Int! }',
      resolvers: {
        Query: {
          greet: (_: unknown, a: { name: string }) => `hello ${a.name}`,
          n: () => 7,
          fails: () => {
            throw new GraphQLError('no');
          },
        },
      },
    }),
    plugins: [hotDocumentJit({ compileAfterRuns, onCompile: () => compiled++ })],
    logging: false,
  });
  const send = (query: string, variables: object = {}, operationName?: string) =>
    yoga.fetch('http://localhost/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
      body: JSON.stringify({ query, variables, operationName }),
    });
  const run = async (query: string, variables: object = {}, operationName?: string) =>
    (await send(query, variables, operationName)).json() as Promise<unknown>;
  const answer = async (query: string, variables: object = {}) => {
    const res = await send(query, variables);
    return { status: res.status, body: await res.text() };
  };
  return { run, answer, compiled: () => compiled };
}

describe('hot document compilation', () => {
  it('compiles no document that is never repeated', async () => {
    const s = server(2);
    for (let i = 0; i < 20; i++) expect(await s.run(`{ a${i}: n }`)).toEqual({ data: { [`a${i}`]: 7 } });
    expect(s.compiled()).toBe(0);
  });

  it('compiles a document once, on its run that proves it hot, and answers it the same before and after', async () => {
    const s = server(3);
    const answers = [];
    for (let i = 0; i < 6; i++) answers.push(await s.run('query($x: String!) { greet(name: $x) n }', { x: 'ada' }));
    expect(s.compiled()).toBe(1);
    expect(new Set(answers.map((a) => JSON.stringify(a))).size).toBe(1);
    expect(answers[0]).toEqual({ data: { greet: 'hello ada', n: 7 } });
  });

  it('refuses variables that do not fit with a 400 and their locations, compiled or not', async () => {
    const s = server(3);
    const doc = 'query($x: String!) { greet(name: $x) }';
    const answers = [];
    for (let i = 0; i < 6; i++) answers.push(await s.answer(doc, { x: 5 }), await s.answer(doc, {}));
    expect(s.compiled()).toBe(1);
    for (let i = 0; i < answers.length; i += 2) {
      expect(answers[i]).toEqual(answers[0]);
      expect(answers[i + 1]).toEqual(answers[1]);
    }
    expect(answers[0]!.status).toBe(400);
    expect(JSON.parse(answers[0]!.body)).toEqual({
      errors: [
        {
          message: 'Variable "$x" got invalid value 5; String cannot represent a non string value: 5',
          locations: [{ line: 1, column: 7 }],
        },
      ],
    });
    expect(answers[1]!.status).toBe(400);
  });

  it('locates a field’s error in the document and gives errors before data, compiled or not', async () => {
    const s = server(3);
    const doc = '{ n\n  fails }';
    const answers = [];
    for (let i = 0; i < 6; i++) answers.push(await s.answer(doc));
    expect(s.compiled()).toBe(1);
    expect(new Set(answers.map((a) => JSON.stringify(a))).size).toBe(1);
    expect(answers[0]!.body).toBe('{"errors":[{"message":"no","locations":[{"line":2,"column":3}],"path":["fails"]}],"data":null}');
  });

  it('never compiles a document with several operations, and runs the one asked for', async () => {
    const s = server(1);
    const doc = 'query A { n } query B { greet(name: "b") }';
    for (let i = 0; i < 3; i++) {
      expect(await s.run(doc, {}, 'A')).toEqual({ data: { n: 7 } });
      expect(await s.run(doc, {}, 'B')).toEqual({ data: { greet: 'hello b' } });
    }
    expect(s.compiled()).toBe(0);
  });
});
