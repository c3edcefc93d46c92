import { describe, expect } from 'vitest';
import { PROVIDERS } from '../../src/contract/enums.ts';
import { testWith } from '../support/fixtures.ts';
import * as p from '../support/providers.ts';

const test = testWith({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } }).extend(
  'gql',
  async ({ app }) =>
    (token: string, query: string, variables: object = {}) =>
      app.app
        .inject({ method: 'POST', url: '/graphql', headers: { authorization: `Bearer ${token}` }, payload: { query, variables } })
        .then((r) => r.json()),
);
const SET =
  'mutation($p: Provider!, $s: String, $v: String) { setInboundSecret(provider: $p, secret: $s, verifyToken: $v) { provider secret rotated } }';
const CARDS = '{ integrations { provider inboundPath secretSet verifyTokenSet previousSecretValidUntil lastEvent { eventType status } } }';

describe('integration cards', () => {
  test('show one card per provider with the tenant’s inbound path, before any secret exists', async ({
    gql,
    tenant: { tenantId },
    signedIn,
  }) => {
    const { token } = await signedIn('viewer');
    const cards = (await gql(token, CARDS)).data.integrations;
    expect(cards.map((c: { provider: string }) => c.provider)).toEqual([...PROVIDERS]);
    expect(cards[0]).toEqual({
      provider: 'stripe',
      inboundPath: `/api/v1/webhooks/in/stripe/${tenantId}`,
      secretSet: false,
      verifyTokenSet: false,
      previousSecretValidUntil: null,
      lastEvent: null,
    });
  });

  test('let an admin generate a secret shown once, which then verifies, and show the last event', async ({
    app,
    gql,
    tenant: { tenantId },
    signedIn,
  }) => {
    const { token } = await signedIn('admin');
    const { secret, rotated } = (await gql(token, SET, { p: 'stripe' })).data.setInboundSecret;
    expect(secret).toMatch(/^whsec_/);
    expect(rotated).toBe(false);
    const s = p.signStripe(secret, p.stripeEvent('customer.created', p.stripeCustomer('cus_card')));
    expect(
      (await app.app.inject({ method: 'POST', url: `/api/v1/webhooks/in/stripe/${tenantId}`, headers: s.headers, payload: s.body }))
        .statusCode,
    ).toBe(202);
    const stripe = (await gql(token, CARDS)).data.integrations[0];
    expect(stripe).toMatchObject({ secretSet: true, lastEvent: { eventType: 'customer.created', status: 'received' } });
    expect(JSON.stringify(await gql(token, CARDS))).not.toContain(secret);
  });

  test('rotate on a second call, keeping the old secret valid for 24 hours', async ({ gql, signedIn }) => {
    const { token } = await signedIn('owner');
    await gql(token, SET, { p: 'github' });
    const second = (await gql(token, SET, { p: 'github', s: 'pasted-from-github-123' })).data.setInboundSecret;
    expect(second).toEqual({ provider: 'github', secret: 'pasted-from-github-123', rotated: true });
    const card = (await gql(token, CARDS)).data.integrations[1];
    expect(new Date(card.previousSecretValidUntil).getTime() - Date.now()).toBeGreaterThan(23.9 * 3600_000);
  });

  test('refuse a viewer or member who tries to set a secret', async ({ app, gql, tenant: { tenantId }, signedIn }) => {
    for (const role of ['viewer', 'member'] as const) {
      const { token } = await signedIn(role);
      expect((await gql(token, SET, { p: 'slack' })).errors[0].extensions.code).toBe('forbidden');
    }
    expect(await app.prisma.inboundSecret.count({ where: { tenantId } })).toBe(0);
  });

  test('are never managed with an API key', async ({ app, tenant: { tenantId, apiKey } }) => {
    const res = await app.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'x-api-key': apiKey },
      payload: { query: SET, variables: { p: 'stripe' } },
    });
    expect(res.json().errors[0].extensions.code).toBe('forbidden');
    expect(await app.prisma.inboundSecret.count({ where: { tenantId } })).toBe(0);
  });

  test('take the Meta verify token alongside the secret', async ({ gql, signedIn }) => {
    const { token } = await signedIn('admin');
    await gql(token, SET, { p: 'meta_ads', v: 'vt-123' });
    expect((await gql(token, CARDS)).data.integrations[5]).toMatchObject({ secretSet: true, verifyTokenSet: true });
  });
});

describe('webhook endpoints over GraphQL', () => {
  const CREATE =
    'mutation($u: String!) { createWebhookEndpoint(input: { url: $u, events: ["invoice.paid"] }) { secret endpoint { id events } } }';

  test('let an admin create one and a viewer only read', async ({ gql, signedIn }) => {
    const admin = await signedIn('admin');
    const viewer = await signedIn('viewer');
    const created = (await gql(admin.token, CREATE, { u: 'https://127.0.0.1:9/hook' })).data.createWebhookEndpoint;
    expect(created.secret).toMatch(/^whsec_/);
    expect((await gql(viewer.token, CREATE, { u: 'https://127.0.0.1:9/hook' })).errors[0].extensions.code).toBe('forbidden');
    const listed = (await gql(viewer.token, '{ webhookEndpoints { id } webhookEventTypes { name } }')).data;
    expect(listed.webhookEndpoints).toEqual([{ id: created.endpoint.id }]);
    expect(listed.webhookEventTypes.length).toBeGreaterThanOrEqual(7);
  });
});
