import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.ts';
import { customer, scoredCustomer, tenantWithKey } from '../support/factories.ts';

// A page of plain columns, and one customer with its health, are read in plain SQL; one that reaches a relation goes through Prisma's planned
// query. Both must give the same rows in the same order, page after page, under every order and filter.

let t: TestApp;
let apiKey: string;
let tenantId: string;
beforeAll(async () => {
  t = await createTestApp();
  const k = await tenantWithKey(t.prisma);
  apiKey = k.apiKey;
  tenantId = k.tenantId;
  const at = new Date('2026-01-01T00:00:00Z').getTime();
  // Ties on every sort field, and nulls on the nullable ones, so cursors must fall back to the id.
  for (let i = 0; i < 13; i++) {
    await t.prisma.customer.create({
      data: {
        tenantId: k.tenantId,
        name: `Customer ${i % 4}`,
        createdAt: new Date(at + (i % 5) * 1000),
        healthScore: i % 3 === 0 ? null : (i * 17) % 60,
        healthStatus: i % 3 === 0 ? null : i % 2 ? 'healthy' : 'at_risk',
        churnProbability: i % 4 === 0 ? null : (i % 3) / 4,
        churnRiskLevel: i % 4 === 0 ? null : i % 2 ? 'low' : 'high',
      },
    });
  }
});
afterAll(() => t.close());

const COLUMNS = 'id name healthScore churnProbability createdAt';

interface Page {
  nodes: { id: string }[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
  totalCount: number;
}

async function walk(args: string, fields: string): Promise<{ ids: string[]; total: number }> {
  const ids: string[] = [];
  let after: string | null = null;
  let total = 0;
  for (let n = 0; n < 20; n++) {
    const query = `query($after: String) { customers(first: 5, after: $after${args}) { nodes { ${fields} } pageInfo { hasNextPage endCursor } totalCount } }`;
    const res = await t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'x-api-key': apiKey },
      payload: { query, variables: { after } },
    });
    const body: { errors?: unknown; data: { customers: Page } } = res.json();
    expect(body.errors).toBeUndefined();
    const page: Page = body.data.customers;
    ids.push(...page.nodes.map((c) => c.id));
    total = page.totalCount;
    if (!page.pageInfo.hasNextPage) break;
    after = page.pageInfo.endCursor;
  }
  return { ids, total };
}

describe('customer pages read in plain SQL', () => {
  const orders = ['createdAt', 'name', 'healthScore', 'churnProbability'].flatMap((f) =>
    ['asc', 'desc'].map((d) => `, orderBy: { field: ${f}, direction: ${d} }`),
  );
  it.each([
    '',
    ...orders,
    ', riskLevel: low',
    ', healthStatus: at_risk',
    ', riskLevel: high, orderBy: { field: healthScore, direction: asc }',
  ])('page through the same rows in the same order as the planned query (%s)', async (args) => {
    const plain = await walk(args, COLUMNS);
    const planned = await walk(args, `${COLUMNS} identities { provider }`);
    expect(plain.ids.length).toBeGreaterThan(0);
    expect(new Set(plain.ids).size).toBe(plain.ids.length);
    expect(plain).toEqual(planned);
  });

  it('refuses a health-score cursor that is not a whole number as a bad cursor, on either path', async () => {
    const after = Buffer.from(JSON.stringify([50.5, '00000000-0000-4000-8000-000000000000', 'healthScore.asc'])).toString('base64url');
    const query = `query($after: String) { customers(first: 5, after: $after, orderBy: { field: healthScore, direction: asc }) { nodes { FIELDS } } }`;
    for (const fields of [COLUMNS, `${COLUMNS} identities { provider }`]) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/graphql',
        headers: { 'x-api-key': apiKey },
        payload: { query: query.replace('FIELDS', fields), variables: { after } },
      });
      const body: { errors?: { extensions?: { code?: string } }[] } = res.json();
      expect(body.errors?.map((e) => e.extensions?.code)).toEqual(['validation_failed']);
    }
  });

  it('reads a page of columns in one statement', async () => {
    await walk('', COLUMNS);
    t.queries.length = 0;
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/v1/customers?limit=5',
      headers: { 'x-api-key': apiKey },
    });
    expect(res.json().data).toHaveLength(5);
    // The key and tenant lookups of authentication go through Prisma; the page itself does not.
    expect(t.queries.filter((q) => q.includes('"customers"'))).toEqual([]);
  });
});

describe('a page whose fields depend on its variables', () => {
  const query = `query($withIdentities: Boolean!) { customers(first: 5) { nodes { id name identities @include(if: $withIdentities) { provider } } } }`;
  const read = async (withIdentities: boolean) => {
    t.queries.length = 0;
    const res = await t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'x-api-key': apiKey },
      payload: { query, variables: { withIdentities } },
    });
    const body: { errors?: unknown; data: { customers: { nodes: Record<string, unknown>[] } } } = res.json();
    expect(body.errors).toBeUndefined();
    // The planned query reads the page itself, by tenant and in order; a plain page sends Prisma nothing about customers.
    const customerQueries = t.queries.filter((q) => q.includes('FROM "public"."customers"'));
    return {
      nodes: body.data.customers.nodes,
      planned: customerQueries.some((q) => q.includes('WHERE "public"."customers"."tenant_id"')),
      customerQueries,
    };
  };

  it("is read in plain SQL or through the planned query as each request's variables decide", async () => {
    const without = await read(false);
    expect(without.customerQueries).toEqual([]);
    expect(without.nodes[0]).not.toHaveProperty('identities');
    const withIdentities = await read(true);
    expect(withIdentities.planned).toBe(true);
    expect(withIdentities.nodes[0]).toHaveProperty('identities', []);
    expect((await read(false)).customerQueries).toEqual([]);
  });
});

