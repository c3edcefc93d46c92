import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.ts';
import { customer, scoredCustomer, tenantWithKey } from '../support/factories.ts';
import { lockTenants } from '../../src/db/locks.ts';
import { attributeRequested } from '../../src/services/customers.ts';
import { onPg } from '../../src/db/sql.ts';
import type pg from 'pg';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const as = (apiKey: string) => ({
  get: (url: string) => t.app.inject({ method: 'GET', url, headers: { 'x-api-key': apiKey } }),
  post: (url: string, payload: unknown) =>
    t.app.inject({ method: 'POST', url, headers: { 'x-api-key': apiKey }, payload: payload as object }),
  patch: (url: string, payload: unknown) =>
    t.app.inject({ method: 'PATCH', url, headers: { 'x-api-key': apiKey }, payload: payload as object }),
});

describe('POST /api/v1/customers', () => {
  it('creates a customer with identities and answers 201 with its location', async () => {
    const { apiKey } = await tenantWithKey(t.prisma);
    const res = await as(apiKey).post('/api/v1/customers', {
      name: ' Acme ',
      external_id: 'acme-1',
      email: 'Ops@Acme.Example',
      domain: 'ACME.example',
      identities: [{ provider: 'stripe', external_id: 'cus_123' }],
    });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(res.headers.location).toBe(`/api/v1/customers/${body.id}`);
    expect(body).toMatchObject({
      name: 'Acme',
      external_id: 'acme-1',
      email: 'ops@acme.example',
      domain: 'acme.example',
      health_score: null,
      churn_risk_level: null,
      identities: [{ provider: 'stripe', external_id: 'cus_123' }],
    });
  });

  it('announces customer.created to the tenant’s endpoints with the record it answered', async () => {
    const { apiKey, tenantId } = await tenantWithKey(t.prisma);
    const body = (await as(apiKey).post('/api/v1/customers', { name: 'Initech', domain: 'initech.example' })).json();
    const { rows } = await t.pool.query(`SELECT payload FROM outbox_events WHERE type = 'customer.created' AND subject = $1`, [body.id]);
    const { identities: _identities, ...record } = body;
    expect(rows).toEqual([{ payload: { tenant_id: tenantId, ...record } }]);
  });

  it('answers 409 for an external_id the tenant already uses', async () => {
    const { apiKey } = await tenantWithKey(t.prisma);
    expect((await as(apiKey).post('/api/v1/customers', { name: 'A', external_id: 'dup' })).statusCode).toBe(201);
    const res = await as(apiKey).post('/api/v1/customers', { name: 'B', external_id: 'dup' });
    expect(res.statusCode).toBe(409);
    expect(res.json().code).toBe('conflict');
  });

  it('lets two tenants use the same external_id', async () => {
    const a = await tenantWithKey(t.prisma);
    const b = await tenantWithKey(t.prisma);
    expect((await as(a.apiKey).post('/api/v1/customers', { name: 'A', external_id: 'shared' })).statusCode).toBe(201);
    expect((await as(b.apiKey).post('/api/v1/customers', { name: 'B', external_id: 'shared' })).statusCode).toBe(201);
  });

  it('answers 409 for an identity another customer of the tenant holds', async () => {
    const { apiKey } = await tenantWithKey(t.prisma);
    const identities = [{ provider: 'github', external_id: 'octo-org' }];
    expect((await as(apiKey).post('/api/v1/customers', { name: 'A', identities })).statusCode).toBe(201);
    expect((await as(apiKey).post('/api/v1/customers', { name: 'B', identities })).statusCode).toBe(409);
  });

  it.each([
    [{}, 'name'],
    [{ name: '' }, 'name'],
    [{ name: 'x', email: 'not-an-email' }, 'email'],
    [{ name: 'x', domain: 'not a domain' }, 'domain'],
    [{ name: 'x', colour: 'red' }, 'colour'],
    [{ name: 'x', identities: [{ provider: 'myspace', external_id: 'a' }] }, 'identities.0.provider'],
  ])('answers 400 validation_failed naming the field for %j', async (payload, field) => {
    const { apiKey } = await tenantWithKey(t.prisma);
    const res = await as(apiKey).post('/api/v1/customers', payload);
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('validation_failed');
    expect(res.json().errors.map((e: { path: string }) => e.path)).toContain(field);
    expect(await t.prisma.customer.count({ where: { tenant: { apiKeys: { some: {} } }, name: 'x' } })).toBe(0);
  });

  it('answers 400 for malformed JSON and stores nothing', async () => {
    const { apiKey, tenantId } = await tenantWithKey(t.prisma);
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/customers',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
      payload: '{"name": "Acme",',
    });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/problem\+json/);
    expect(await t.prisma.customer.count({ where: { tenantId } })).toBe(0);
  });

  it('answers 415 for a body that is not JSON', async () => {
    const { apiKey } = await tenantWithKey(t.prisma);
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/customers',
      headers: { 'x-api-key': apiKey, 'content-type': 'text/plain' },
      payload: 'name=Acme',
    });
    expect(res.statusCode).toBe(415);
    expect(res.json().code).toBe('unsupported_media_type');
  });

  it('answers 413 for a body over the limit', async () => {
    const { apiKey } = await tenantWithKey(t.prisma);
    const res = await as(apiKey).post('/api/v1/customers', { name: 'x'.repeat(1024 * 1024 + 10) });
    expect(res.statusCode).toBe(413);
    expect(res.json().code).toBe('payload_too_large');
  });
});

