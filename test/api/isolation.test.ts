import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.ts';
import { alert, scoredCustomer, tenantWithKey, userWithSession } from '../support/factories.ts';

// Another tenant's ids must look exactly like ids that do not exist: 404, never 403, never data.
let t: TestApp;
let owner: Awaited<ReturnType<typeof tenantWithKey>>;
let other: Awaited<ReturnType<typeof tenantWithKey>>;
let customerId: string;
let alertId: string;

beforeAll(async () => {
  // Endpoints on 127.0.0.1 are allowed here so a Test can fail fast against a closed port.
  t = await createTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
  owner = await tenantWithKey(t.prisma);
  other = await tenantWithKey(t.prisma);
  const { customer } = await scoredCustomer(
    t.prisma,
    owner.tenantId,
    { usage: 50, engagement: 50, support: 50, billing: 50, growth: 50 },
    0.8,
  );
  customerId = customer.id;
  alertId = (await alert(t.prisma, owner.tenantId, customerId)).id;
});
afterAll(() => t.close());

const call = (key: string, method: 'GET' | 'PATCH' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) =>
  t.app.inject({ method, url, headers: { 'x-api-key': key }, ...(payload ? { payload } : {}) });

describe('REST', () => {
  const routes: [string, 'GET' | 'PATCH' | 'POST', () => string, object?][] = [
    ['GET customer', 'GET', () => `/api/v1/customers/${customerId}`],
    ['PATCH customer', 'PATCH', () => `/api/v1/customers/${customerId}`, { name: 'stolen' }],
    ['GET health', 'GET', () => `/api/v1/customers/${customerId}/health`],
    ['GET churn prediction', 'GET', () => `/api/v1/customers/${customerId}/churn-prediction`],
    ['GET health history', 'GET', () => `/api/v1/customers/${customerId}/health/history`],
    ['POST churn outcome', 'POST', () => `/api/v1/customers/${customerId}/churn-outcome`, { churned: false }],
    ['PATCH alert', 'PATCH', () => `/api/v1/alerts/${alertId}`, { status: 'resolved' }],
  ];

  it.each(routes)('%s of another tenant answers 404 not_found', async (_name, method, url, payload) => {
    const res = await call(other.apiKey, method, url(), payload);
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe('not_found');
  });

  it.each(routes)('%s works for the owner (control)', async (_name, method, url, payload) => {
    expect((await call(owner.apiKey, method, url(), payload)).statusCode).toBe(method === 'POST' ? 201 : 200);
  });

  it('leaves another tenant’s customer out of the list', async () => {
    const body = (await call(other.apiKey, 'GET', '/api/v1/customers?limit=100')).json();
    expect(body.data.some((c: { id: string }) => c.id === customerId)).toBe(false);
  });

  it('leaves another tenant’s alerts out, even when filtering by its customer id', async () => {
    const all = (await call(other.apiKey, 'GET', '/api/v1/alerts?limit=100')).json();
    expect(all.data).toHaveLength(0);
    const filtered = (await call(other.apiKey, 'GET', `/api/v1/alerts?customer_id=${customerId}`)).json();
    expect(filtered.data).toHaveLength(0);
  });

  it('did not change anything through the refused writes', async () => {
    await call(other.apiKey, 'PATCH', `/api/v1/customers/${customerId}`, { name: 'hijacked' });
    await call(other.apiKey, 'POST', `/api/v1/customers/${customerId}/churn-outcome`, { churned: true });
    expect((await t.prisma.customer.findUniqueOrThrow({ where: { id: customerId } })).name).not.toBe('hijacked');
    expect(await t.prisma.churnOutcome.count({ where: { customerId, churned: true } })).toBe(0);
  });

  it('keeps weights and the churn model per tenant', async () => {
    const weights = { usage: 0.6, engagement: 0.1, support: 0.1, billing: 0.1, growth: 0.1 };
    expect((await call(other.apiKey, 'PUT', '/api/v1/health-weights', weights)).statusCode).toBe(200);
    expect((await call(owner.apiKey, 'GET', '/api/v1/health-weights')).json().is_default).toBe(true);
    expect((await call(owner.apiKey, 'GET', '/api/v1/churn-model')).json().model_version).toBe('default-v2');
  });
});

