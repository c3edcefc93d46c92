import { describe, expect, it } from 'vitest';
import { inTransaction } from '../../src/db/sql.ts';
import { enqueueEvents } from '../../src/outbox/events/enqueue.ts';
import { EVENTS, type EventName } from '../../src/outbox/events/registry.ts';
import { relayOutbox } from '../../src/outbox/events/relay.ts';
import type { TestApp } from '../support/app.ts';
import { apiAs, type Receiver, withOutboundApp } from '../support/outbound.ts';
import { exampleEvent, tenantWithKey } from '../support/factories.ts';

withOutboundApp((app, receiver) => {
  t = app;
  rx = receiver;
});
let t: TestApp;
let rx: Receiver;

const api = (key: string) => apiAs(() => t, key);

const HIGH_OR_CRITICAL = { 'alert.created': { severity: { in: ['high', 'critical'] } } };

async function endpointWith(filters: object | undefined, events = ['alert.created', 'alert.resolved']) {
  const k = await tenantWithKey(t.prisma);
  const res = await api(k.apiKey).post('/api/v1/webhook-endpoints', { url: rx.url, events, ...(filters ? { filters } : {}) });
  expect(res.statusCode, res.body).toBe(201);
  return { ...k, endpoint: res.json() as { id: string; filters: object | null } };
}

/** Writes one event per payload change and fans them out; answers the event types and fields that got a delivery. */
async function emit(tenantId: string, type: EventName, ...changes: Record<string, unknown>[]) {
  const events = changes.map((change) => {
    const e = exampleEvent(tenantId, type);
    return { ...e, payload: { ...EVENTS[type].example, tenant_id: tenantId, ...change } } as typeof e;
  });
  await inTransaction(t.pool, (sql) => enqueueEvents(sql, events));
  await relayOutbox(t.pool, t.queue);
  // One subject (the example's customer) numbers the events in the order they were written.
  return t.prisma.webhookDelivery.findMany({ where: { tenantId, isTest: false }, orderBy: { sequence: 'asc' } });
}
const payloads = (rows: { envelope: unknown }[]) =>
  rows.map((d) => (d.envelope as { data: { payload: Record<string, unknown> } }).data.payload);

describe('declaring filters', () => {
  it('keeps an endpoint’s filters and reads them back over REST and GraphQL', async () => {
    const { apiKey, endpoint } = await endpointWith(HIGH_OR_CRITICAL);
    expect(endpoint.filters).toEqual(HIGH_OR_CRITICAL);
    expect((await api(apiKey).get(`/api/v1/webhook-endpoints/${endpoint.id}`)).json().filters).toEqual(HIGH_OR_CRITICAL);
    const gql = await t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'x-api-key': apiKey },
      payload: { query: `query($id: UUID!) { webhookEndpoint(id: $id) { filters } }`, variables: { id: endpoint.id } },
    });
    expect(gql.json().data.webhookEndpoint.filters).toEqual(HIGH_OR_CRITICAL);
  });

  it.each([
    ['an unknown field', { 'alert.created': { sevrity: { eq: 'high' } } }, 'filters.alert.created.sevrity'],
    ['an event the endpoint does not subscribe to', { 'invoice.paid': { status: { eq: 'paid' } } }, 'filters.invoice.paid'],
    ['a value the field cannot take', { 'alert.created': { severity: { in: ['high', 'urgent'] } } }, 'filters.alert.created.severity.in'],
    ['a value of another type than the field’s', { 'alert.created': { severity: { eq: 3 } } }, 'filters.alert.created.severity.eq'],
  ])('refuses %s with 400 naming where, and changes nothing', async (_what, filters, path) => {
    const { apiKey, endpoint } = await endpointWith(HIGH_OR_CRITICAL);
    const res = await api(apiKey).patch(`/api/v1/webhook-endpoints/${endpoint.id}`, { filters });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.json().errors.map((e: { path: string }) => e.path)).toContain(path);
    expect((await api(apiKey).get(`/api/v1/webhook-endpoints/${endpoint.id}`)).json().filters).toEqual(HIGH_OR_CRITICAL);
  });

  it('refuses an unknown operator or an empty list at the request’s schema, with 400', async () => {
    const k = await tenantWithKey(t.prisma);
    for (const filters of [{ 'alert.created': { severity: { like: 'hi%' } } }, { 'alert.created': { severity: { in: [] } } }]) {
      const res = await api(k.apiKey).post('/api/v1/webhook-endpoints', { url: rx.url, events: ['alert.created'], filters });
      expect(res.statusCode).toBe(400);
    }
    expect(await t.prisma.webhookEndpoint.count({ where: { tenantId: k.tenantId } })).toBe(0);
  });

  it('refuses to unsubscribe from an event a filter still names', async () => {
    const { apiKey, endpoint } = await endpointWith(HIGH_OR_CRITICAL);
    const res = await api(apiKey).patch(`/api/v1/webhook-endpoints/${endpoint.id}`, { events: ['alert.resolved'] });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors[0].path).toBe('filters.alert.created');
  });
});

