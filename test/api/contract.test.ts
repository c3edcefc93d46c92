import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.ts';
import { checkAnswer, compile, takeContractResults } from '../support/contract.ts';
import { tenantWithKey } from '../support/factories.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const doc = {
  openapi: '3.0.3',
  paths: {
    '/things/{id}': {
      get: {
        responses: {
          '200': {
            description: 'ok',
            headers: { 'RateLimit-Limit': { schema: { type: 'integer' } }, 'X-Must': { required: true, schema: { type: 'string' } } },
            content: {
              'application/json': {
                schema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
              },
            },
          },
        },
      },
    },
  },
};
const answer = (statusCode: number, payload: string, headers: Record<string, string> = {}) =>
  ({
    statusCode,
    payload,
    headers: { 'content-type': 'application/json; charset=utf-8', 'x-must': 'yes', ...headers },
  }) as unknown as LightMyRequestResponse;
const problems = (res: LightMyRequestResponse) => {
  takeContractResults();
  checkAnswer(doc, compile(doc), 'GET', '/things/7?x=1', res);
  return takeContractResults().mismatches.map((m) => m.problem);
};

describe('the contract check of test traffic', () => {
  it('checks the answers of described operations that tests receive, and passes those that match', async () => {
    takeContractResults();
    const { apiKey } = await tenantWithKey(t.prisma);
    await t.app.inject({ method: 'GET', url: '/api/v1/customers?limit=2', headers: { 'x-api-key': apiKey } });
    await t.app.inject({ method: 'GET', url: '/api/v1/customers' });
    await t.app.inject({ method: 'GET', url: '/healthz' });
    const { mismatches, checked, answered } = takeContractResults();
    expect(mismatches).toEqual([]);
    // The probe is not part of the description; the two customer lists are.
    expect(checked).toBe(2);
    expect(answered).toEqual(['listCustomers 200', 'listCustomers 401']);
  });

  it('passes an answer that matches', () => {
    expect(problems(answer(200, '{"n":1}', { 'ratelimit-limit': '100' }))).toEqual([]);
  });

  it('reports a status the operation does not declare', () => {
    expect(problems(answer(418, '{"n":1}'))).toEqual([expect.stringMatching(/status 418 is not declared/)]);
  });

  it('reports a body that does not match the schema', () => {
    expect(problems(answer(200, '{"n":"one"}'))).toEqual([expect.stringMatching(/\/n must be integer/)]);
  });

  it('reports an undeclared content type', () => {
    expect(problems(answer(200, 'hello', { 'content-type': 'text/plain' }))).toEqual([
      expect.stringMatching(/text\/plain is not declared/),
    ]);
  });

  it('reads an OpenAPI 3.1 description: a type union with null', () => {
    const doc31 = structuredClone(doc) as Record<string, any>;
    doc31.openapi = '3.1.0';
    doc31.paths['/things/{id}'].get.responses['200'].content['application/json'].schema.properties.n = { type: ['integer', 'null'] };
    const check = (payload: string) => {
      takeContractResults();
      checkAnswer(doc31, compile(doc31), 'GET', '/things/7', answer(200, payload));
      return takeContractResults().mismatches.map((m) => m.problem);
    };
    expect(check('{"n":null}')).toEqual([]);
    expect(check('{"n":"x"}')).toEqual([expect.stringMatching(/\/n must be integer,null/)]);
  });

  it('reports a missing required header and a malformed declared one', () => {
    const res = answer(200, '{"n":1}', { 'ratelimit-limit': 'many' });
    delete (res.headers as Record<string, unknown>)['x-must'];
    expect(problems(res)).toEqual([
      expect.stringMatching(/RateLimit-Limit: "many" does not match/),
      expect.stringMatching(/required header X-Must is missing/),
    ]);
  });
});
