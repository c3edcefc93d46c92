import { describe, expect, it, vi } from 'vitest';
import { runRetention } from '../../src/lifecycle/retention.ts';
import { operator } from '../../src/services/audit.ts';
import { createInboundSecretStore } from '../../src/services/integrations.ts';
import { appWithWorker, testSecretBox } from '../support/app.ts';
import { customer, daysAgo, signals, spread, subscription, tenantWithKey } from '../support/factories.ts';
import * as p from '../support/providers.ts';
import { emptyBodiesBefore } from '../../src/ingest/inbox.ts';

// Why a customer's health moved: each change's drivers, their shares of the change and the sources they
// cite, read back over REST and GraphQL. Provider events are Stripe deliveries signed with Stripe's own
// library and taken through the inbound pipeline by the worker.

const t = appWithWorker();

interface Source {
  type: string;
  kind: string;
  provider: string | null;
  event_type: string | null;
  provider_event_id: string | null;
  inbound_event_id: string | null;
  received_at: string | null;
  body_retained: boolean | null;
}
interface Driver {
  input: string;
  group: string;
  score: number;
  churn_probability: number;
  dimensions: { key: string; points: number }[];
  sources: Source[];
}
interface Change {
  score: { from: number | null; to: number | null; change: number | null };
  churn_probability: { from: number | null; to: number | null; change: number | null };
  dimensions: { key: string; from: number | null; to: number | null; change: number | null }[];
  drivers: Driver[];
}

const changesOf = async (apiKey: string, customerId: string, query = '') => {
  const res = await t.app.inject({
    method: 'GET',
    url: `/api/v1/customers/${customerId}/health/changes?limit=100${query}`,
    headers: { 'x-api-key': apiKey },
  });
  expect(res.statusCode).toBe(200);
  return res.json().data as Change[];
};

/** Sums in the outputs' own units (points, tenths of a point, ten-thousandths), where they are integers. */
const units = (n: number, per: number) => Math.round(n * per);

