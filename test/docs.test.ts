import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/app.ts';
import { scoredCustomer, tenantWithKey } from './support/factories.ts';

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

describe('/openapi.json', () => {
  it('is a valid OpenAPI 3 document', async () => {
    const result = await new Validator().validate(spec);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
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
    const dir = join(import.meta.dirname, '..', 'test-output', 'openapi-client');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'api.d.ts'), astToString(await openapiTS(spec as never)));
    const client = (field: string) => `import createClient from 'openapi-fetch';
import type { paths } from './api.d.ts';

export async function firstCustomer(baseUrl: string, apiKey: string) {
  const client = createClient<paths>({ baseUrl, headers: { 'X-API-Key': apiKey } });
  const { data, error } = await client.GET('/api/v1/customers', { params: { query: { limit: 1 } } });
  if (error) throw new Error(error.code);
  const first = data.data[0];
  const health = await client.GET('/api/v1/customers/{customer_id}/health', { params: { path: { customer_id: first.id! } } });
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
  });
});