describe('GraphQL', () => {
  const gql = (key: string, query: string, variables: object = {}) =>
    t.app.inject({ method: 'POST', url: '/graphql', headers: { 'x-api-key': key }, payload: { query, variables } });

  it.each([
    ['customer', 'query($id: UUID!) { customer(id: $id) { id name } }'],
    ['customer health', 'query($id: UUID!) { customer(id: $id) { health { score } } }'],
    ['customer churn', 'query($id: UUID!) { customer(id: $id) { churnPrediction { probability } } }'],
    ['customer history', 'query($id: UUID!) { customer(id: $id) { healthHistory { nodes { score } } } }'],
    ['recordChurnOutcome', 'mutation($id: UUID!) { recordChurnOutcome(customerId: $id, churned: true) { at } }'],
    ['updateCustomer', 'mutation($id: UUID!) { updateCustomer(id: $id, input: { name: "x" }) { id } }'],
  ])('%s with another tenant’s id is NOT_FOUND without data', async (_name, query) => {
    const body = (await gql(other.apiKey, query, { id: customerId })).json();
    expect(body.errors[0].extensions.code).toBe('not_found');
    expect(body.data).toBeNull();
  });

  it.each([
    ['alert', 'query($id: UUID!) { alert(id: $id) { id } }'],
    ['updateAlert', 'mutation($id: UUID!) { updateAlert(id: $id, input: { status: resolved }) { id } }'],
  ])('%s with another tenant’s id is NOT_FOUND', async (_name, query) => {
    const body = (await gql(other.apiKey, query, { id: alertId })).json();
    expect(body.errors[0].extensions.code).toBe('not_found');
  });

  it('lists only the caller’s customers and alerts', async () => {
    const body = (
      await gql(other.apiKey, '{ customers(first: 100) { nodes { id } totalCount } alerts { nodes { id } totalCount } }')
    ).json();
    expect(body.data).toEqual({ customers: { nodes: [], totalCount: 0 }, alerts: { nodes: [], totalCount: 0 } });
  });

  it('revokes and rotates only the caller’s API keys', async () => {
    const { token } = await userWithSession(t.prisma, t.sessions, other.tenantId, 'admin');
    for (const m of ['revokeApiKey(id: $id) { id }', 'rotateApiKey(id: $id) { secret }']) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/graphql',
        headers: { authorization: `Bearer ${token}` },
        payload: { query: `mutation($id: UUID!) { ${m} }`, variables: { id: owner.apiKeyId } },
      });
      expect(res.json().errors[0].extensions.code).toBe('not_found');
    }
    expect((await t.prisma.apiKey.findUniqueOrThrow({ where: { id: owner.apiKeyId } })).revokedAt).toBeNull();
  });
});