describe('one customer with its health read in plain SQL', () => {
  const HEALTH =
    'health { customerId score status computedAt trend { d7 d30 } weakestDimension dimensions { key score weight contribution trend signals { key label value } stale staleSources } confidence }';
  const read = async (id: string, fields: string) => {
    const query = `query($id: UUID!) { customer(id: $id) { ${fields} } }`;
    const res = await t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'x-api-key': apiKey },
      payload: { query, variables: { id } },
    });
    return res.json() as { data: { customer: Record<string, unknown> | null } | null; errors?: { extensions?: { code?: string } }[] };
  };

  it.each([
    ['a scored customer', true],
    ['a customer not yet scored', false],
  ])('answers the same health for %s as the planned query', async (_name, scored) => {
    const c = scored
      ? (await scoredCustomer(t.prisma, tenantId, { usage: 40, engagement: 55, support: null, billing: 90, growth: 20 })).customer
      : await customer(t.prisma, tenantId);
    t.queries.length = 0;
    const plain = await read(c.id, `id name ${HEALTH}`);
    // One plain statement: Prisma is sent nothing about the customer.
    expect(t.queries.filter((q) => q.includes('FROM "public"."customers"'))).toEqual([]);
    const planned = await read(c.id, `id name ${HEALTH} identities { provider }`);
    expect(plain.errors).toBeUndefined();
    expect(plain.data!.customer!.health).toEqual(planned.data!.customer!.health);
    expect((plain.data!.customer!.health as { score: unknown }).score).toEqual(scored ? expect.any(Number) : null);
  });

  it('answers not found for another tenant’s customer', async () => {
    const other = await tenantWithKey(t.prisma);
    const theirs = await customer(t.prisma, other.tenantId);
    const res = await read(theirs.id, `id ${HEALTH}`);
    expect(res.data?.customer ?? null).toBeNull();
    expect(res.errors?.[0]?.extensions?.code).toBe('not_found');
  });
});

describe('customerHealth, one customer’s health on its own', () => {
  const FIELDS =
    'customerId score status computedAt trend { d7 d30 } weakestDimension dimensions { key score weight contribution trend signals { key label value } }';
  const gql = async (query: string, id: string) =>
    (
      await t.app.inject({ method: 'POST', url: '/graphql', headers: { 'x-api-key': apiKey }, payload: { query, variables: { id } } })
    ).json() as { data: Record<string, Record<string, unknown> | null> | null; errors?: { extensions?: { code?: string } }[] };

  it.each([
    ['a scored customer', true],
    ['a customer not yet scored', false],
  ])('answers the same as customer(id) { health } for %s', async (_name, scored) => {
    const c = scored
      ? (await scoredCustomer(t.prisma, tenantId, { usage: 70, engagement: null, support: 35, billing: 60, growth: 10 })).customer
      : await customer(t.prisma, tenantId);
    const alone = await gql(`query($id: UUID!) { customerHealth(id: $id) { ${FIELDS} } }`, c.id);
    const nested = await gql(`query($id: UUID!) { customer(id: $id) { health { ${FIELDS} } } }`, c.id);
    expect(alone.errors).toBeUndefined();
    expect(alone.data!.customerHealth).toEqual(nested.data!.customer!.health);
  });

  it('answers not found for another tenant’s customer', async () => {
    const other = await tenantWithKey(t.prisma);
    const theirs = await customer(t.prisma, other.tenantId);
    const res = await gql(`query($id: UUID!) { customerHealth(id: $id) { score } }`, theirs.id);
    expect(res.data?.customerHealth ?? null).toBeNull();
    expect(res.errors?.[0]?.extensions?.code).toBe('not_found');
  });
});

describe('reads of two tenants at the same moment', () => {
  it('answer each request with its own tenant’s customers, and nothing of the statement they may share', async () => {
    const other = await tenantWithKey(t.prisma);
    const scores = { usage: 40, engagement: 55, support: null, billing: 90, growth: 20 };
    const mine = [(await scoredCustomer(t.prisma, tenantId, scores)).customer, (await scoredCustomer(t.prisma, tenantId, scores)).customer];
    const theirs = (await scoredCustomer(t.prisma, other.tenantId, scores)).customer;
    const get = (key: string, url: string) => t.app.inject({ method: 'GET', url, headers: { 'x-api-key': key } });
    const asks: [string, string, number][] = [
      [apiKey, mine[0]!.id, 200],
      [other.apiKey, theirs.id, 200],
      [apiKey, theirs.id, 404],
      [apiKey, mine[1]!.id, 200],
      [other.apiKey, mine[0]!.id, 404],
    ];
    const pages = {
      mine: (await get(apiKey, '/api/v1/customers?limit=5')).body,
      theirs: (await get(other.apiKey, '/api/v1/customers?limit=5')).body,
    };

    const [health, list] = await Promise.all([
      Promise.all(asks.map(([key, id]) => get(key, `/api/v1/customers/${id}/health`))),
      Promise.all([apiKey, other.apiKey, apiKey, other.apiKey].map((key) => get(key, '/api/v1/customers?limit=5'))),
    ]);

    expect(health.map((r) => r.statusCode)).toEqual(asks.map(([, , status]) => status));
    health.forEach((r, i) => {
      if (r.statusCode === 200) expect(r.json().customer_id).toBe(asks[i]![1]);
    });
    expect(list.map((r) => r.body)).toEqual([pages.mine, pages.theirs, pages.mine, pages.theirs]);
    for (const r of [...health, ...list]) expect(r.body).not.toMatch(/batch/i);
  });
});
