import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkFreshness } from '../../src/scoring/freshness.ts';
import { createTestApp, testSecretBox, type TestApp } from '../support/app.ts';
import { scoredCustomer, tenantHearingStripe } from '../support/factories.ts';

// Fresh sources: an integration's usual cadence is learned from its own events, a silence far longer than it
// is flagged once (integration.silent) and resolved once when events return (integration.resumed), and
// meanwhile the dimensions it feeds are stale on its customers' health, whose confidence falls while the
// score stays as it was. Each pass is run with the moment it checks at, so the silences are exact.

// No worker: its own passes, at the real time, would take the rows these passes check.
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());
const HOUR = 3_600_000;

const stripeTenant = (opts: { count: number; everyHours: number; last: Date }) => tenantHearingStripe(t.prisma, testSecretBox(), opts);

const announced = async (tenantId: string, type: string) =>
  (
    await t.pool.query<{ payload: Record<string, unknown> }>('SELECT payload FROM outbox_events WHERE tenant_id = $1 AND type = $2', [
      tenantId,
      type,
    ])
  ).rows;

async function health(apiKey: string, customerId: string) {
  const res = await t.app.inject({ url: `/api/v1/customers/${customerId}/health`, headers: { 'x-api-key': apiKey } });
  expect(res.statusCode).toBe(200);
  return res.json() as {
    score: number;
    confidence: number | null;
    dimensions: { key: string; score: number | null; weight: number; stale: boolean; stale_sources: string[] }[];
  };
}

async function stripeCard(apiKey: string) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/graphql',
    headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
    payload: { query: '{ integrations { provider freshness { lastEventAt usualGapSeconds silentAfterSeconds silent silentSince } } }' },
  });
  expect(res.statusCode).toBe(200);
  return (res.json().data.integrations as { provider: string; freshness: Record<string, unknown> | null }[]).find(
    (i) => i.provider === 'stripe',
  )!.freshness;
}

describe('fresh sources', () => {
  it('flags a silence three times longer than the usual wait once, marks billing and growth stale and lowers the confidence, not the score', async () => {
    const now = new Date();
    // Every 6 hours for 5 days, then nothing for a day: 24 h > 3 × 6 h.
    const w = await stripeTenant({ count: 20, everyHours: 6, last: new Date(now.getTime() - 24 * HOUR) });
    const { customer, health: h } = await scoredCustomer(t.prisma, w.tenantId, {
      usage: 80,
      engagement: null,
      support: null,
      billing: 90,
      growth: null,
    });
    const before = await health(w.apiKey, customer.id);
    expect(before.confidence).toBe(1);
    expect(before.dimensions.every((d) => !d.stale)).toBe(true);

    await checkFreshness(t.pool, now);
    await checkFreshness(t.pool, new Date(now.getTime() + 60_000));

    const silent = await announced(w.tenantId, 'integration.silent');
    expect(silent).toHaveLength(1);
    expect(silent[0]!.payload).toMatchObject({ tenant_id: w.tenantId, provider: 'stripe', usual_gap_seconds: 21_600, resumed_at: null });
    expect(await stripeCard(w.apiKey)).toMatchObject({ silent: true, usualGapSeconds: 21_600, silentAfterSeconds: 64_800 });

    const after = await health(w.apiKey, customer.id);
    expect(after.score).toBe(h.score);
    const billing = after.dimensions.find((d) => d.key === 'billing')!;
    expect(billing).toMatchObject({ stale: true, stale_sources: ['stripe'] });
    expect(after.dimensions.find((d) => d.key === 'growth')).toMatchObject({ stale: true, stale_sources: ['stripe'] });
    expect(after.dimensions.find((d) => d.key === 'usage')).toMatchObject({ stale: false, stale_sources: [] });
    expect(after.confidence).toBe(Math.round((1 - billing.weight) * 100) / 100);
    expect(after.confidence).toBeLessThan(1);
  });

  it('resolves the silence once its events return, and does not learn the silence as a usual wait', async () => {
    const now = new Date();
    const w = await stripeTenant({ count: 20, everyHours: 6, last: new Date(now.getTime() - 48 * HOUR) });
    const { customer } = await scoredCustomer(t.prisma, w.tenantId, {
      usage: 80,
      engagement: null,
      support: null,
      billing: 90,
      growth: null,
    });
    await checkFreshness(t.pool, now);
    expect(await announced(w.tenantId, 'integration.silent')).toHaveLength(1);

    await t.prisma.inboxEvent.create({
      data: {
        tenantId: w.tenantId,
        provider: 'stripe',
        dedupKey: `evt_${randomUUID()}`,
        eventType: 'invoice.paid',
        body: '{}',
        status: 'processed',
        receivedAt: new Date(now.getTime() + 30_000),
      },
    });
    await checkFreshness(t.pool, new Date(now.getTime() + 60_000));
    await checkFreshness(t.pool, new Date(now.getTime() + 120_000));

    const resumed = await announced(w.tenantId, 'integration.resumed');
    expect(resumed).toHaveLength(1);
    expect(resumed[0]!.payload).toMatchObject({ provider: 'stripe', resumed_at: new Date(now.getTime() + 60_000).toISOString() });
    expect(await stripeCard(w.apiKey)).toMatchObject({ silent: false, silentSince: null, usualGapSeconds: 21_600 });
    const after = await health(w.apiKey, customer.id);
    expect(after.confidence).toBe(1);
    expect(after.dimensions.every((d) => !d.stale)).toBe(true);
  });

  it('keeps a silence flagged for as long as nothing arrives, however long, against the cadence it fell silent from', async () => {
    const now = new Date();
    const w = await stripeTenant({ count: 20, everyHours: 6, last: new Date(now.getTime() - 24 * HOUR) });
    for (const days of [0, 13, 20, 40]) await checkFreshness(t.pool, new Date(now.getTime() + days * 24 * HOUR));
    expect(await announced(w.tenantId, 'integration.silent')).toHaveLength(1);
    expect(await announced(w.tenantId, 'integration.resumed')).toHaveLength(0);
    expect(await stripeCard(w.apiKey)).toMatchObject({ silent: true, usualGapSeconds: 21_600 });
  });

  it('calls nothing silent before it has learned the cadence', async () => {
    const now = new Date();
    // Twelve events an hour apart: enough events, but on two UTC days at most, too few to know what usual is.
    const w = await stripeTenant({ count: 12, everyHours: 1, last: new Date(now.getTime() - 72 * HOUR) });
    await checkFreshness(t.pool, now);
    expect(await announced(w.tenantId, 'integration.silent')).toHaveLength(0);
    expect(await stripeCard(w.apiKey)).toMatchObject({ silent: false, usualGapSeconds: null });
  });
});