describe('what a filter lets through', () => {
  it('sends alert.created of high and critical severity only, and the endpoint’s other events unfiltered', async () => {
    const { tenantId } = await endpointWith(HIGH_OR_CRITICAL);
    await emit(tenantId, 'alert.created', { severity: 'low' }, { severity: 'medium' }, { severity: 'high' }, { severity: 'critical' });
    const rows = await emit(tenantId, 'alert.resolved', { severity: 'low' });
    expect(rows.map((d) => [d.eventType, payloads([d])[0]!.severity])).toEqual([
      ['alert.created', 'high'],
      ['alert.created', 'critical'],
      ['alert.resolved', 'low'],
    ]);
  });

  it('compares numbers, and a field that is null fails its condition', async () => {
    const { tenantId } = await endpointWith({ 'customer.health_changed': { health_score: { lt: 40 } } }, ['customer.health_changed']);
    const rows = await emit(tenantId, 'customer.health_changed', { health_score: 39 }, { health_score: 40 }, { health_score: null });
    expect(payloads(rows).map((p) => p.health_score)).toEqual([39]);
  });

  it('holds every condition of a filter at once: ne and a second field', async () => {
    const filters = { 'alert.created': { severity: { ne: 'low' }, alert_type: { not_in: ['inactivity'] } } };
    const { tenantId } = await endpointWith(filters);
    const rows = await emit(
      tenantId,
      'alert.created',
      { severity: 'low', alert_type: 'churn_risk' },
      { severity: 'high', alert_type: 'inactivity' },
      { severity: 'high', alert_type: 'churn_risk' },
    );
    expect(payloads(rows).map((p) => [p.severity, p.alert_type])).toEqual([['high', 'churn_risk']]);
  });

  it('matches a string exactly, quotes, backslashes and non-ASCII characters included', async () => {
    const title = 'Health "dropped" \\ by 18 – Ünïcode\u0001';
    const { tenantId } = await endpointWith({ 'alert.created': { title: { eq: title } } });
    const rows = await emit(tenantId, 'alert.created', { title }, { title: title.slice(0, -1) }, { title: `${title} ` });
    expect(payloads(rows).map((p) => p.title)).toEqual([title]);
  });

  it('sends everything again once the filters are removed with null', async () => {
    const { apiKey, tenantId, endpoint } = await endpointWith(HIGH_OR_CRITICAL);
    const res = await api(apiKey).patch(`/api/v1/webhook-endpoints/${endpoint.id}`, { filters: null });
    expect(res.json().filters).toBeNull();
    expect(payloads(await emit(tenantId, 'alert.created', { severity: 'low' })).map((p) => p.severity)).toEqual(['low']);
  });
});

describe('filters on Test, resend and replay', () => {
  it('Test answers 409 when the filter drops the sample, sending nothing, and sends it when the filter passes it', async () => {
    rx.set('ok');
    const { apiKey, endpoint } = await endpointWith({ 'alert.created': { severity: { eq: 'critical' } } });
    const before = rx.hits.length;
    const dropped = await api(apiKey).post(`/api/v1/webhook-endpoints/${endpoint.id}/test`, { event: 'alert.created' });
    expect(dropped.statusCode).toBe(409);
    expect(dropped.json().code).toBe('conflict');
    expect(rx.hits.length).toBe(before);
    expect(await t.prisma.webhookDelivery.count({ where: { endpointId: endpoint.id } })).toBe(0);
    // The sample's severity is high.
    await api(apiKey).patch(`/api/v1/webhook-endpoints/${endpoint.id}`, { filters: HIGH_OR_CRITICAL });
    const sent = await api(apiKey).post(`/api/v1/webhook-endpoints/${endpoint.id}/test`, { event: 'alert.created' });
    expect(sent.json()).toMatchObject({ success: true });
  });

  it('resend answers 409 for a delivery the filter now drops, and replay re-arms only the failed deliveries it passes', async () => {
    const { apiKey, tenantId, endpoint } = await endpointWith(undefined);
    const rows = await emit(tenantId, 'alert.created', { severity: 'low' }, { severity: 'critical' });
    await t.prisma.webhookDelivery.updateMany({ where: { endpointId: endpoint.id }, data: { status: 'failed', nextAttemptAt: null } });
    await api(apiKey).patch(`/api/v1/webhook-endpoints/${endpoint.id}`, { filters: HIGH_OR_CRITICAL });
    const [low, critical] = rows;
    const resend = await api(apiKey).post(`/api/v1/webhook-deliveries/${low!.id}/resend`);
    expect(resend.statusCode).toBe(409);
    expect((await t.prisma.webhookDelivery.findUniqueOrThrow({ where: { id: low!.id } })).status).toBe('failed');
    const replay = await api(apiKey).post(`/api/v1/webhook-endpoints/${endpoint.id}/replay`, {
      since: new Date(Date.now() - 60_000).toISOString(),
    });
    expect(replay.json()).toEqual({ replayed: 1 });
    const after = await t.prisma.webhookDelivery.findMany({ where: { endpointId: endpoint.id }, orderBy: { sequence: 'asc' } });
    expect(after.map((d) => [d.id, d.status])).toEqual([
      [low!.id, 'failed'],
      [critical!.id, 'pending'],
    ]);
  });
});
