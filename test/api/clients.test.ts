// Clients generated from the OpenAPI description by two different generators compile under strict
// TypeScript and call every GET operation of the API, with no non-null assertions and no casts.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createClient as heyApi } from '@hey-api/openapi-ts';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.ts';
import { scoredCustomer, tenantWithKey } from '../support/factories.ts';

const dir = join(import.meta.dirname, '..', '..', 'test-output', 'clients');
let t: TestApp;
let spec: Record<string, any>;
let baseUrl: string;
let apiKey: string;
let unknownTenant: string;
let trainingId: string;

beforeAll(async () => {
  t = await createTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
  spec = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  const k = await tenantWithKey(t.prisma);
  apiKey = k.apiKey;
  unknownTenant = crypto.randomUUID();
  await scoredCustomer(t.prisma, k.tenantId, { usage: 60, engagement: 60, support: 60, billing: 60, growth: 60 });
  // A training that ended, as another process left it: what `getChurnTraining` reads.
  const { rows } = await t.pool.query<{ id: string }>(
    `INSERT INTO churn_trainings (id, tenant_id, activate, status, finished_at, error_code, error_message)
     VALUES (gen_random_uuid(), $1, true, 'failed', now(), 'service_unavailable', 'The training was interrupted.') RETURNING id`,
    [k.tenantId],
  );
  trainingId = rows[0]!.id;
  const endpoint = await t.app.inject({
    method: 'POST',
    url: '/api/v1/webhook-endpoints',
    headers: { 'x-api-key': apiKey },
    payload: { url: 'https://127.0.0.1:9/hook', events: ['alert.created'] },
  });
  expect(endpoint.statusCode).toBe(201);
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
});
afterAll(() => t.close());

const compile = (file: string) =>
  ts
    .getPreEmitDiagnostics(
      ts.createProgram([file], {
        strict: true,
        noEmit: true,
        noUncheckedIndexedAccess: true,
        module: ts.ModuleKind.ESNext,
        moduleResolution: ts.ModuleResolutionKind.Bundler,
        target: ts.ScriptTarget.ES2022,
        lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
        allowImportingTsExtensions: true,
        skipLibCheck: true,
      }),
    )
    .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));

const getOperations = () =>
  Object.values<Record<string, { operationId: string }>>(spec.paths)
    .flatMap((item) => (item.get ? [item.get.operationId] : []))
    .sort();

/** No `!` after an expression and no `as` casts: the program must narrow with checks. */
const assertNoEscapes = (source: string) => {
  expect(source).not.toMatch(/[\w)\]]!(?!=)/);
  expect(source).not.toMatch(/(?<!\*\s)\bas\s+(?!const\b)\w/);
};

