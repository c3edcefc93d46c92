import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPg } from '../../src/db/sql.ts';
import { operator } from '../../src/services/audit.ts';
import { eraseCustomer } from '../../src/services/customer-erasure.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { customer, tenantWithKey, userWithSession } from '../support/factories.ts';
import { lockWaiters } from '../support/inbox.ts';
import { emptyBodiesAbout } from '../../src/ingest/inbox.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const post = (key: string, events: object[], headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'POST', url: '/api/v1/events', headers: { 'x-api-key': key, ...headers }, payload: { events } });
const usage = (tenantId: string) => t.prisma.signal.findMany({ where: { tenantId, kind: 'usage.event' }, orderBy: { occurredAt: 'asc' } });

async function world() {
  const k = await tenantWithKey(t.prisma);
  const c = await customer(t.prisma, k.tenantId, { externalId: 'acct-1' });
  return { ...k, c };
}

describe('POST /api/v1/events', () => {
  it('answers not_found for the events of a customer erased while they are recorded, and keeps the others', async () => {
    const { apiKey, tenantId, c } = await world();
    const other = await customer(t.prisma, tenantId, { externalId: 'acct-2' });
    // The erasure is under way, not committed: the requests find the customer, then wait on its row.
    const erasing = await t.pool.connect();
    try {
      await erasing.query('BEGIN');
      await eraseCustomer(onPg(erasing), operator(tenantId), c.id, emptyBodiesAbout);
      const single = post(apiKey, [{ customer_id: c.id, event: 'report.exported' }]);
      const batch = post(apiKey, [
        { customer_id: c.id, event: 'report.exported' },
        { customer_id: other.id, event: 'report.exported' },
      ]);
      await expect.poll(() => lockWaiters(t.pool), { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
      await erasing.query('COMMIT');
      const [one, many] = await Promise.all([single, batch]);
      expect(one.statusCode).toBe(404);
      expect(one.json().code).toBe('not_found');
      expect(many.statusCode).toBe(202);
      expect(many.json()).toMatchObject({ accepted: 1, errors: [{ index: 0, code: 'not_found' }] });
    } finally {
      erasing.release();
    }
    expect((await usage(tenantId)).map((r) => r.customerId)).toEqual([other.id]);
  });

  it('records events by customer id or external id as usage signals', async () => {
    const { apiKey, tenantId, c } = await world();
    const at = new Date(Date.now() - 3600_000).toISOString();
    const res = await post(apiKey, [
      { customer_id: c.id, event: 'report.exported', timestamp: at, properties: { format: 'csv' }, user_id: 'u1' },
      { external_id: 'acct-1', event: 'dashboard.viewed' },
    ]);
    expect(res.statusCode).toBe(202);
    expect(res.json()).toEqual({ accepted: 2, errors: [] });
    const rows = await usage(tenantId);
    expect(rows.map((r) => [r.customerId, (r.attributes as { event: string }).event])).toEqual([
      [c.id, 'report.exported'],
      [c.id, 'dashboard.viewed'],
    ]);
    expect(rows[0]!.occurredAt.toISOString()).toBe(at);
    expect(rows[0]!.attributes).toMatchObject({ properties: { format: 'csv' }, user_id: 'u1' });
  });

  it('keeps the valid events of a batch and lists the others by index', async () => {
    const { apiKey, tenantId, c } = await world();
    const res = await post(apiKey, [
      { customer_id: c.id, event: 'ok.one' },
      { customer_id: '00000000-0000-4000-8000-000000000000', event: 'x' },
      { external_id: 'nobody', event: 'x' },
      { customer_id: c.id, event: 'x', timestamp: new Date(Date.now() + 10 * 60_000).toISOString() },
      { customer_id: c.id, event: 'x', timestamp: new Date(Date.now() - 91 * 86_400_000).toISOString() },
      { customer_id: c.id, external_id: 'acct-1', event: 'x' },
      { customer_id: c.id },
      { customer_id: c.id, event: 'ok.two' },
    ]);
    expect(res.statusCode).toBe(202);
    const body = res.json();
    expect(body.accepted).toBe(2);
    expect(body.errors.map((e: { index: number; code: string }) => [e.index, e.code])).toEqual([
      [1, 'not_found'],
      [2, 'not_found'],
      [3, 'validation_failed'],
      [4, 'validation_failed'],
      [5, 'validation_failed'],
      [6, 'validation_failed'],
    ]);
    expect(await usage(tenantId)).toHaveLength(2);
  });

  it('answers 404 naming the customer when a single event names an unknown one', async () => {
    const { apiKey } = await world();
    const res = await post(apiKey, [{ external_id: 'ghost', event: 'x' }]);
    expect(res.statusCode).toBe(404);
    expect(res.json().detail).toContain('ghost');
  });

  it('answers 400 for a single event too far in the future', async () => {
    const { apiKey } = await world();
    const res = await post(apiKey, [{ external_id: 'acct-1', event: 'x', timestamp: new Date(Date.now() + 3600_000).toISOString() }]);
    expect(res.statusCode).toBe(400);
    expect(res.json().errors[0].message).toMatch(/future/);
  });

  it('refuses an empty batch and one of 501 events', async () => {
    const { apiKey, c } = await world();
    expect((await post(apiKey, [])).statusCode).toBe(400);
    expect(
      (
        await post(
          apiKey,
          Array.from({ length: 501 }, () => ({ customer_id: c.id, event: 'x' })),
        )
      ).statusCode,
    ).toBe(400);
  });

  it('does not record an event for another tenant’s customer', async () => {
    const { c } = await world();
    const other = await tenantWithKey(t.prisma);
    expect((await post(other.apiKey, [{ customer_id: c.id, event: 'x' }])).statusCode).toBe(404);
    expect(await t.prisma.signal.count({ where: { customerId: c.id } })).toBe(0);
  });

  it('makes a retried batch with the same Idempotency-Key a no-op answering the first answer', async () => {
    const { apiKey, tenantId, c } = await world();
    const events = [
      { customer_id: c.id, event: 'a' },
      { external_id: 'nobody', event: 'b' },
    ];
    const first = await post(apiKey, events, { 'idempotency-key': 'batch-1' });
    const again = await Promise.all([
      post(apiKey, events, { 'idempotency-key': 'batch-1' }),
      post(apiKey, events, { 'idempotency-key': 'batch-1' }),
    ]);
    for (const r of again) expect(r.json()).toEqual(first.json());
    expect(await usage(tenantId)).toHaveLength(1);
  });

  it('answers 409 when an Idempotency-Key is reused with another body', async () => {
    const { apiKey, c } = await world();
    await post(apiKey, [{ customer_id: c.id, event: 'a' }], { 'idempotency-key': 'k' });
    const res = await post(apiKey, [{ customer_id: c.id, event: 'b' }], { 'idempotency-key': 'k' });
    expect(res.statusCode).toBe(409);
  });

  it('is not allowed to a viewer', async () => {
    const { tenantId, c } = await world();
    const { token } = await userWithSession(t.prisma, t.sessions, tenantId, 'viewer');
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/events',
      headers: { authorization: `Bearer ${token}` },
      payload: { events: [{ customer_id: c.id, event: 'x' }] },
    });
    expect(res.statusCode).toBe(403);
  });
});
