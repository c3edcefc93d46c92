import { operator } from '../../src/services/audit.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInboundSecretStore } from '../../src/services/integrations.ts';
import { createTestApp, type TestApp, testSecretBox } from '../support/app.ts';
import { tenantWithKey } from '../support/factories.ts';
import * as p from '../support/providers.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const createCustomer = (apiKey: string, contentType: string, payload: string | Buffer) =>
  t.app.inject({ method: 'POST', url: '/api/v1/customers', headers: { 'x-api-key': apiKey, 'content-type': contentType }, payload });

function expectProblem(res: { statusCode: number; json: () => any; headers: Record<string, unknown> }, status: number, code: string) {
  expect(res.statusCode).toBe(status);
  expect(res.headers['content-type']).toMatch(/problem\+json/);
  expect(res.json().code).toBe(code);
}

describe('JSON bodies on the API', () => {
  it.each([
    'application/json; charset=utf-8',
    'Application/JSON ; Charset=UTF-8',
    'application/merge-patch+json',
    'application/vnd.api+json; charset=utf-8',
  ])('accepts Content-Type %s', async (contentType) => {
    const { apiKey } = await tenantWithKey(t.prisma);
    const res = await createCustomer(apiKey, contentType, JSON.stringify({ name: 'Acme' }));
    expect(res.statusCode).toBe(201);
    expect(res.json().name).toBe('Acme');
  });

  it('answers 415 naming the type received for a body that is not JSON', async () => {
    const { apiKey } = await tenantWithKey(t.prisma);
    const res = await createCustomer(apiKey, 'text/csv; charset=utf-8', 'name\nAcme');
    expectProblem(res, 415, 'unsupported_media_type');
    expect(res.json().detail).toContain('text/csv');
  });

  it('answers 415 naming the charset for JSON in an encoding other than UTF-8, and stores nothing', async () => {
    const { apiKey, tenantId } = await tenantWithKey(t.prisma);
    const res = await createCustomer(apiKey, 'application/json; charset=latin1', Buffer.from('{"name":"Caf\xe9"}', 'latin1'));
    expectProblem(res, 415, 'unsupported_media_type');
    expect(res.json().detail).toContain('latin1');
    expect(await t.prisma.customer.count({ where: { tenantId } })).toBe(0);
  });

  it('refuses bytes that are not valid UTF-8 with 400 rather than storing U+FFFD', async () => {
    const { apiKey, tenantId } = await tenantWithKey(t.prisma);
    const body = Buffer.concat([Buffer.from('{"name":"Caf'), Buffer.from([0xe9]), Buffer.from('"}')]);
    const res = await createCustomer(apiKey, 'application/json', body);
    expectProblem(res, 400, 'validation_failed');
    expect(res.json().errors).toEqual([{ path: 'body', message: 'is not valid UTF-8' }]);
    expect(await t.prisma.customer.count({ where: { tenantId } })).toBe(0);
  });

  it.each([
    ['a lone high surrogate', '{"name":"a\\ud800b"}'],
    ['a lone low surrogate', '{"name":"\\uDC00"}'],
    ['a lone surrogate in a key', '{"name":"x","metadata":{"\\ud83d":1}}'],
  ])('refuses %s escaped in JSON with 400', async (_what, body) => {
    const { apiKey, tenantId } = await tenantWithKey(t.prisma);
    const res = await createCustomer(apiKey, 'application/json', body);
    expectProblem(res, 400, 'validation_failed');
    expect(res.json().detail).toMatch(/surrogate/);
    expect(await t.prisma.customer.count({ where: { tenantId } })).toBe(0);
  });

  it('keeps a surrogate pair escaped in JSON (an emoji) as the character it encodes', async () => {
    const { apiKey } = await tenantWithKey(t.prisma);
    const res = await createCustomer(apiKey, 'application/json', '{"name":"Acme \\ud83d\\ude80"}');
    expect(res.statusCode).toBe(201);
    expect(res.json().name).toBe('Acme 🚀');
  });
});

describe('JSON bodies on GraphQL', () => {
  const QUERY = JSON.stringify({ query: 'mutation { createCustomer(input: { name: "Gql" }) { name } }' });
  const gql = (apiKey: string, contentType: string, payload: string) =>
    t.app.inject({ method: 'POST', url: '/graphql', headers: { 'x-api-key': apiKey, 'content-type': contentType }, payload });

  it.each(['application/json; charset=utf-8', 'Application/JSON ; Charset=UTF-8'])('accepts Content-Type %s', async (contentType) => {
    const { apiKey } = await tenantWithKey(t.prisma);
    const res = await gql(apiKey, contentType, QUERY);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ data: { createCustomer: { name: 'Gql' } } });
  });

  it('answers 415 problem+json for a body that is not JSON', async () => {
    const { apiKey } = await tenantWithKey(t.prisma);
    const res = await gql(apiKey, 'text/plain', QUERY);
    expectProblem(res, 415, 'unsupported_media_type');
    expect(res.json().detail).toContain('text/plain');
  });
});

describe('JSON bodies on inbound webhooks', () => {
  async function stripeTenant() {
    const { tenantId } = await tenantWithKey(t.prisma, 'free');
    const { secret } = await createInboundSecretStore(t.prisma, testSecretBox(), { cacheMs: 0 }).put({ tenantId, provider: 'stripe' }, operator(tenantId));
    return { tenantId, secret };
  }
  const post = (tenantId: string, s: p.Signed, contentType: string) =>
    t.app.inject({
      method: 'POST',
      url: `/api/v1/webhooks/in/stripe/${tenantId}`,
      headers: { ...s.headers, 'content-type': contentType },
      payload: s.body,
    });

  it.each(['application/json; charset=utf-8', 'Application/JSON ; Charset=UTF-8', 'application/json;charset="utf-8"'])(
    'accepts a signed event sent as %s',
    async (contentType) => {
      const { tenantId, secret } = await stripeTenant();
      const res = await post(tenantId, p.signStripe(secret, p.stripeEvent('customer.created', p.stripeCustomer('cus_ct'))), contentType);
      expect(res.statusCode).toBe(202);
      expect(await t.prisma.inboxEvent.count({ where: { tenantId } })).toBe(1);
    },
  );

  it('answers 415 naming the type received, and stores nothing', async () => {
    const { tenantId, secret } = await stripeTenant();
    const res = await post(
      tenantId,
      p.signStripe(secret, p.stripeEvent('customer.created', p.stripeCustomer('cus_ct'))),
      'application/x-www-form-urlencoded',
    );
    expectProblem(res, 415, 'unsupported_media_type');
    expect(res.json().detail).toContain('application/x-www-form-urlencoded');
    expect(await t.prisma.inboxEvent.count({ where: { tenantId } })).toBe(0);
  });
});

describe('requests to no route', () => {
  it('answers 404 for a body of any type sent to an unknown address', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/nowhere', headers: { 'content-type': 'text/plain' }, payload: 'hello' });
    expectProblem(res, 404, 'not_found');
  });
});
