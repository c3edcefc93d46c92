import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parse } from 'csv-parse/sync';
import { describe, expect } from 'vitest';
import { testWith } from '../support/fixtures.ts';
import { alert, customer, daysAgo, historyPoint, scoredCustomer, signals } from '../support/factories.ts';

// Exports stream as they are read; the files are checked with a CSV parser written elsewhere and JSON.parse.

const test = testWith({ asAppRole: true });

const ndjson = (body: string) =>
  body
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));

describe('exporting a dataset', () => {
  test('writes every customer with its health and churn as NDJSON, one object a line', async ({ app, api, tenant }) => {
    const { customer: scored } = await scoredCustomer(app.prisma, tenant.tenantId, {
      usage: 80,
      engagement: 60,
      support: null,
      billing: 90,
      growth: 50,
    });
    await customer(app.prisma, tenant.tenantId, { name: 'Unscored', email: 'a@unscored.example' });
    const res = await api.get('/api/v1/exports/customers');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/x-ndjson; charset=utf-8');
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="customers-\d{4}-\d{2}-\d{2}\.ndjson"$/);
    const rows = ndjson(res.body);
    expect(rows).toHaveLength(2);
    expect(rows.find((r) => r.id === scored.id)).toMatchObject({
      name: scored.name,
      health_score: scored.healthScore,
      usage_score: 80,
      support_score: null,
      churn_risk_level: scored.churnRiskLevel,
      identities: [],
    });
  });

  test('writes CSV with a header row that a CSV parser reads back, formulas defused', async ({ app, api, tenant }) => {
    await customer(app.prisma, tenant.tenantId, {
      name: '=HYPERLINK("http://evil.example","x")',
      email: 'o@acme.example',
      externalId: 'a,b "c"',
    });
    const res = await api.get('/api/v1/exports/customers?format=csv');
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    const [row, ...more] = parse(res.body, { columns: true }) as Record<string, string>[];
    expect(more).toEqual([]);
    expect(row).toMatchObject({
      name: `'=HYPERLINK("http://evil.example","x")`,
      external_id: 'a,b "c"',
      identities: '[]',
      health_score: '',
    });
  });

  test('defuses formulas behind spaces and quotes every text cell, so no list separator splits one into a formula', async ({
    app,
    api,
    tenant,
  }) => {
    await customer(app.prisma, tenant.tenantId, { name: ' =1+1', externalId: 'x;=HYPERLINK("http://evil.example")' });
    const res = await api.get('/api/v1/exports/customers?format=csv');
    const line = res.body.split('\n')[1]!;
    expect(line).toContain(`"' =1+1"`);
    expect(line).toContain(`"x;=HYPERLINK(""http://evil.example"")"`);
    const [row] = parse(res.body, { columns: true }) as Record<string, string>[];
    expect(row).toMatchObject({ name: `' =1+1`, external_id: 'x;=HYPERLINK("http://evil.example")' });
  });

  test('exports the churn labels posted for customers, each with its time and source', async ({ app, api, tenant }) => {
    const a = await customer(app.prisma, tenant.tenantId);
    const b = await customer(app.prisma, tenant.tenantId);
    expect((await api.post(`/api/v1/customers/${a.id}/churn-outcome`, { churned: true, at: '2026-10-01T00:00:00Z' })).statusCode).toBe(201);
    expect((await api.post(`/api/v1/customers/${b.id}/churn-outcome`, { churned: false, at: '2026-10-02T00:00:00Z' })).statusCode).toBe(
      201,
    );
    const labels = ndjson((await api.get('/api/v1/exports/churn_outcomes')).body);
    expect(labels).toHaveLength(2);
    expect(labels).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ customer_id: a.id, churned: true, at: '2026-10-01T00:00:00.000Z', source: 'api' }),
        expect.objectContaining({ customer_id: b.id, churned: false, at: '2026-10-02T00:00:00.000Z', source: 'api' }),
      ]),
    );
    const later = ndjson((await api.get('/api/v1/exports/churn_outcomes?since=2026-10-02T00:00:00Z')).body);
    expect(later.map((l) => l.customer_id)).toEqual([b.id]);
  });

  test('bounds signals, history and alerts by time', async ({ app, api, tenant }) => {
    const c = await customer(app.prisma, tenant.tenantId);
    await signals(
      app.prisma,
      tenant.tenantId,
      c.id,
      [5, 15, 25].map((d) => ({ kind: 'usage.event', daysAgo: d, attributes: { user_id: `u${d}` } })),
    );
    for (const d of [5, 15, 25]) await historyPoint(app.prisma, tenant.tenantId, c.id, d, { score: 60 + d });
    await alert(app.prisma, tenant.tenantId, c.id);
    const since = daysAgo(20).toISOString();
    const until = daysAgo(10).toISOString();
    const got = async (dataset: string) => ndjson((await api.get(`/api/v1/exports/${dataset}?since=${since}&until=${until}`)).body);
    expect((await got('signals')).map((s) => s.attributes.user_id)).toEqual(['u15']);
    expect((await got('health_history')).map((h) => h.score)).toEqual([75]);
    expect(await got('alerts')).toEqual([]);
    expect(ndjson((await api.get('/api/v1/exports/alerts')).body)).toEqual([
      expect.objectContaining({ customer_id: c.id, alert_type: 'health_drop' }),
    ]);
  });

  test('streams a dataset larger than a page in full, each row once', async ({ app, api, tenant }) => {
    await app.pool.query(
      `INSERT INTO customers (id, tenant_id, name, updated_at) SELECT gen_random_uuid(), $1, 'Bulk ' || i, now() FROM generate_series(1, 2500) AS i`,
      [tenant.tenantId],
    );
    const rows = ndjson((await api.get('/api/v1/exports/customers')).body);
    expect(rows).toHaveLength(2500);
    expect(new Set(rows.map((r) => r.id)).size).toBe(2500);
  });

  test('is recorded in the audit log, and refused to members and to bad input', async ({ app, api, tenant, signedIn }) => {
    await api.get('/api/v1/exports/signals?format=csv&since=2026-01-01T00:00:00Z');
    const [e] = await app.prisma.auditEvent.findMany({ where: { tenantId: tenant.tenantId, action: 'data.exported' } });
    expect(e).toMatchObject({
      actorType: 'api_key',
      changes: { dataset: 'signals', format: 'csv', since: '2026-01-01T00:00:00.000Z', until: null },
    });
    const member = await signedIn('member');
    const refused = await app.app.inject({
      method: 'GET',
      url: '/api/v1/exports/customers',
      headers: { authorization: `Bearer ${member.token}` },
    });
    expect(refused.statusCode).toBe(403);
    expect((await api.get('/api/v1/exports/passwords')).statusCode).toBe(400);
    expect((await api.get('/api/v1/exports/signals?since=2026-02-01T00:00:00Z&until=2026-01-01T00:00:00Z')).statusCode).toBe(400);
  });
  test('is not run by a HEAD request, so nothing is recorded as exported', async ({ app, tenant, apiKey }) => {
    const c = await customer(app.prisma, tenant.tenantId);
    for (const url of ['/api/v1/exports/customers', `/api/v1/customers/${c.id}/export`]) {
      const res = await app.app.inject({ method: 'HEAD', url, headers: { 'x-api-key': apiKey } });
      expect(res.statusCode).toBe(404);
    }
    expect(await app.prisma.auditEvent.count({ where: { tenantId: tenant.tenantId, action: 'data.exported' } })).toBe(0);
  });
});