describe('webhook endpoints, deliveries and events', () => {
  let endpointId: string;
  let deliveryId: string;

  beforeAll(async () => {
    const created = await call(owner.apiKey, 'POST', '/api/v1/webhook-endpoints', {
      url: 'https://127.0.0.1:9/hook',
      events: ['alert.created'],
    });
    expect(created.statusCode).toBe(201);
    endpointId = created.json().id;
    // A Test to a closed port fails fast, and leaves a delivery to try resending.
    deliveryId = (await call(owner.apiKey, 'POST', `/api/v1/webhook-endpoints/${endpointId}/test`, {})).json().delivery_id;
  });

  const restRoutes: [string, 'GET' | 'PATCH' | 'POST' | 'DELETE', () => string, object?][] = [
    ['GET endpoint', 'GET', () => `/api/v1/webhook-endpoints/${endpointId}`],
    ['PATCH endpoint', 'PATCH', () => `/api/v1/webhook-endpoints/${endpointId}`, { url: 'https://127.0.0.1:9/stolen' }],
    ['rotate its secret', 'POST', () => `/api/v1/webhook-endpoints/${endpointId}/rotate-secret`],
    ['send it a Test', 'POST', () => `/api/v1/webhook-endpoints/${endpointId}/test`, {}],
    ['list its deliveries', 'GET', () => `/api/v1/webhook-endpoints/${endpointId}/deliveries`],
    ['replay its deliveries', 'POST', () => `/api/v1/webhook-endpoints/${endpointId}/replay`, { since: '2020-01-01T00:00:00Z' }],
    ['resend a delivery', 'POST', () => `/api/v1/webhook-deliveries/${deliveryId}/resend`],
    ['DELETE endpoint', 'DELETE', () => `/api/v1/webhook-endpoints/${endpointId}`],
  ];

  it.each(restRoutes)('REST: %s of another tenant answers 404 not_found', async (_name, method, url, payload) => {
    const res = await t.app.inject({ method, url: url(), headers: { 'x-api-key': other.apiKey }, ...(payload ? { payload } : {}) });
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe('not_found');
  });

  it('REST: leaves another tenant’s endpoints out of the list', async () => {
    expect((await call(other.apiKey, 'GET', '/api/v1/webhook-endpoints')).json().data).toEqual([]);
  });

  it.each([
    ['webhookEndpoint', 'query($id: UUID!) { webhookEndpoint(id: $id) { url } }'],
    ['webhookDeliveries', 'query($id: UUID!) { webhookDeliveries(endpointId: $id) { nodes { id envelope } } }'],
    ['updateWebhookEndpoint', 'mutation($id: UUID!) { updateWebhookEndpoint(id: $id, input: { enabled: false }) { id } }'],
    ['rotateWebhookEndpointSecret', 'mutation($id: UUID!) { rotateWebhookEndpointSecret(id: $id) { secret } }'],
    ['testWebhookEndpoint', 'mutation($id: UUID!) { testWebhookEndpoint(id: $id) { success } }'],
    ['replayWebhookDeliveries', 'mutation($id: UUID!) { replayWebhookDeliveries(endpointId: $id, since: "2020-01-01T00:00:00Z") }'],
    ['deleteWebhookEndpoint', 'mutation($id: UUID!) { deleteWebhookEndpoint(id: $id) }'],
  ])('GraphQL: %s with another tenant’s endpoint is NOT_FOUND without data', async (_name, query) => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'x-api-key': other.apiKey },
      payload: { query, variables: { id: endpointId } },
    });
    expect(res.json().errors[0].extensions.code).toBe('not_found');
    expect(res.json().data).toBeNull();
  });

  it('GraphQL: resendWebhookDelivery with another tenant’s delivery is NOT_FOUND', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'x-api-key': other.apiKey },
      payload: { query: 'mutation($id: UUID!) { resendWebhookDelivery(id: $id) }', variables: { id: deliveryId } },
    });
    expect(res.json().errors[0].extensions.code).toBe('not_found');
  });

  it('left the endpoint, its secret and its deliveries as they were', async () => {
    const e = await t.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: endpointId } });
    expect(e).toMatchObject({ url: 'https://127.0.0.1:9/hook', enabled: true, previousSecret: null });
    expect(await t.prisma.webhookDelivery.count({ where: { endpointId } })).toBe(1);
  });

  it('refuses a usage event for another tenant’s customer, naming it, and records nothing', async () => {
    const before = await t.prisma.signal.count({ where: { customerId } });
    const res = await call(other.apiKey, 'POST', '/api/v1/events', {
      events: [{ customer_id: customerId, event: 'report.exported', timestamp: new Date().toISOString() }],
    });
    expect(res.statusCode).toBe(404);
    expect(res.json().detail).toContain(customerId);
    expect(await t.prisma.signal.count({ where: { customerId } })).toBe(before);
  });
});
