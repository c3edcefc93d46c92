import { issueApiKey } from '../../src/services/api-keys.ts';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPILE_AFTER_RUNS } from '../../src/http/graphql-jit.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { alert, customer, historyPoint, scoredCustomer, signals, tenantWithKey, userWithSession } from '../support/factories.ts';

let t: TestApp;
const registry = new Registry();
beforeAll(async () => {
  t = await createTestApp({ registry });
});
afterAll(() => t.close());

const gql = (headers: Record<string, string>, query: string, variables: object = {}) =>
  t.app
    .inject({ method: 'POST', url: '/graphql', headers, payload: { query, variables } })
    .then((r) => ({ status: r.statusCode, body: r.json() }));
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

const LIST = `query($n: Int) { customers(first: $n) { nodes { id name identities { provider externalId }
  health { score dimensions { key score } } churnPrediction { probability riskFactors { code } }
  healthHistory(first: 30) { nodes { day score } } } pageInfo { hasNextPage } } }`;

describe('queries', () => {
  it('reads customers through a connection with nested health and churn', async () => {
    const { apiKey, tenantId } = await tenantWithKey(t.prisma);
    await scoredCustomer(t.prisma, tenantId, { usage: 70, engagement: 70, support: 70, billing: 70, growth: 70 }, 0.3);
    const { body } = await gql({ 'x-api-key': apiKey }, LIST, { n: 10 });
    expect(body.errors).toBeUndefined();
    expect(body.data.customers.nodes[0]).toMatchObject({ health: { score: 70 }, churnPrediction: { probability: 0.3 } });
  });

  it('costs the same number of SQL queries for 3 customers as for 25 (no N+1)', async () => {
    const { apiKey, tenantId } = await tenantWithKey(t.prisma);
    for (let i = 0; i < 25; i++) {
      const { customer } = await scoredCustomer(t.prisma, tenantId, { usage: i * 3, engagement: 50, support: 50, billing: 50, growth: 50 });
      await t.prisma.customerIdentity.create({
        data: { tenantId, customerId: customer.id, provider: 'stripe', externalId: `cus_${customer.id}` },
      });
      await alert(t.prisma, tenantId, customer.id);
      await historyPoint(t.prisma, tenantId, customer.id, 1, { score: 60 });
    }
    const count = async (n: number, query: string) => {
      await gql({ 'x-api-key': apiKey }, query, { n }); // warm the key lookup
      t.queries.length = 0;
      const { body } = await gql({ 'x-api-key': apiKey }, query, { n });
      expect(body.errors).toBeUndefined();
      return t.queries.filter((q) => !/api_keys|"tenants"."plan"|UPDATE/.test(q)).length;
    };
    const listQueries = await count(25, LIST);
    expect(listQueries).toBe(await count(3, LIST));
    // One planned query for the page plus one per relation kind (identities, snapshot, prediction, history,
    // tenant, the tenant's silent integrations).
    expect(listQueries).toBeLessThanOrEqual(7);
    const ALERTS = 'query($n: Int) { alerts(first: $n) { nodes { id customer { name healthScore } } } }';
    expect(await count(25, ALERTS)).toBe(await count(3, ALERTS));
  });

  it('tells who is calling', async () => {
    const { apiKey, tenantId, tenant } = await tenantWithKey(t.prisma, 'growth');
    const { body } = await gql({ 'x-api-key': apiKey }, '{ viewer { kind tenant { id name plan apiAccess } user { id } } }');
    expect(body.data.viewer).toEqual({
      kind: 'api_key',
      tenant: { id: tenantId, name: tenant.name, plan: 'growth', apiAccess: true },
      user: null,
    });
  });
});

