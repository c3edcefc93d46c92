import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/app.ts';
import { alert, customer, tenantWithKey, userWithSession } from './support/factories.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const get = (key: string, url: string) => t.app.inject({ method: 'GET', url, headers: { 'x-api-key': key } });
const patch = (key: string, id: string, payload: object) =>
  t.app.inject({ method: 'PATCH', url: `/api/v1/alerts/${id}`, headers: { 'x-api-key': key }, payload });

async function world() {
  const k = await tenantWithKey(t.prisma);
  const a = await customer(t.prisma, k.tenantId);
  const b = await customer(t.prisma, k.tenantId);
  const alerts = {
    openHigh: await alert(t.prisma, k.tenantId, a.id, { status: 'open', severity: 'high', alertType: 'health_drop' }),
    openLow: await alert(t.prisma, k.tenantId, a.id, { status: 'open', severity: 'low', alertType: 'inactivity' }),
    resolvedHigh: await alert(t.prisma, k.tenantId, b.id, { status: 'resolved', severity: 'high', alertType: 'payment_failed' }),
    openHighB: await alert(t.prisma, k.tenantId, b.id, { status: 'open', severity: 'high', alertType: 'churn_risk' }),
  };
  return { ...k, a, b, alerts };
}
const ids = (res: { json: () => { data: { id: string }[] } }) =>
  res
    .json()
    .data.map((x) => x.id)
    .sort();

describe('GET /api/v1/alerts', () => {
  it('returns open high-severity alerts for status=open&severity=high', async () => {
    const w = await world();
    expect(ids(await get(w.apiKey, '/api/v1/alerts?status=open&severity=high'))).toEqual(
      [w.alerts.openHigh.id, w.alerts.openHighB.id].sort(),
    );
  });

  it('filters by alert_type', async () => {
    const w = await world();
    expect(ids(await get(w.apiKey, '/api/v1/alerts?alert_type=inactivity'))).toEqual([w.alerts.openLow.id]);
  });

  it('filters by customer_id combined with severity', async () => {
    const w = await world();
    expect(ids(await get(w.apiKey, `/api/v1/alerts?customer_id=${w.b.id}&severity=high&status=resolved`))).toEqual([
      w.alerts.resolvedHigh.id,
    ]);
  });

  it('returns every alert of the tenant without filters, and pages them', async () => {
    const w = await world();
    const first = (await get(w.apiKey, '/api/v1/alerts?limit=3')).json();
    expect(first.data).toHaveLength(3);
    expect(first.has_more).toBe(true);
    const second = (await get(w.apiKey, `/api/v1/alerts?limit=3&cursor=${first.next_cursor}`)).json();
    expect(second.data).toHaveLength(1);
    expect(second.has_more).toBe(false);
    expect(second.next_cursor).toBeNull();
  });

  it('uses snake_case fields', async () => {
    const w = await world();
    const item = (await get(w.apiKey, `/api/v1/alerts?alert_type=inactivity`)).json().data[0];
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

  it.each([
    ['status=bogus', 'status'],
    ['severity=urgent', 'severity'],
    ['alert_type=nope', 'alert_type'],
    ['customer_id=not-a-uuid', 'customer_id'],
    ['limit=0', 'limit'],
  ])('answers 400 naming the field for %s', async (query, field) => {
    const w = await world();
    const res = await get(w.apiKey, `/api/v1/alerts?${query}`);
    expect(res.statusCode).toBe(400);
    expect(res.json().errors[0].path).toBe(field);
  });
});

describe('PATCH /api/v1/alerts/{id}', () => {
  it('acknowledges an alert', async () => {
    const w = await world();
    const res = await patch(w.apiKey, w.alerts.openHigh.id, { status: 'acknowledged' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'acknowledged' });
    expect(res.json().acknowledged_at).not.toBeNull();
  });

  it('snoozes an alert until a future time', async () => {
    const w = await world();
    const until = new Date(Date.now() + 3600_000).toISOString();
    const res = await patch(w.apiKey, w.alerts.openHigh.id, { status: 'snoozed', snoozed_until: until });
    expect(res.json()).toMatchObject({ status: 'snoozed', snoozed_until: until });
  });

  it('refuses to snooze without a time, or until a past time', async () => {
    const w = await world();
    const missing = await patch(w.apiKey, w.alerts.openHigh.id, { status: 'snoozed' });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().errors[0].path).toBe('snoozed_until');
    const past = await patch(w.apiKey, w.alerts.openHigh.id, { status: 'snoozed', snoozed_until: '2020-01-01T00:00:00Z' });
    expect(past.statusCode).toBe(400);
    expect((await t.prisma.alert.findUniqueOrThrow({ where: { id: w.alerts.openHigh.id } })).status).toBe('open');
  });

  it('resolves and reopens an alert', async () => {
    const w = await world();
    expect((await patch(w.apiKey, w.alerts.openHigh.id, { status: 'resolved' })).json()).toMatchObject({ status: 'resolved' });
    const reopened = (await patch(w.apiKey, w.alerts.openHigh.id, { status: 'open' })).json();
    expect(reopened).toMatchObject({ status: 'open', resolved_at: null });
  });

  it('refuses an unknown status and unknown fields', async () => {
    const w = await world();
    expect((await patch(w.apiKey, w.alerts.openHigh.id, { status: 'done' })).statusCode).toBe(400);
    expect((await patch(w.apiKey, w.alerts.openHigh.id, { status: 'resolved', note: 'x' })).statusCode).toBe(400);
  });

  it('is not allowed to a viewer', async () => {
    const w = await world();
    const { token } = await userWithSession(t.prisma, t.sessions, w.tenantId, 'viewer');
    const res = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/alerts/${w.alerts.openHigh.id}`,
      headers: { authorization: `Bearer ${token}` },
      payload: { status: 'resolved' },
    });
    expect(res.statusCode).toBe(403);
  });
});
