import { describe, expect } from 'vitest';
import { alert, customer } from '../support/factories.ts';
import { test as base } from '../support/fixtures.ts';

// A tenant with two customers and four alerts of different status, severity and type.
const test = base.extend('world', async ({ app, tenant, customer: a }) => {
  const b = await customer(app.prisma, tenant.tenantId);
  const alerts = {
    openHigh: await alert(app.prisma, tenant.tenantId, a.id, { status: 'open', severity: 'high', alertType: 'health_drop' }),
    openLow: await alert(app.prisma, tenant.tenantId, a.id, { status: 'open', severity: 'low', alertType: 'inactivity' }),
    resolvedHigh: await alert(app.prisma, tenant.tenantId, b.id, { status: 'resolved', severity: 'high', alertType: 'payment_failed' }),
    openHighB: await alert(app.prisma, tenant.tenantId, b.id, { status: 'open', severity: 'high', alertType: 'churn_risk' }),
  };
  return { ...tenant, a, b, alerts };
});

const ids = (res: { json: () => { data: { id: string }[] } }) =>
  res
    .json()
    .data.map((x) => x.id)
    .sort();

describe('GET /api/v1/alerts', () => {
  test('returns open high-severity alerts for status=open&severity=high', async ({ api, world: w }) => {
    expect(ids(await api.get('/api/v1/alerts?status=open&severity=high'))).toEqual([w.alerts.openHigh.id, w.alerts.openHighB.id].sort());
  });

  test('filters by alert_type', async ({ api, world: w }) => {
    expect(ids(await api.get('/api/v1/alerts?alert_type=inactivity'))).toEqual([w.alerts.openLow.id]);
  });

  test('filters by customer_id combined with severity', async ({ api, world: w }) => {
    expect(ids(await api.get(`/api/v1/alerts?customer_id=${w.b.id}&severity=high&status=resolved`))).toEqual([w.alerts.resolvedHigh.id]);
  });

  test('returns every alert of the tenant without filters, and pages them', async ({ api, world: _world }) => {
    const first = (await api.get('/api/v1/alerts?limit=3')).json();
    expect(first.data).toHaveLength(3);
    expect(first.has_more).toBe(true);
    const second = (await api.get(`/api/v1/alerts?limit=3&cursor=${first.next_cursor}`)).json();
    expect(second.data).toHaveLength(1);
    expect(second.has_more).toBe(false);
    expect(second.next_cursor).toBeNull();
  });

  test('uses snake_case fields', async ({ api, world: _world }) => {
    const item = (await api.get(`/api/v1/alerts?alert_type=inactivity`)).json().data[0];
    expect(Object.keys(item).sort()).toEqual(
      [
        'acknowledged_at',
        'alert_type',
        'created_at',
        'customer_id',
        'details',
        'id',
        'message',
        'resolved_at',
        'severity',
        'snoozed_until',
        'status',
        'title',
        'updated_at',
      ].sort(),
    );
  });

  test.for([
    ['status=bogus', 'status'],
    ['severity=urgent', 'severity'],
    ['alert_type=nope', 'alert_type'],
    ['customer_id=not-a-uuid', 'customer_id'],
    ['limit=0', 'limit'],
  ])('answers 400 naming the field for %s', async ([query, field], { api }) => {
    const res = await api.get(`/api/v1/alerts?${query}`);
    expect(res.statusCode).toBe(400);
    expect(res.json().errors[0].path).toBe(field);
  });
});

describe('PATCH /api/v1/alerts/{id}', () => {
  test('acknowledges an alert', async ({ api, world: w }) => {
    const res = await api.patch(`/api/v1/alerts/${w.alerts.openHigh.id}`, { status: 'acknowledged' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'acknowledged' });
    expect(res.json().acknowledged_at).not.toBeNull();
  });

  test('snoozes an alert until a future time', async ({ api, world: w }) => {
    const until = new Date(Date.now() + 3600_000).toISOString();
    const res = await api.patch(`/api/v1/alerts/${w.alerts.openHigh.id}`, { status: 'snoozed', snoozed_until: until });
    expect(res.json()).toMatchObject({ status: 'snoozed', snoozed_until: until });
  });

  test('refuses to snooze without a time, or until a past time', async ({ app, api, world: w }) => {
    const missing = await api.patch(`/api/v1/alerts/${w.alerts.openHigh.id}`, { status: 'snoozed' });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().errors[0].path).toBe('snoozed_until');
    const past = await api.patch(`/api/v1/alerts/${w.alerts.openHigh.id}`, { status: 'snoozed', snoozed_until: '2020-01-01T00:00:00Z' });
    expect(past.statusCode).toBe(400);
    expect((await app.prisma.alert.findUniqueOrThrow({ where: { id: w.alerts.openHigh.id } })).status).toBe('open');
  });

  test('resolves and reopens an alert', async ({ api, world: w }) => {
    expect((await api.patch(`/api/v1/alerts/${w.alerts.openHigh.id}`, { status: 'resolved' })).json()).toMatchObject({
      status: 'resolved',
    });
    const reopened = (await api.patch(`/api/v1/alerts/${w.alerts.openHigh.id}`, { status: 'open' })).json();
    expect(reopened).toMatchObject({ status: 'open', resolved_at: null });
  });

  test('refuses an unknown status and unknown fields', async ({ api, world: w }) => {
    expect((await api.patch(`/api/v1/alerts/${w.alerts.openHigh.id}`, { status: 'done' })).statusCode).toBe(400);
    expect((await api.patch(`/api/v1/alerts/${w.alerts.openHigh.id}`, { status: 'resolved', note: 'x' })).statusCode).toBe(400);
  });

  test('is not allowed to a viewer', async ({ app, signedIn, world: w }) => {
    const { token } = await signedIn('viewer');
    const res = await app.app.inject({
      method: 'PATCH',
      url: `/api/v1/alerts/${w.alerts.openHigh.id}`,
      headers: { authorization: `Bearer ${token}` },
      payload: { status: 'resolved' },
    });
    expect(res.statusCode).toBe(403);
  });
});