describe('the dashboard queries', () => {
  const SORTED = `query($after: String, $field: CustomerSortField!, $dir: SortDirection!) {
    customers(first: 3, after: $after, orderBy: { field: $field, direction: $dir }) {
      totalCount nodes { id healthScore churnProbability name } pageInfo { endCursor hasNextPage } } }`;

  async function sortedTenant() {
    const k = await tenantWithKey(t.prisma);
    // Ties on purpose (two 40s, two 80s) and two customers without a score.
    for (const usage of [80, 40, 90, 40, 10, 80]) {
      await scoredCustomer(t.prisma, k.tenantId, { usage, engagement: null, support: null, billing: null, growth: null }, usage / 100);
    }
    await customer(t.prisma, k.tenantId, { name: 'Unscored A' });
    await customer(t.prisma, k.tenantId, { name: 'Unscored B' });
    return k;
  }

  async function walk(apiKey: string, field: string, dir: string) {
    const rows: { id: string; healthScore: number | null; churnProbability: number | null }[] = [];
    let after: string | null = null;
    do {
      const { body } = await gql({ 'x-api-key': apiKey }, SORTED, { after, field, dir });
      expect(body.errors).toBeUndefined();
      rows.push(...body.data.customers.nodes);
      after = body.data.customers.pageInfo.hasNextPage ? body.data.customers.pageInfo.endCursor : null;
    } while (after);
    return rows;
  }

  it('pages through customers by health score, each once, ties kept in order and the unscored last', async () => {
    const { apiKey } = await sortedTenant();
    for (const dir of ['asc', 'desc']) {
      const rows = await walk(apiKey, 'healthScore', dir);
      expect(new Set(rows.map((r) => r.id)).size).toBe(8);
      const scores = rows.map((r) => r.healthScore);
      expect(scores.slice(6)).toEqual([null, null]);
      const scored = scores.slice(0, 6) as number[];
      expect(scored).toEqual([...scored].sort((a, b) => (dir === 'asc' ? a - b : b - a)));
    }
  });

  it('sorts by churn probability and by name', async () => {
    const { apiKey } = await sortedTenant();
    const byRisk = (await walk(apiKey, 'churnProbability', 'desc')).map((r) => r.churnProbability);
    expect(byRisk).toEqual([0.9, 0.8, 0.8, 0.4, 0.4, 0.1, null, null]);
    const { body } = await gql({ 'x-api-key': apiKey }, SORTED, { after: null, field: 'name', dir: 'asc' });
    const names = body.data.customers.nodes.map((n: { name: string }) => n.name);
    expect(names).toEqual([...names].sort());
  });

  it('refuses a cursor issued for another order instead of skipping customers', async () => {
    const { apiKey } = await sortedTenant();
    const first = await gql({ 'x-api-key': apiKey }, SORTED, { after: null, field: 'healthScore', dir: 'asc' });
    const cursor = first.body.data.customers.pageInfo.endCursor;
    for (const [field, dir] of [
      ['churnProbability', 'asc'],
      ['healthScore', 'desc'],
      ['name', 'asc'],
    ]) {
      const { body } = await gql({ 'x-api-key': apiKey }, SORTED, { after: cursor, field, dir });
      expect(body.errors?.[0]?.extensions?.code).toBe('validation_failed');
    }
  });

  it('sums up the portfolio: status bands, high risk, average score and open alerts', async () => {
    const { apiKey, tenantId } = await sortedTenant();
    const c = await customer(t.prisma, tenantId);
    await alert(t.prisma, tenantId, c.id, { severity: 'critical' });
    await alert(t.prisma, tenantId, c.id, { alertType: 'inactivity', status: 'resolved' });
    const { body } = await gql(
      { 'x-api-key': apiKey },
      '{ portfolio { customers healthy neutral atRisk unscored highRisk averageScore openAlerts criticalAlerts } }',
    );
    expect(body.data.portfolio).toEqual({
      customers: 9,
      healthy: 3,
      neutral: 0,
      atRisk: 3,
      unscored: 3,
      highRisk: 3,
      averageScore: 56.7,
      openAlerts: 1,
      criticalAlerts: 1,
    });
  });

  it('lists a customer’s recent events newest first with readable labels', async () => {
    const { apiKey, tenantId } = await tenantWithKey(t.prisma);
    const c = await customer(t.prisma, tenantId);
    await signals(t.prisma, tenantId, c.id, [
      { kind: 'billing.payment_failed', daysAgo: 3 },
      { kind: 'usage.event', daysAgo: 1, attributes: { event: 'report.exported' } },
    ]);
    const { body } = await gql(
      { 'x-api-key': apiKey },
      `query($id: UUID!) { customer(id: $id) { recentEvents(first: 5) { kind label attributes } } }`,
      { id: c.id },
    );
    expect(body.data.customer.recentEvents).toEqual([
      { kind: 'usage.event', label: 'Product event', attributes: { event: 'report.exported' } },
      { kind: 'billing.payment_failed', label: 'Payment failed', attributes: {} },
    ]);
  });
});