const OPENAPI_FETCH_PROGRAM = `import createClient from 'openapi-fetch';
import type { paths } from './openapi-fetch/api.d.ts';

export async function callEveryGet(baseUrl: string, apiKey: string, unknownTenant: string, trainingId: string) {
  const c = createClient<paths>({ baseUrl, headers: { 'X-API-Key': apiKey } });
  const seen: Record<string, number> = {};
  const customers = await c.GET('/api/v1/customers', { params: { query: { limit: 10 } } });
  seen.listCustomers = customers.response.status;
  const customer = customers.data?.data[0];
  if (!customer?.id) throw new Error('no customer');
  const path = { customer_id: customer.id };
  seen.getCustomer = (await c.GET('/api/v1/customers/{customer_id}', { params: { path } })).response.status;
  const health = await c.GET('/api/v1/customers/{customer_id}/health', { params: { path } });
  seen.getCustomerHealth = health.response.status;
  seen.getCustomerChurnPrediction = (await c.GET('/api/v1/customers/{customer_id}/churn-prediction', { params: { path } })).response.status;
  seen.listCustomerHealthHistory = (await c.GET('/api/v1/customers/{customer_id}/health/history', { params: { path, query: { limit: 5 } } })).response.status;
  seen.listCustomerHealthChanges = (await c.GET('/api/v1/customers/{customer_id}/health/changes', { params: { path, query: { limit: 5 } } })).response.status;
  seen.listAlerts = (await c.GET('/api/v1/alerts', { params: { query: { status: 'open' } } })).response.status;
  seen.listWebhookEventTypes = (await c.GET('/api/v1/webhook-event-types')).response.status;
  const endpoints = await c.GET('/api/v1/webhook-endpoints');
  seen.listWebhookEndpoints = endpoints.response.status;
  const endpoint = endpoints.data?.data[0];
  if (!endpoint?.id) throw new Error('no endpoint');
  seen.getWebhookEndpoint = (await c.GET('/api/v1/webhook-endpoints/{id}', { params: { path: { id: endpoint.id } } })).response.status;
  seen.listWebhookDeliveries = (await c.GET('/api/v1/webhook-endpoints/{id}/deliveries', { params: { path: { id: endpoint.id } } })).response.status;
  const stats = await c.GET('/api/v1/webhook-endpoints/{id}/stats', { params: { path: { id: endpoint.id }, query: { window: 'hour' } } });
  seen.getWebhookEndpointStats = stats.response.status;
  if (stats.data && stats.data.points.length !== 12) throw new Error('an hour is twelve points');
  if (endpoint.circuit.state !== 'closed') throw new Error('a new endpoint’s breaker is closed');
  const events = await c.GET('/api/v1/webhook-events', { params: { query: { subject: \`customer:\${customer.id}\`, after_sequence: 0 } } });
  seen.listWebhookEvents = events.response.status;
  seen.getHealthWeights = (await c.GET('/api/v1/health-weights')).response.status;
  seen.getChurnModel = (await c.GET('/api/v1/churn-model')).response.status;
  const training = await c.GET('/api/v1/churn-model/trainings/{training_id}', { params: { path: { training_id: trainingId } } });
  seen.getChurnTraining = training.response.status;
  if (training.data?.error?.code !== 'service_unavailable') throw new Error('the training read is not the one that failed');
  seen.listAuditEvents = (await c.GET('/api/v1/audit-events', { params: { query: { limit: 5 } } })).response.status;
  seen.getWorkspace = (await c.GET('/api/v1/workspace')).response.status;
  seen.getRetention = (await c.GET('/api/v1/retention')).response.status;
  const csv = await c.GET('/api/v1/exports/{dataset}', { params: { path: { dataset: 'customers' }, query: { format: 'csv' } }, parseAs: 'text' });
  seen.exportDataset = csv.response.status;
  seen.exportCustomer = (await c.GET('/api/v1/customers/{customer_id}/export', { params: { path }, parseAs: 'text' })).response.status;
  const meta = await c.GET('/api/v1/webhooks/in/meta_ads/{tenant_id}', {
    params: { path: { tenant_id: unknownTenant }, query: { 'hub.mode': 'subscribe', 'hub.verify_token': 'x', 'hub.challenge': '1' } },
    parseAs: 'text',
  });
  seen.verifyMetaWebhook = meta.response.status;
  const problemCode = meta.error?.code;
  return { seen, dimensions: health.data?.dimensions?.map((d) => d.key), problemCode };
}
`;