describe('exporting one customer’s data for an access request', () => {
  test('writes every record held about it, and nothing about others', async ({ app, api, tenant }) => {
    const c = await customer(app.prisma, tenant.tenantId, { name: 'Initech', email: 'peter@initech.example' });
    const other = await customer(app.prisma, tenant.tenantId, { name: 'Globex' });
    const [inbox] = (
      await app.pool.query<{ id: string }>(
        `INSERT INTO inbox_events (id, tenant_id, provider, dedup_key, event_type, body, status) VALUES (gen_random_uuid(), $1, 'intercom', 'n1', 'conversation.user.created', '{"text":"help"}', 'processed') RETURNING id`,
        [tenant.tenantId],
      )
    ).rows;
    await app.pool.query(
      `INSERT INTO signals (id, tenant_id, customer_id, inbox_event_id, source, kind, occurred_at) VALUES (gen_random_uuid(), $1, $2, $3, 'intercom', 'support.conversation_opened', now())`,
      [tenant.tenantId, c.id, inbox!.id],
    );
    await signals(app.prisma, tenant.tenantId, other.id, [{ kind: 'usage.event' }]);
    await alert(app.prisma, tenant.tenantId, c.id);
    await historyPoint(app.prisma, tenant.tenantId, c.id, 1, { score: 70 });
    const res = await api.get(`/api/v1/customers/${c.id}/export`);
    expect(res.statusCode).toBe(200);
    const records = ndjson(res.body);
    expect(records.map((r) => r.record)).toEqual(['customer', 'health_history', 'alert', 'signal', 'inbound_event']);
    expect(records[0].data).toMatchObject({ id: c.id, name: 'Initech', email: 'peter@initech.example' });
    expect(records.at(-1).data).toMatchObject({ provider: 'intercom', body: '{"text":"help"}' });
    expect(res.body).not.toContain(other.id);
    expect((await api.get(`/api/v1/customers/${randomUUID()}/export`)).statusCode).toBe(404);
  });
});

describe('an export whose caller loses access while it streams', () => {
  test('reads no further page once its API key is revoked', async ({ app, tenant, apiKey }) => {
    const rows = 10_000;
    const name = 'n'.repeat(1000);
    await app.prisma.customer.createMany({
      data: Array.from({ length: rows }, (_, i) => ({ tenantId: tenant.tenantId, name: `${name}${i}` })),
    });
    if (!app.app.server.listening) await app.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.app.server.address() as AddressInfo;
    const lines = await new Promise<number>((resolve) => {
      let n = 0;
      const req = http.get({ host: '127.0.0.1', port, path: '/api/v1/exports/customers', headers: { 'x-api-key': apiKey } }, (res) => {
        expect(res.statusCode).toBe(200);
        res.once('data', async (first: Buffer) => {
          n += first.toString('utf8').split('\n').length - 1;
          // A slow reader: nothing more is read until the key is revoked.
          res.pause();
          await app.prisma.apiKey.updateMany({ where: { tenantId: tenant.tenantId }, data: { revokedAt: new Date() } });
          res.on('data', (c: Buffer) => (n += c.toString('utf8').split('\n').length - 1));
          res.resume();
        });
        res.on('close', () => resolve(n));
      });
      req.on('error', () => resolve(n));
    });
    expect(lines).toBeGreaterThan(0);
    expect(lines).toBeLessThan(rows);
  });
});