describe('compiled documents', () => {
  const compiled = async () => (await registry.getSingleMetric('graphql_documents_compiled_total')!.get()).values[0]?.value ?? 0;

  it('compiles no document a client never repeats', async () => {
    const { apiKey } = await tenantWithKey(t.prisma);
    const before = await compiled();
    for (let i = 0; i < COMPILE_AFTER_RUNS + 5; i++) {
      const { body } = await gql({ 'x-api-key': apiKey }, `{ c${i}: customers(first: 1) { totalCount } }`);
      expect(body.data[`c${i}`].totalCount).toBe(0);
    }
    expect(await compiled()).toBe(before);
  });

  it('compiles a document once it has proved hot, and answers it the same before and after', async () => {
    const { apiKey, tenantId } = await tenantWithKey(t.prisma);
    await scoredCustomer(t.prisma, tenantId, { usage: 70, engagement: 60, support: 50, billing: 40, growth: 30 }, 0.3);
    const before = await compiled();
    const answers = [];
    for (let i = 0; i < COMPILE_AFTER_RUNS + 2; i++) answers.push((await gql({ 'x-api-key': apiKey }, LIST, { n: 10 })).body);
    expect(await compiled()).toBe(before + 1);
    expect(answers[0].errors).toBeUndefined();
    for (const a of answers) expect(a).toEqual(answers[0]);
  });
});

describe('errors', () => {
  it('carry a stable code in extensions', async () => {
    const { apiKey } = await tenantWithKey(t.prisma);
    const { body } = await gql({ 'x-api-key': apiKey }, '{ customers(first: 500) { nodes { id } } }');
    expect(body.errors[0].extensions).toMatchObject({ code: 'validation_failed', status: 400 });
  });

  it('answer missing_credentials to an anonymous query', async () => {
    const { body } = await gql({}, '{ viewer { kind } }');
    expect(body.errors[0].extensions.code).toBe('missing_credentials');
  });

  it('answer 400 conflicting_credentials on /graphql too', async () => {
    const { apiKey } = await tenantWithKey(t.prisma);
    const { status, body } = await gql({ 'x-api-key': apiKey, authorization: 'Bearer sk_other' }, '{ viewer { kind } }');
    expect(status).toBe(400);
    expect(body.code).toBe('conflicting_credentials');
  });

  it('refuse a bad UUID variable with validation_failed', async () => {
    const { apiKey } = await tenantWithKey(t.prisma);
    const { body } = await gql({ 'x-api-key': apiKey }, 'query($id: UUID!) { customer(id: $id) { id } }', { id: 'nope' });
    expect(body.errors[0].extensions.code).toBe('validation_failed');
  });
});

describe('login', () => {
  it('works anonymously and returns a usable session', async () => {
    const { tenantId } = await tenantWithKey(t.prisma, 'free');
    const { email, password } = await userWithSession(t.prisma, t.sessions, tenantId, 'owner');
    const { body } = await gql({}, 'mutation($e: String!, $p: String!) { login(email: $e, password: $p) { token expiresAt } }', {
      e: email,
      p: password,
    });
    const me = await gql(bearer(body.data.login.token), '{ viewer { kind user { email role } } }');
    expect(me.body.data.viewer).toEqual({ kind: 'session', user: { email, role: 'owner' } });
  });
});