const HEY_API_PROGRAM = `import { createClient } from './hey-api/client/index.js';
import * as sdk from './hey-api/sdk.gen.js';

// Without throwOnError a failed fetch comes back with no response; 0 stands for it.
const status = (r: { response?: Response }) => r.response?.status ?? 0;

export async function callEveryGet(baseUrl: string, apiKey: string, unknownTenant: string, trainingId: string) {
  const client = createClient({ baseUrl, headers: { 'X-API-Key': apiKey } });
  const seen: Record<string, number> = {};
  const customers = await sdk.listCustomers({ client, query: { limit: 10 } });
  seen.listCustomers = status(customers);
  const customer = customers.data?.data[0];
  if (!customer?.id) throw new Error('no customer');
  const path = { customer_id: customer.id };
  seen.getCustomer = status(await sdk.getCustomer({ client, path }));
  const health = await sdk.getCustomerHealth({ client, path });
  seen.getCustomerHealth = status(health);
  seen.getCustomerChurnPrediction = status(await sdk.getCustomerChurnPrediction({ client, path }));
  seen.listCustomerHealthHistory = status(await sdk.listCustomerHealthHistory({ client, path, query: { limit: 5 } }));
  seen.listCustomerHealthChanges = status(await sdk.listCustomerHealthChanges({ client, path, query: { limit: 5 } }));
  seen.listAlerts = status(await sdk.listAlerts({ client, query: { status: 'open' } }));
  seen.listWebhookEventTypes = status(await sdk.listWebhookEventTypes({ client }));
  const endpoints = await sdk.listWebhookEndpoints({ client });
  seen.listWebhookEndpoints = status(endpoints);
  const endpoint = endpoints.data?.data[0];
  if (!endpoint?.id) throw new Error('no endpoint');
  seen.getWebhookEndpoint = status(await sdk.getWebhookEndpoint({ client, path: { id: endpoint.id } }));
  seen.listWebhookDeliveries = status(await sdk.listWebhookDeliveries({ client, path: { id: endpoint.id } }));
  seen.getWebhookEndpointStats = status(await sdk.getWebhookEndpointStats({ client, path: { id: endpoint.id }, query: { window: 'day' } }));
  seen.listWebhookEvents = status(await sdk.listWebhookEvents({ client, query: { subject: \`customer:\${customer.id}\`, after_sequence: 0 } }));
  seen.getHealthWeights = status(await sdk.getHealthWeights({ client }));
  seen.getChurnModel = status(await sdk.getChurnModel({ client }));
  seen.getChurnTraining = status(await sdk.getChurnTraining({ client, path: { training_id: trainingId } }));
  seen.listAuditEvents = status(await sdk.listAuditEvents({ client, query: { limit: 5 } }));
  seen.getWorkspace = status(await sdk.getWorkspace({ client }));
  seen.getRetention = status(await sdk.getRetention({ client }));
  seen.exportDataset = status(await sdk.exportDataset({ client, path: { dataset: 'customers' }, query: { format: 'csv' }, parseAs: 'text' }));
  seen.exportCustomer = status(await sdk.exportCustomer({ client, path, parseAs: 'text' }));
  const meta = await sdk.verifyMetaWebhook({
    client,
    path: { tenant_id: unknownTenant },
    query: { 'hub.mode': 'subscribe', 'hub.verify_token': 'x', 'hub.challenge': '1' },
    parseAs: 'text',
  });
  seen.verifyMetaWebhook = status(meta);
  const problemCode = typeof meta.error === 'object' ? meta.error.code : undefined;
  return { seen, dimensions: health.data?.dimensions?.map((d) => d.key), problemCode };
}
`;

type Program = (
  baseUrl: string,
  apiKey: string,
  unknownTenant: string,
  trainingId: string,
) => Promise<{ seen: Record<string, number>; dimensions?: string[]; problemCode?: string }>;

async function runProgram(name: string, source: string) {
  assertNoEscapes(source);
  const file = join(dir, `${name}.ts`);
  writeFileSync(file, source);
  expect(compile(file)).toEqual([]);
  const { callEveryGet } = (await import(file)) as { callEveryGet: Program };
  const { seen, dimensions, problemCode } = await callEveryGet(baseUrl, apiKey, unknownTenant, trainingId);
  expect(Object.keys(seen).sort()).toEqual(getOperations());
  const { verifyMetaWebhook, ...rest } = seen;
  expect(Object.values(rest).every((s) => s === 200)).toBe(true);
  // The unknown tenant's address: the typed problem answer comes back, not an exception.
  expect({ verifyMetaWebhook, problemCode }).toEqual({ verifyMetaWebhook: 404, problemCode: 'not_found' });
  expect(dimensions).toEqual(['usage', 'engagement', 'support', 'billing', 'growth']);
}

// Generating and type-checking a client takes seconds, and more on a busy machine: a bound for a hang.
const COMPILE_TIMEOUT_MS = 120_000;

describe('generated clients', () => {
  it(
    'openapi-typescript with openapi-fetch compiles strictly and calls every GET operation',
    async () => {
      mkdirSync(join(dir, 'openapi-fetch'), { recursive: true });
      writeFileSync(join(dir, 'openapi-fetch', 'api.d.ts'), astToString(await openapiTS(spec as never)));
      await runProgram('openapi-fetch-program', OPENAPI_FETCH_PROGRAM);
    },
    COMPILE_TIMEOUT_MS,
  );

  it(
    '@hey-api/openapi-ts with its fetch client compiles strictly and calls every GET operation',
    async () => {
      await heyApi({
        input: spec,
        output: join(dir, 'hey-api'),
        plugins: ['@hey-api/client-fetch', '@hey-api/typescript', '@hey-api/sdk'],
        logs: { level: 'silent' },
      } as never);
      await runProgram('hey-api-program', HEY_API_PROGRAM);
    },
    COMPILE_TIMEOUT_MS,
  );
});
