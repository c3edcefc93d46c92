import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import { Validator } from '@seriousme/openapi-schema-validator';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.ts';
import { scoredCustomer, tenantWithKey } from '../support/factories.ts';
import { PROVIDERS } from '../../src/contract/enums.ts';
import { oneCredential } from '../../src/http/docs.ts';

let t: TestApp;
let spec: Record<string, any>;
beforeAll(async () => {
  t = await createTestApp();
  spec = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
});
afterAll(() => t.close());

describe('/docs', () => {
  it('serves Swagger UI as HTML without credentials', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/docs/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/html/);
    expect(res.body).toContain('swagger-ui');
  });

  it('serves its assets itself, loading nothing from elsewhere', async () => {
    const html = (await t.app.inject({ method: 'GET', url: '/docs/' })).body;
    const external = [...html.matchAll(/(?:src|href)="(https?:)?\/\/[^"]+"/g)].map((m) => m[0]);
    expect(external).toEqual([]);
    const bundle = await t.app.inject({ method: 'GET', url: '/docs/static/swagger-ui-bundle.js' });
    expect(bundle.statusCode).toBe(200);
  });
});

describe('Swagger UI with both schemes authorised', () => {
  it('sends the Bearer credential alone, and X-API-Key when it is the only one', () => {
    expect(oneCredential({ headers: { Authorization: 'Bearer jwt', 'X-API-Key': 'sk_1' } }).headers).toEqual({
      Authorization: 'Bearer jwt',
    });
    expect(oneCredential({ headers: { 'X-API-Key': 'sk_1' } }).headers).toEqual({ 'X-API-Key': 'sk_1' });
  });

  it('is given that interceptor by the page', async () => {
    const init = await t.app.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' });
    expect(init.statusCode).toBe(200);
    expect(init.body).toContain('requestInterceptor');
    expect(init.body).toMatch(/x-api-key/);
  });
});

const operations = () =>
  Object.entries<Record<string, any>>(spec.paths).flatMap(([path, item]) =>
    Object.entries<Record<string, any>>(item).map(([method, op]) => ({ path, method, op })),
  );
const deref = (node: Record<string, any>) =>
  node.$ref
    ? node.$ref
        .slice(2)
        .split('/')
        .reduce((acc: any, k: string) => acc[k], spec)
    : node;

describe('the operations of /openapi.json', () => {
  it('each have a unique operationId, a summary, a description and a tag', () => {
    const ops = operations();
    expect(ops.length).toBe(47);
    for (const { op } of ops) {
      expect(op.operationId).toMatch(/^[a-z][A-Za-z]+$/);
      expect(op.summary).toBeTruthy();
      expect(op.description).toBeTruthy();
      expect(op.tags).toHaveLength(1);
    }
    expect(new Set(ops.map((o) => o.op.operationId)).size).toBe(ops.length);
  });

  it('declare their problem answers with the headers the service sends', () => {
    for (const { path, op } of operations()) {
      const statuses = Object.keys(op.responses);
      expect(statuses.some((s) => s.startsWith('4'))).toBe(true);
      expect(statuses).toEqual(expect.arrayContaining(['500', '503']));
      for (const s of statuses.filter((x) => Number(x) >= 400)) {
        expect(deref(op.responses[s]).content['application/problem+json'].schema).toEqual({ $ref: '#/components/schemas/Problem' });
      }
      expect(Object.keys(deref(op.responses['429'] ?? op.responses['503']).headers)).toContain('Retry-After');
      if (op.responses['401']) expect(Object.keys(deref(op.responses['401']).headers)).toContain('WWW-Authenticate');
      const success = deref(op.responses[statuses.find((s) => s.startsWith('2'))!]);
      if (path.startsWith('/api/v1/webhooks/in/')) expect(success.headers['RateLimit-Limit']).toBeUndefined();
      else
        expect(Object.keys(success.headers)).toEqual(expect.arrayContaining(['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']));
    }
  });

  it('describe the inbound webhook: provider, signature headers, a JSON body with an example per provider, every answer', () => {
    const op = spec.paths['/api/v1/webhooks/in/{provider}/{tenant_id}'].post;
    const param = (name: string) => op.parameters.find((p: { name: string }) => p.name === name);
    expect(param('provider').schema.enum).toEqual([...PROVIDERS]);
    for (const h of ['stripe-signature', 'x-hub-signature-256', 'x-slack-signature', 'x-signature-ed25519', 'x-hub-signature']) {
      expect(param(h)).toMatchObject({ in: 'header' });
    }
    const body = op.requestBody.content['application/json'];
    expect(body.schema.type).toBe('object');
    expect(Object.keys(body.examples)).toEqual([...PROVIDERS]);
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '202', '204', '401', '403', '404', '413', '415']));
  });

  it('describe the Meta verification: its hub.* query parameters and its plain-text answer', () => {
    const op = spec.paths['/api/v1/webhooks/in/meta_ads/{tenant_id}'].get;
    expect(op.parameters.filter((p: { in: string }) => p.in === 'query').map((p: { name: string }) => p.name)).toEqual([
      'hub.mode',
      'hub.verify_token',
      'hub.challenge',
    ]);
    expect(Object.keys(op.responses['200'].content)).toEqual(['text/plain']);
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['403', '404']));
  });

  it('let the webhook Test be called without a body', () => {
    expect(spec.paths['/api/v1/webhook-endpoints/{id}/test'].post.requestBody.required).toBe(false);
  });
});