describe('API key management', () => {
  const CREATE = 'mutation($name: String!) { createApiKey(name: $name) { secret apiKey { id name prefix status } } }';
  const ROTATE = 'mutation($id: UUID!, $h: Int) { rotateApiKey(id: $id, gracePeriodHours: $h) { secret apiKey { id status } } }';
  const useKey = (key: string) =>
    t.app.inject({ method: 'GET', url: '/api/v1/customers', headers: { 'x-api-key': key } }).then((r) => r.statusCode);

  it('lets an admin create a key whose secret is shown once and works', async () => {
    const { tenantId } = await tenantWithKey(t.prisma);
    const { token } = await userWithSession(t.prisma, t.sessions, tenantId, 'admin');
    const { body } = await gql(bearer(token), CREATE, { name: 'CI' });
    const created = body.data.createApiKey;
    expect(created.secret).toMatch(/^sk_[A-Za-z0-9]{40}$/);
    expect(created.apiKey).toMatchObject({ name: 'CI', prefix: created.secret.slice(0, 10), status: 'active' });
    expect(await useKey(created.secret)).toBe(200);
    const listed = await gql(bearer(token), '{ apiKeys { id prefix } }');
    expect(JSON.stringify(listed.body)).not.toContain(created.secret);
  });

  it('never lets an API key create API keys', async () => {
    const { apiKey } = await tenantWithKey(t.prisma);
    const { body } = await gql({ 'x-api-key': apiKey }, CREATE, { name: 'sneaky' });
    expect(body.errors[0].extensions.code).toBe('forbidden');
  });

  it.each(['member', 'viewer'] as const)('does not let a %s create keys', async (role) => {
    const { tenantId } = await tenantWithKey(t.prisma);
    const { token } = await userWithSession(t.prisma, t.sessions, tenantId, role);
    expect((await gql(bearer(token), CREATE, { name: 'x' })).body.errors[0].extensions.code).toBe('forbidden');
  });

  it('revokes a key, which then stops working', async () => {
    const { tenantId, apiKey, apiKeyId } = await tenantWithKey(t.prisma);
    const { token } = await userWithSession(t.prisma, t.sessions, tenantId, 'owner');
    const { body } = await gql(bearer(token), 'mutation($id: UUID!) { revokeApiKey(id: $id) { status revokedAt } }', { id: apiKeyId });
    expect(body.data.revokeApiKey.status).toBe('revoked');
    expect(await useKey(apiKey)).toBe(401);
  });

  it('rotates a key: both work during the grace period', async () => {
    const { tenantId, apiKey, apiKeyId } = await tenantWithKey(t.prisma);
    const { token } = await userWithSession(t.prisma, t.sessions, tenantId, 'admin');
    const { body } = await gql(bearer(token), ROTATE, { id: apiKeyId });
    expect(await useKey(apiKey)).toBe(200);
    expect(await useKey(body.data.rotateApiKey.secret)).toBe(200);
    const old = await t.prisma.apiKey.findUniqueOrThrow({ where: { id: apiKeyId } });
    expect(old.expiresAt!.getTime() - Date.now()).toBeGreaterThan(23.9 * 3600_000);
    expect(old.replacedById).toBe(body.data.rotateApiKey.apiKey.id);
  });

  it('rotates with no grace period: the old key stops at once', async () => {
    const { tenantId, apiKey, apiKeyId } = await tenantWithKey(t.prisma);
    const { token } = await userWithSession(t.prisma, t.sessions, tenantId, 'admin');
    const { body } = await gql(bearer(token), ROTATE, { id: apiKeyId, h: 0 });
    expect(await useKey(apiKey)).toBe(401);
    expect(await useKey(body.data.rotateApiKey.secret)).toBe(200);
  });
  describe('refuses to rotate a key that is no longer live, minting nothing', () => {
    const rotateRefused = async (prepare: (db: TestApp['prisma'], id: string) => Promise<unknown>) => {
      const { tenantId, apiKeyId } = await tenantWithKey(t.prisma);
      const { token } = await userWithSession(t.prisma, t.sessions, tenantId, 'admin');
      await prepare(t.prisma, apiKeyId);
      const before = await t.prisma.apiKey.count({ where: { tenantId } });
      const { body } = await gql(bearer(token), ROTATE, { id: apiKeyId });
      expect(body.data).toBeNull();
      expect(body.errors[0].extensions.code).toBe('conflict');
      expect(body.errors[0].extensions.status).toBe(409);
      expect(await t.prisma.apiKey.count({ where: { tenantId } })).toBe(before);
    };

    it('a revoked key', () => rotateRefused((db, id) => db.apiKey.update({ where: { id }, data: { revokedAt: new Date() } })));

    it('an expired key', () =>
      rotateRefused((db, id) => db.apiKey.update({ where: { id }, data: { expiresAt: new Date(Date.now() - 1000) } })));

    it('a key already rotated, still in its grace period', () =>
      rotateRefused(async (db, id) => {
        const key = await db.apiKey.findUniqueOrThrow({ where: { id } });
        const { key: successor } = await issueApiKey(db, { tenantId: key.tenantId, name: key.name });
        await db.apiKey.update({ where: { id }, data: { replacedById: successor.id, expiresAt: new Date(Date.now() + 3600_000) } });
      }));
  });
});
