import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { hotDocumentJit } from './graphql-jit.ts';

function server(compileAfterRuns: number) {
  let compiled = 0;
  const yoga = createYoga({
    schema: createSchema({
      typeDefs: 'type Query { greet(name: String!): String!, n: Int! }',
      resolvers: { Query: { greet: (_: unknown, a: { name: string }) => `hello ${a.name}`, n: () => 7 } },
    }),
    plugins: [hotDocumentJit({ compileAfterRuns, onCompile: () => compiled++ })],
    logging: false,
  });
  const run = async (query: string, variables: object = {}, operationName?: string) => {
    const res = await yoga.fetch('http://localhost/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query, variables, operationName }),
    });
    return res.json() as Promise<unknown>;
  };
  return { run, compiled: () => compiled };
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