describe('why health moved', () => {
  it('explains each change with drivers whose shares add up exactly to the score’s, each dimension’s and the churn probability’s change', async () => {
    const w = await tenantWithKey(t.prisma);
    const c = await customer(t.prisma, w.tenantId);
    await signals(t.prisma, w.tenantId, c.id, [
      ...spread('usage.event', 40, 28, { attributes: { user_id: 'u1' } }),
      { kind: 'billing.invoice_paid', daysAgo: 20 },
      { kind: 'chat.message', daysAgo: 2, sentiment: 0.4 },
    ]);
    await subscription(t.prisma, w.tenantId, c.id, { status: 'active', seats: 5 });
    await t.score();
    await signals(t.prisma, w.tenantId, c.id, [
      { kind: 'billing.payment_failed', daysAgo: 1 },
      { kind: 'billing.payment_failed', daysAgo: 0.5 },
      { kind: 'support.conversation_opened', daysAgo: 0.2, sentiment: -0.6 },
    ]);
    await t.score();
    const weights = await t.app.inject({
      method: 'PUT',
      url: '/api/v1/health-weights',
      headers: { 'x-api-key': w.apiKey },
      payload: { usage: 0.1, engagement: 0.1, support: 0.2, billing: 0.5, growth: 0.1 },
    });
    expect(weights.statusCode).toBe(200);
    await t.score();

    const changes = await changesOf(w.apiKey, c.id);
    expect(changes.length).toBeGreaterThanOrEqual(2);
    for (const change of changes) {
      expect(change.drivers.length).toBeGreaterThan(0);
      if (change.score.change !== null) expect(change.drivers.reduce((s, d) => s + d.score, 0)).toBe(change.score.change);
      if (change.churn_probability.change !== null)
        expect(change.drivers.reduce((s, d) => s + units(d.churn_probability, 10_000), 0)).toBe(
          units(change.churn_probability.change, 10_000),
        );
      for (const dim of change.dimensions) {
        if (dim.change === null) continue;
        const shares = change.drivers.flatMap((d) => d.dimensions.filter((x) => x.key === dim.key));
        expect(shares.reduce((s, x) => s + units(x.points, 10), 0)).toBe(units(dim.change, 10));
      }
    }
    const [latest, failures] = changes;
    // The newest change is the weights' and cites the audited change made over the API.
    expect(latest!.drivers[0]).toMatchObject({ input: 'weights', group: 'settings' });
    expect(latest!.drivers[0]!.sources).toEqual([expect.objectContaining({ type: 'api_change', kind: 'scoring_weights.changed' })]);
    // The one before: the failed payments sank billing and raised the churn probability.
    const billing = failures!.drivers.find((d) => d.input === 'failedPayments30d')!;
    expect(billing.dimensions).toEqual(expect.arrayContaining([{ key: 'billing', points: -40 }]));
    expect(billing.churn_probability).toBeGreaterThan(0);
    expect(failures!.churn_probability.change).toBeGreaterThan(0);
  });

  it('announces a move with its drivers since the announcement before, which add up exactly to the move', async () => {
    const w = await tenantWithKey(t.prisma);
    const c = await customer(t.prisma, w.tenantId);
    await signals(t.prisma, w.tenantId, c.id, [
      ...spread('usage.event', 60, 28, { attributes: { user_id: 'u1' } }),
      { kind: 'billing.invoice_paid', daysAgo: 20 },
      { kind: 'chat.message', daysAgo: 2, sentiment: 0.5 },
    ]);
    await subscription(t.prisma, w.tenantId, c.id, { status: 'active', seats: 5 });
    await t.score();
    // Several computations, some moving the score by less than an announcement needs.
    for (const batch of [
      [{ kind: 'chat.message', daysAgo: 0.9, sentiment: 0.1 }],
      [{ kind: 'usage.event', daysAgo: 0.6, attributes: { user_id: 'u2' } }],
      [{ kind: 'billing.payment_failed', daysAgo: 0.5 }],
      [
        { kind: 'billing.payment_failed', daysAgo: 0.3 },
        { kind: 'billing.payment_failed', daysAgo: 0.2 },
        { kind: 'support.conversation_opened', daysAgo: 0.1, sentiment: -0.9 },
      ],
    ]) {
      await signals(t.prisma, w.tenantId, c.id, batch);
      await t.score();
    }
    type Announced = { since: string; top: Record<string, number | string>[]; other: number } | null;
    const announced = async (type: string) =>
      (
        await t.pool.query<{ payload: Record<string, unknown>; created_at: Date }>(
          'SELECT payload, created_at FROM outbox_events WHERE type = $1 AND subject = $2 ORDER BY created_at',
          [type, c.id],
        )
      ).rows;
    const health = await announced('customer.health_changed');
    expect(health.length).toBeGreaterThanOrEqual(2);
    // The first announcement has nothing before it to explain from.
    expect(health[0]!.payload.drivers).toBeNull();
    for (const [i, e] of health.entries()) {
      if (i === 0) continue;
      const d = e.payload.drivers as Announced;
      expect(d).not.toBeNull();
      // Since the computation that made the announcement before (its event is written just after it).
      const since = new Date(d!.since).getTime();
      expect(since).toBeLessThanOrEqual(health[i - 1]!.created_at.getTime() + 1);
      expect(since).toBeGreaterThan(i >= 2 ? health[i - 2]!.created_at.getTime() : 0);
      expect(d!.top.length).toBeGreaterThan(0);
      const sum = d!.top.reduce((s, x) => s + (x.score as number), 0) + d!.other;
      expect(sum).toBe((e.payload.health_score as number) - (e.payload.previous_health_score as number));
      expect(d!.top.map((x) => Math.abs(x.score as number))).toEqual(
        [...d!.top.map((x) => Math.abs(x.score as number))].sort((a, b) => b - a),
      );
    }
    // More changes were recorded than announced: the drivers summed several of them.
    expect(await t.prisma.healthChange.count({ where: { customerId: c.id } })).toBeGreaterThan(health.length);
    for (const e of (await announced('churn_prediction.updated')).slice(1)) {
      const d = e.payload.drivers as Announced;
      expect(d).not.toBeNull();
      const sum = d!.top.reduce((s, x) => s + units(x.churn_probability as number, 10_000), 0) + units(d!.other, 10_000);
      expect(sum).toBe(units(e.payload.probability as number, 10_000) - units(e.payload.previous_probability as number, 10_000));
    }
  });

  it('leads from a change to the Stripe event behind it: provider, type, the provider’s event id, when it was received and its body', async () => {
    const w = await tenantWithKey(t.prisma);
    const { secret } = await createInboundSecretStore(t.prisma, testSecretBox(), { cacheMs: 0 }).put(
      { tenantId: w.tenantId, provider: 'stripe' },
      operator(w.tenantId),
    );
    const send = async (event: { id: string }) => {
      const signed = p.stripeSdkSigned(secret, JSON.stringify(event));
      const res = await t.app.inject({
        method: 'POST',
        url: `/api/v1/webhooks/in/stripe/${w.tenantId}`,
        headers: signed.headers,
        payload: signed.body,
      });
      expect(res.statusCode).toBe(202);
      await vi.waitFor(
        async () => expect(await t.prisma.inboxEvent.count({ where: { tenantId: w.tenantId, status: 'received' } })).toBe(0),
        {
          timeout: 10_000,
          interval: 50,
        },
      );
      return signed.body;
    };
    await send(p.stripeEvent('customer.created', p.stripeCustomer('cus_why1', 'billing@why.example', 'Why Inc')));
    await send(p.stripeEvent('invoice.paid', p.stripeInvoice('in_why0', 'cus_why1', 4000, { status: 'paid' })));
    await t.score();
    const failed = p.stripeEvent('invoice.payment_failed', p.stripeInvoice('in_why1', 'cus_why1', 4000, { status: 'open' }));
    const body = await send(failed);
    await t.score();

    const { id: customerId } = await t.prisma.customer.findFirstOrThrow({ where: { tenantId: w.tenantId } });
    const cited = async () =>
      (await changesOf(w.apiKey, customerId))
        .flatMap((c) => c.drivers.flatMap((d) => d.sources))
        .find((s) => s.provider_event_id === failed.id);
    await vi.waitFor(async () => expect(await cited()).toBeDefined(), { timeout: 10_000, interval: 100 });
    expect(await cited()).toMatchObject({
      type: 'provider_event',
      kind: 'billing.payment_failed',
      provider: 'stripe',
      event_type: 'invoice.payment_failed',
      provider_event_id: failed.id,
      received_at: expect.any(String),
      body_retained: true,
    });

    const gql = async () =>
      (
        await t.app.inject({
          method: 'POST',
          url: '/graphql',
          headers: { 'x-api-key': w.apiKey },
          payload: {
            query: `query($id: UUID!) { customer(id: $id) { healthChanges(first: 100) { nodes { drivers { sources { providerEventId bodyRetained body } } } } } }`,
            variables: { id: customerId },
          },
        })
      ).json().data.customer.healthChanges.nodes as {
        drivers: { sources: { providerEventId: string; bodyRetained: boolean; body: string | null }[] }[];
      }[];
    const sourceIn = (nodes: Awaited<ReturnType<typeof gql>>) =>
      nodes.flatMap((n) => n.drivers.flatMap((d) => d.sources)).find((s) => s.providerEventId === failed.id)!;
    expect(sourceIn(await gql())).toEqual({ providerEventId: failed.id, bodyRetained: true, body });

    // Past the tenant's window for raw bodies, retention empties the body: the change still cites the event.
    await t.pool.query(`UPDATE inbox_events SET received_at = $2 WHERE tenant_id = $1`, [w.tenantId, daysAgo(40)]);
    await runRetention(t.pool, { batchSize: 1000, maxBatches: 1000, emptyInboundBodies: emptyBodiesBefore });
    expect(sourceIn(await gql())).toEqual({ providerEventId: failed.id, bodyRetained: false, body: null });
    expect(await cited()).toMatchObject({ provider_event_id: failed.id, event_type: 'invoice.payment_failed', body_retained: false });
  });

  it('lists only the changes since the time asked for, and refuses a time that is not one', async () => {
    const w = await tenantWithKey(t.prisma);
    const c = await customer(t.prisma, w.tenantId);
    await signals(t.prisma, w.tenantId, c.id, spread('usage.event', 20, 28));
    await t.score();
    await signals(t.prisma, w.tenantId, c.id, [{ kind: 'billing.payment_failed', daysAgo: 0.1 }]);
    await t.score();
    const all = await changesOf(w.apiKey, c.id);
    expect(all.length).toBeGreaterThan(0);
    expect(await changesOf(w.apiKey, c.id, `&since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).toEqual([]);
    const bad = await t.app.inject({
      method: 'GET',
      url: `/api/v1/customers/${c.id}/health/changes?since=yesterday`,
      headers: { 'x-api-key': w.apiKey },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.headers['content-type']).toContain('application/problem+json');
  });

  it('answers 404 for another tenant’s customer', async () => {
    const [a, b] = [await tenantWithKey(t.prisma), await tenantWithKey(t.prisma)];
    const c = await customer(t.prisma, a.tenantId);
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/customers/${c.id}/health/changes`, headers: { 'x-api-key': b.apiKey } });
    expect(res.statusCode).toBe(404);
  });
});