describe('GET and PATCH /api/v1/customers/{id}', () => {
  it('reads a customer', async () => {
    const { apiKey, tenantId } = await tenantWithKey(t.prisma);
    const c = await customer(t.prisma, tenantId, { name: 'Readable' });
    const res = await as(apiKey).get(`/api/v1/customers/${c.id}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: c.id, name: 'Readable', identities: [] });
  });

  it('updates only the fields sent, and null clears one', async () => {
    const { apiKey, tenantId } = await tenantWithKey(t.prisma);
    const c = await customer(t.prisma, tenantId, { name: 'Old', domain: 'old.example', email: 'a@old.example' });
    const res = await as(apiKey).patch(`/api/v1/customers/${c.id}`, { name: 'New', domain: null });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ name: 'New', domain: null, email: 'a@old.example' });
  });

  it('answers 400 to an empty patch', async () => {
    const { apiKey, tenantId } = await tenantWithKey(t.prisma);
    const c = await customer(t.prisma, tenantId);
    expect((await as(apiKey).patch(`/api/v1/customers/${c.id}`, {})).statusCode).toBe(400);
  });

  it('answers 404 for an unknown id and 400 for a non-UUID', async () => {
    const { apiKey } = await tenantWithKey(t.prisma);
    const missing = await as(apiKey).get('/api/v1/customers/00000000-0000-4000-8000-000000000000');
    expect(missing.statusCode).toBe(404);
    expect(missing.json().code).toBe('not_found');
    const bad = await as(apiKey).get('/api/v1/customers/not-a-uuid');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors[0].path).toBe('customer_id');
  });
});

describe('GET /api/v1/customers', () => {
  it('pages through every customer exactly once, newest first', async () => {
    const { apiKey, tenantId } = await tenantWithKey(t.prisma);
    const at = new Date('2026-01-01T00:00:00Z');
    // Seven share one timestamp, so the id tie-break is what keeps pages stable.
    const made = [];
    for (let i = 0; i < 12; i++)
      made.push(await customer(t.prisma, tenantId, { createdAt: i < 7 ? at : new Date(at.getTime() + i * 1000) }));
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await as(apiKey).get(`/api/v1/customers?limit=5${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.statusCode).toBe(200);
      const body = res.json();
      seen.push(...body.data.map((c: { id: string }) => c.id));
      expect(body.has_more).toBe(body.next_cursor !== null);
      cursor = body.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(new Set(seen).size).toBe(12);
    expect(seen.sort()).toEqual(made.map((c) => c.id).sort());
  });

  it('uses 25 as the default page size', async () => {
    const { apiKey, tenantId } = await tenantWithKey(t.prisma);
    await t.prisma.customer.createMany({ data: Array.from({ length: 30 }, (_, i) => ({ tenantId, name: `c${i}` })) });
    const body = (await as(apiKey).get('/api/v1/customers')).json();
    expect(body.data).toHaveLength(25);
    expect(body.has_more).toBe(true);
  });

  it('carries the health score, status and churn risk level of each customer', async () => {
    const { apiKey, tenantId } = await tenantWithKey(t.prisma);
    const { customer: c, health } = await scoredCustomer(
      t.prisma,
      tenantId,
      { usage: 90, engagement: 80, support: 70, billing: 90, growth: 60 },
      0.6,
    );
    const body = (await as(apiKey).get('/api/v1/customers')).json();
    expect(body.data[0]).toMatchObject({ id: c.id, health_score: health.score, health_status: 'healthy', churn_risk_level: 'high' });
  });

  it('filters by risk level and health status together', async () => {
    const { apiKey, tenantId } = await tenantWithKey(t.prisma);
    const good = { usage: 90, engagement: 90, support: 90, billing: 90, growth: 90 };
    const bad = { usage: 10, engagement: 10, support: 10, billing: 10, growth: 10 };
    const a = await scoredCustomer(t.prisma, tenantId, good, 0.1);
    const b = await scoredCustomer(t.prisma, tenantId, bad, 0.9);
    await scoredCustomer(t.prisma, tenantId, bad, 0.1);
    const byRisk = (await as(apiKey).get('/api/v1/customers?risk_level=critical')).json();
    expect(byRisk.data.map((c: { id: string }) => c.id)).toEqual([b.customer.id]);
    const both = (await as(apiKey).get('/api/v1/customers?risk_level=low&health_status=healthy')).json();
    expect(both.data.map((c: { id: string }) => c.id)).toEqual([a.customer.id]);
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['limit=abc', 'limit'],
    ['cursor=%21%21not-a-cursor%21%21', 'cursor'],
    ['cursor=WyJub3QtYS1kYXRlIiwieCJd', 'cursor'],
    ['risk_level=extreme', 'risk_level'],
    ['health_status=fine', 'health_status'],
  ])('answers 400 validation_failed naming the field for %s', async (query, field) => {
    const { apiKey } = await tenantWithKey(t.prisma);
    const res = await as(apiKey).get(`/api/v1/customers?${query}`);
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('validation_failed');
    expect(res.json().errors[0].path).toBe(field);
  });
});

describe('GET /api/v1/customers/{id}/health', () => {
  it('shows five empty dimensions with the default weights before the first computation', async () => {
    const { apiKey, tenantId } = await tenantWithKey(t.prisma);
    const c = await customer(t.prisma, tenantId);
    const body = (await as(apiKey).get(`/api/v1/customers/${c.id}/health`)).json();
    expect(body).toMatchObject({ customer_id: c.id, score: null, status: null, computed_at: null });
    expect(body.dimensions.map((d: { key: string; weight: number; score: null }) => [d.key, d.weight, d.score])).toEqual([
      ['usage', 0.3, null],
      ['engagement', 0.2, null],
      ['support', 0.15, null],
      ['billing', 0.25, null],
      ['growth', 0.1, null],
    ]);
  });

  it('shows the latest snapshot with contributions, trend, weakest dimension and signals', async () => {
    const { apiKey, tenantId } = await tenantWithKey(t.prisma);
    const { customer: c } = await scoredCustomer(t.prisma, tenantId, {
      usage: 80,
      engagement: null,
      support: 40,
      billing: 100,
      growth: 50,
    });
    const body = (await as(apiKey).get(`/api/v1/customers/${c.id}/health`)).json();
    expect(body.weakest_dimension).toBe('support');
    expect(body.trend).toEqual({ change_7d: -3, change_30d: 5 });
    const engagement = body.dimensions.find((d: { key: string }) => d.key === 'engagement');
    expect(engagement).toMatchObject({ score: null, weight: 0, contribution: null });
    const weights = body.dimensions.reduce((s: number, d: { weight: number }) => s + d.weight, 0);
    expect(weights).toBeCloseTo(1, 3);
    const total = body.dimensions.reduce((s: number, d: { contribution: number | null }) => s + (d.contribution ?? 0), 0);
    expect(Math.round(total)).toBe(body.score);
    expect(body.dimensions[0].signals[0]).toEqual({ key: 'usage_signal', label: 'usage signal', value: 80 });
  });

  it('answers 404 for an unknown customer', async () => {
    const { apiKey } = await tenantWithKey(t.prisma);
    expect((await as(apiKey).get('/api/v1/customers/00000000-0000-4000-8000-000000000000/health')).statusCode).toBe(404);
  });
});

describe('GET /api/v1/customers/{id}/churn-prediction', () => {
  it('answers nulls and empty lists before the first prediction', async () => {
    const { apiKey, tenantId } = await tenantWithKey(t.prisma);
    const c = await customer(t.prisma, tenantId);
    expect((await as(apiKey).get(`/api/v1/customers/${c.id}/churn-prediction`)).json()).toEqual({
      customer_id: c.id,
      probability: null,
      risk_level: null,
      risk_factors: [],
      recommended_interventions: [],
      model_version: null,
      predicted_at: null,
    });
  });

  it('shows the latest prediction with factors, interventions and model version', async () => {
    const { apiKey, tenantId } = await tenantWithKey(t.prisma);
    const { customer: c } = await scoredCustomer(
      t.prisma,
      tenantId,
      { usage: 50, engagement: 50, support: 50, billing: 50, growth: 50 },
      0.42,
    );
    expect((await as(apiKey).get(`/api/v1/customers/${c.id}/churn-prediction`)).json()).toMatchObject({
      probability: 0.42,
      risk_level: 'medium',
      risk_factors: [{ code: 'low_usage', description: 'Usage fell', impact: 0.7 }],
      recommended_interventions: [{ code: 'training', priority: 'high' }],
      model_version: 'test-v1',
    });
  });

  it('answers 404 for an unknown customer', async () => {
    const { apiKey } = await tenantWithKey(t.prisma);
    expect((await as(apiKey).get('/api/v1/customers/00000000-0000-4000-8000-000000000000/churn-prediction')).statusCode).toBe(404);
  });
});

describe('POST /api/v1/customers beside the inbound worker', () => {
  /** A Stripe invoice kept without a customer, as the worker stores one for an account no customer has yet. */
  async function unattributedInvoice(tenantId: string, account: string, sql: Pick<pg.Pool, 'query'> = t.pool) {
    const { rows } = await sql.query<{ id: string }>(
      `INSERT INTO invoices (id, tenant_id, provider, external_id, account_id, status, total_minor, currency, created_at, updated_at)
       VALUES (gen_random_uuid(), $1, 'stripe', $2, $3, 'open', 1000, 'usd', now(), now()) RETURNING id`,
      [tenantId, `in_${randomUUID().slice(0, 12)}`, account],
    );
    return rows[0]!.id;
  }

  it('answers without waiting for a batch of its tenant under way; the worker attributes what that batch kept once it ends', async () => {
    const { apiKey, tenantId } = await tenantWithKey(t.prisma);
    const account = `cus_${randomUUID().slice(0, 12)}`;
    const first = await unattributedInvoice(tenantId, account);
    const free = await unattributedInvoice(tenantId, account);
    // A batch applying the tenant's events, as the worker runs one: the tenant's lock shared, then the rows
    // it changes; it keeps one more invoice of the account without a customer.
    const batch = await t.pool.connect();
    try {
      await batch.query('BEGIN');
      await lockTenants(onPg(batch), [{ tenantId, exclusive: false }]);
      await batch.query('UPDATE invoices SET updated_at = now() WHERE id = $1', [first]);
      const second = await unattributedInvoice(tenantId, account, batch);
      const res = await as(apiKey).post('/api/v1/customers', { name: 'Race', identities: [{ provider: 'stripe', external_id: account }] });
      expect(res.statusCode, res.body).toBe(201);
      const id = res.json().id;
      const owners = async () =>
        (await t.pool.query('SELECT id, customer_id FROM invoices WHERE id = ANY($1::uuid[]) ORDER BY id', [[first, free, second]])).rows;
      // What no one held is attributed at once; the batch's rows are not yet.
      expect((await owners()).find((r) => r.id === free)?.customer_id).toBe(id);
      expect((await owners()).find((r) => r.id === first)?.customer_id).toBeNull();
      await batch.query('COMMIT');
      expect(await attributeRequested(t.pool)).toBeGreaterThanOrEqual(1);
      expect((await owners()).map((r) => r.customer_id)).toEqual([id, id, id]);
    } finally {
      await batch.query('ROLLBACK').catch(() => {});
      batch.release();
    }
  });
});