describe('/openapi.json', () => {
  it('is a valid OpenAPI 3 document', async () => {
    const result = await new Validator().validate(spec);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
  });

  it('is valid to @apidevtools/swagger-parser, served and as committed, and names its MIT licence by SPDX identifier', async () => {
    // The parser dereferences the document it is given; each gets its own copy.
    await expect(SwaggerParser.validate(structuredClone(spec) as never)).resolves.toBeTruthy();
    const committed = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'openapi.json'), 'utf8'));
    await expect(SwaggerParser.validate(committed)).resolves.toBeTruthy();
    expect(spec.info.license).toEqual({ name: 'MIT', identifier: 'MIT' });
    expect(readFileSync(join(import.meta.dirname, '..', '..', 'LICENSE'), 'utf8')).toMatch(/^MIT License\n/);
  });

  it('declares Bearer and X-API-Key security schemes, used by default', () => {
    expect(spec.components.securitySchemes).toEqual({
      bearerAuth: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
      apiKeyAuth: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-API-Key' }),
    });
    expect(spec.security).toEqual([{ bearerAuth: [] }, { apiKeyAuth: [] }]);
  });

  it('describes the endpoints the contract names', () => {
    expect(Object.keys(spec.paths)).toEqual(
      expect.arrayContaining([
        '/api/v1/customers',
        '/api/v1/customers/{customer_id}',
        '/api/v1/customers/{customer_id}/health',
        '/api/v1/customers/{customer_id}/churn-prediction',
        '/api/v1/alerts',
        '/api/v1/alerts/{alert_id}',
        '/api/v1/auth/login',
      ]),
    );
  });

  it('generates a typed client that compiles, rejects wrong fields, and calls the API', async () => {
    const dir = join(import.meta.dirname, '..', '..', 'test-output', 'openapi-client');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'api.d.ts'), astToString(await openapiTS(spec as never)));
    const client = (field: string) => `import createClient from 'openapi-fetch';
import type { paths } from './api.d.ts';

export async function firstCustomer(baseUrl: string, apiKey: string) {
  const client = createClient<paths>({ baseUrl, headers: { 'X-API-Key': apiKey } });
  const { data, error } = await client.GET('/api/v1/customers', { params: { query: { limit: 1 } } });
  if (error) throw new Error(error.code);
  const first = data.data[0];
  const health = await client.GET('/api/v1/customers/{customer_id}/health', { params: { path: { customer_id: first.id } } });
  return { score: first.${field}, dimensions: health.data?.dimensions?.map((d) => d.key) };
}
`;
    const compile = (file: string) =>
      ts
        .getPreEmitDiagnostics(
          ts.createProgram([file], {
            strict: true,
            noEmit: true,
            module: ts.ModuleKind.NodeNext,
            moduleResolution: ts.ModuleResolutionKind.NodeNext,
            target: ts.ScriptTarget.ES2022,
            allowImportingTsExtensions: true,
            skipLibCheck: true,
          }),
        )
        .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));

    writeFileSync(join(dir, 'wrong.ts'), client('health_scroe'));
    expect(compile(join(dir, 'wrong.ts')).join('\n')).toMatch(/health_scroe/);

    writeFileSync(join(dir, 'client.ts'), client('health_score'));
    expect(compile(join(dir, 'client.ts'))).toEqual([]);

    const { apiKey, tenantId } = await tenantWithKey(t.prisma);
    const { health } = await scoredCustomer(t.prisma, tenantId, { usage: 60, engagement: 60, support: 60, billing: 60, growth: 60 });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as { port: number };
    const { firstCustomer } = await import(join(dir, 'client.ts'));
    expect(await firstCustomer(`http://127.0.0.1:${port}`, apiKey)).toEqual({
      score: health.score,
      dimensions: ['usage', 'engagement', 'support', 'billing', 'growth'],
    });
    // Type-checking takes seconds, and more on a busy machine: a bound for a hang, not a measure.
  }, 120_000);
});
