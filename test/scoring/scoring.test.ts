import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPg } from '../../src/db/sql.ts';
import { claimDue } from '../../src/scoring/scoring-queue.ts';
import { operator } from '../../src/services/audit.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { customer, historyPoint, invoice, signals, spread, subscription, tenantWithKey, userWithSession } from '../support/factories.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const get = (key: string, url: string) => t.app.inject({ method: 'GET', url, headers: { 'x-api-key': key } });
const send = (key: string, method: 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
  t.app.inject({ method, url, headers: { 'x-api-key': key }, payload });
const health = async (key: string, id: string) => (await get(key, `/api/v1/customers/${id}/health`)).json();
const churn = async (key: string, id: string) => (await get(key, `/api/v1/customers/${id}/churn-prediction`)).json();
type Dimension = { key: string; score: number | null; weight: number; trend: number | null; signals: { key: string; value: unknown }[] };
const dimension = (h: { dimensions: Dimension[] }, key: string) => h.dimensions.find((d) => d.key === key)!;
const alertsOf = async (key: string, id: string) => (await get(key, `/api/v1/alerts?customer_id=${id}&limit=100`)).json().data;

/** A customer with a payment that failed two days ago, scored: its payment_failed alert is open. */
async function withPaymentAlert() {
  const w = await tenantWithKey(t.prisma);
  const c = await customer(t.prisma, w.tenantId);
  await signals(t.prisma, w.tenantId, c.id, [{ kind: 'billing.payment_failed', daysAgo: 2 }]);
  await t.score();
  const [alert] = await alertsOf(w.apiKey, c.id);
  return { w, c, alert };
}
const outbox = async (type: string, subject: string) =>
  (await t.pool.query('SELECT payload FROM outbox_events WHERE type = $1 AND subject = $2 ORDER BY created_at', [type, subject])).rows;

/** A customer who uses the product daily and pays on time. */
async function activeCustomer(tenantId: string) {
  const c = await customer(t.prisma, tenantId);
  await signals(t.prisma, tenantId, c.id, [
    ...spread('usage.event', 40, 28, { attributes: { user_id: 'u1' } }),
    ...spread('usage.event', 30, 58).filter((s) => s.daysAgo! > 30),
    { kind: 'billing.invoice_paid', daysAgo: 20 },
  ]);
  await subscription(t.prisma, tenantId, c.id, { status: 'active', seats: 5 });
  return c;
}

describe('health', () => {
  it('failing payments sink billing and raise the churn probability', async () => {
    const w = await tenantWithKey(t.prisma);
    const c = await activeCustomer(w.tenantId);
    await t.score();
    const [hBefore, pBefore] = [await health(w.apiKey, c.id), await churn(w.apiKey, c.id)];

    await signals(t.prisma, w.tenantId, c.id, [
      { kind: 'billing.payment_failed', daysAgo: 3 },
      { kind: 'billing.payment_failed', daysAgo: 2 },
      { kind: 'billing.payment_failed', daysAgo: 1 },
    ]);
    await t.score();
    const [hAfter, pAfter] = [await health(w.apiKey, c.id), await churn(w.apiKey, c.id)];

    expect(dimension(hBefore, 'billing').score).toBe(100);
    expect(dimension(hAfter, 'billing').score).toBe(40);
    expect(hAfter.score).toBeLessThan(hBefore.score);
    expect(pAfter.probability).toBeGreaterThan(pBefore.probability + 0.1);
    expect(pAfter.risk_factors.map((f: { code: string }) => f.code)).toContain('failed_payments');
    expect(pAfter.model_version).toBe('default-v2');
  });

  it('gives the weight of dimensions without data to the others', async () => {
    const w = await tenantWithKey(t.prisma);
    const c = await activeCustomer(w.tenantId);
    await t.score();
    const h = await health(w.apiKey, c.id);
    const usage = dimension(h, 'usage');
    const billing = dimension(h, 'billing');
    const growth = dimension(h, 'growth');
    expect(dimension(h, 'engagement')).toMatchObject({ score: null, weight: 0, contribution: null });
    expect(dimension(h, 'support')).toMatchObject({ score: null, weight: 0, contribution: null });
    // Defaults 0.30 / 0.25 / 0.10 over the 0.65 present.
    expect(usage.weight).toBeCloseTo(0.3 / 0.65, 3);
    expect(billing.weight).toBeCloseTo(0.25 / 0.65, 3);
    expect(growth.weight).toBeCloseTo(0.1 / 0.65, 3);
    expect(h.score).toBe(Math.round(usage.score! * usage.weight + billing.score! * billing.weight + growth.score! * growth.weight));
  });

  it('explains each dimension with its signals and names the weakest', async () => {
    const w = await tenantWithKey(t.prisma);
    const c = await activeCustomer(w.tenantId);
    await signals(t.prisma, w.tenantId, c.id, spread('billing.payment_failed', 2, 2));
    await t.score();
    const h = await health(w.apiKey, c.id);
    // Billing 60 (two failures) under growth 70 (seats steady).
    expect(h.weakest_dimension).toBe('billing');
    expect(dimension(h, 'billing').signals).toContainEqual({
      key: 'failed_payments_30d',
      label: 'Failed payments (30 days)',
      value: 2,
    });
    expect(h.status).toBe(h.score >= 75 ? 'healthy' : h.score >= 50 ? 'neutral' : 'at_risk');
  });

  it('keeps scoring usage that stopped: silence after activity is a low score, not missing data', async () => {
    const w = await tenantWithKey(t.prisma);
    const c = await customer(t.prisma, w.tenantId);
    await historyPoint(t.prisma, w.tenantId, c.id, 1, { score: 80, usage: 80 });
    await signals(t.prisma, w.tenantId, c.id, [{ kind: 'billing.invoice_paid', daysAgo: 5 }]);
    await t.score();
    expect(dimension(await health(w.apiKey, c.id), 'usage').score).toBe(0);
  });

  it('times support’s first reply, a conversation closed without a recorded reply until its close, an open one until now', async () => {
    const w = await tenantWithKey(t.prisma);
    const c = await customer(t.prisma, w.tenantId);
    const conversation = (id: string) => ({ attributes: { conversation_id: id } });
    await signals(t.prisma, w.tenantId, c.id, [
      // Answered after 6 hours.
      { kind: 'support.conversation_opened', daysAgo: 10, ...conversation('a') },
      { kind: 'support.agent_replied', daysAgo: 10 - 0.25, ...conversation('a') },
      // Closed two days after it opened, 38 days ago, with no reply on record: it waited two days, not 40.
      { kind: 'support.conversation_opened', daysAgo: 40, ...conversation('b') },
      { kind: 'support.conversation_closed', daysAgo: 38, ...conversation('b') },
      // Still waiting after three days.
      { kind: 'support.conversation_opened', daysAgo: 3, ...conversation('c') },
    ]);
    const { extractFeatures } = await import('../../src/scoring/features.ts');
    const f = (await extractFeatures(onPg(t.pool), [{ customerId: c.id, asOf: new Date() }])).get(c.id)!;
    expect(f.conversations90d).toBe(3);
    expect(f.firstResponseHoursAvg).toBeCloseTo((6 + 48 + 72) / 3, 0);
    expect(f.openConversations).toBe(2);
  });

  it('compares with the score 7 and 30 days ago for trends, overall and per dimension', async () => {
    const w = await tenantWithKey(t.prisma);
    const c = await activeCustomer(w.tenantId);
    await historyPoint(t.prisma, w.tenantId, c.id, 7, { score: 99, usage: 99, billing: 100, growth: 70 });
    await historyPoint(t.prisma, w.tenantId, c.id, 30, { score: 60, usage: 60, billing: 100, growth: 70 });
    await t.score();
    const h = await health(w.apiKey, c.id);
    expect(h.trend).toEqual({ change_7d: h.score - 99, change_30d: h.score - 60 });
    expect(dimension(h, 'usage').trend).toBeCloseTo(dimension(h, 'usage').score! - 99, 1);
    expect(dimension(h, 'billing').trend).toBe(0);
  });
});

describe('weights', () => {
  const heavyUsage = { usage: 0.6, engagement: 0.1, support: 0.1, billing: 0.1, growth: 0.1 };

  it('are the defaults until a tenant sets its own', async () => {
    const w = await tenantWithKey(t.prisma);
    expect((await get(w.apiKey, '/api/v1/health-weights')).json()).toEqual({
      usage: 0.3,
      engagement: 0.2,
      support: 0.15,
      billing: 0.25,
      growth: 0.1,
      is_default: true,
    });
  });

  it('set by the tenant weigh its customers’ scores', async () => {
    const w = await tenantWithKey(t.prisma);
    const c = await activeCustomer(w.tenantId);
    const res = await send(w.apiKey, 'PUT', '/api/v1/health-weights', heavyUsage);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ...heavyUsage, is_default: false });
    await t.score();
    // Usage, billing and growth have data: 0.6 of their 0.8.
    expect(dimension(await health(w.apiKey, c.id), 'usage').weight).toBeCloseTo(0.75, 3);
  });

  it.each([
    [{ ...heavyUsage, usage: -0.1, billing: 0.8 }, 'usage'],
    [{ ...heavyUsage, usage: 0.5 }, 'weights'],
    [{ ...heavyUsage, usage: 1.5 }, 'usage'],
  ])('that are negative or do not sum to 1 are refused (%j) and change nothing', async (body, path) => {
    const w = await tenantWithKey(t.prisma);
    const res = await send(w.apiKey, 'PUT', '/api/v1/health-weights', body);
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.json().errors[0].path).toBe(path);
    expect((await get(w.apiKey, '/api/v1/health-weights')).json().is_default).toBe(true);
  });

  it('can be set by an admin but not by a viewer', async () => {
    const w = await tenantWithKey(t.prisma);
    const viewer = await userWithSession(t.prisma, t.sessions, w.tenantId, 'viewer');
    const res = await t.app.inject({
      method: 'PUT',
      url: '/api/v1/health-weights',
      headers: { authorization: `Bearer ${viewer.token}` },
      payload: heavyUsage,
    });
    expect(res.statusCode).toBe(403);
  });

  it('are not kept when the customers cannot be queued for their recompute', async () => {
    const w = await tenantWithKey(t.prisma);
    const c = await customer(t.prisma, w.tenantId);
    // Requests naming the tenant's customer are refused, as a failing database would.
    const fn = `refuse_${w.tenantId.replaceAll('-', '')}`;
    await t.pool.query(`CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'queue refused'; END $$`);
    await t.pool.query(
      `CREATE TRIGGER ${fn} BEFORE INSERT ON scoring_requests FOR EACH ROW WHEN ('${c.id}' = ANY(NEW.customer_ids)) EXECUTE FUNCTION ${fn}()`,
    );
    try {
      expect((await send(w.apiKey, 'PUT', '/api/v1/health-weights', heavyUsage)).statusCode).toBe(500);
    } finally {
      await t.pool.query(`DROP TRIGGER ${fn} ON scoring_requests`);
      await t.pool.query(`DROP FUNCTION ${fn}()`);
    }
    expect((await get(w.apiKey, '/api/v1/health-weights')).json().is_default).toBe(true);
  });

  it('go back to the defaults on DELETE', async () => {
    const w = await tenantWithKey(t.prisma);
    await send(w.apiKey, 'PUT', '/api/v1/health-weights', heavyUsage);
    const res = await send(w.apiKey, 'DELETE', '/api/v1/health-weights');
    expect(res.json()).toMatchObject({ usage: 0.3, is_default: true });
  });
});

describe('history', () => {
  it('keeps one point per day, newest first, paged by day', async () => {
    const w = await tenantWithKey(t.prisma);
    const c = await activeCustomer(w.tenantId);
    await historyPoint(t.prisma, w.tenantId, c.id, 2, { score: 70, usage: 70 });
    await historyPoint(t.prisma, w.tenantId, c.id, 1, { score: 72, usage: 72 });
    await t.score();
    await signals(t.prisma, w.tenantId, c.id, [{ kind: 'usage.event' }]);
    await t.score();
    const first = (await get(w.apiKey, `/api/v1/customers/${c.id}/health/history?limit=2`)).json();
    expect(first.data).toHaveLength(2);
    expect(first.data[0].date).toBe(new Date().toISOString().slice(0, 10));
    expect(first.data[0].score).toBe((await health(w.apiKey, c.id)).score);
    expect(first.data[1]).toMatchObject({ score: 72, dimensions: { usage: 72, engagement: null } });
    expect(first.has_more).toBe(true);
    const second = (await get(w.apiKey, `/api/v1/customers/${c.id}/health/history?limit=2&cursor=${first.next_cursor}`)).json();
    expect(second.data.map((p: { score: number }) => p.score)).toEqual([70]);
    expect(second.has_more).toBe(false);
  });

  it('refuses a cursor it did not issue', async () => {
    const w = await tenantWithKey(t.prisma);
    const c = await customer(t.prisma, w.tenantId);
    // Not a day; a year the database cannot hold; a day that does not exist.
    for (const forged of ['nope', '0000-01-01', '2026-02-31']) {
      const cursor = Buffer.from(forged).toString('base64url');
      const res = await get(w.apiKey, `/api/v1/customers/${c.id}/health/history?cursor=${cursor}`);
      expect(res.statusCode, forged).toBe(400);
      expect(res.json().errors[0].path).toBe('cursor');
    }
  });
});

describe('recomputation', () => {
  it('coalesces a burst of changes for a customer into one recompute', async () => {
    const w = await tenantWithKey(t.prisma);
    const c = await customer(t.prisma, w.tenantId);
    for (let i = 0; i < 20; i++) await signals(t.prisma, w.tenantId, c.id, [{ kind: 'usage.event' }]);
    await t.scoringLoop.collect();
    const queued = await t.pool.query('SELECT customer_id FROM scoring_queue');
    expect(queued.rows.filter((r) => r.customer_id === c.id)).toHaveLength(1);
    expect(await t.score()).toBe(queued.rowCount);
    expect((await t.pool.query('SELECT 1 FROM scoring_queue')).rowCount).toBe(0);
  });

  it('asks for a recompute without waiting: a change to a customer whose queue row a worker holds commits at once', async () => {
    const w = await tenantWithKey(t.prisma);
    const c = await customer(t.prisma, w.tenantId);
    await signals(t.prisma, w.tenantId, c.id, [{ kind: 'usage.event' }]);
    await t.scoringLoop.collect();
    // A worker ending its claims holds the customer's queue row until it commits.
    const worker = await t.pool.connect();
    try {
      await worker.query('BEGIN');
      await worker.query('SELECT 1 FROM scoring_queue WHERE customer_id = $1 FOR UPDATE', [c.id]);
      const other = await t.pool.connect();
      try {
        await other.query("BEGIN; SET LOCAL lock_timeout = '2s'");
        await other.query(
          `INSERT INTO signals (id, tenant_id, customer_id, source, kind, occurred_at) VALUES (gen_random_uuid(), $1, $2, 'api', 'usage.event', now())`,
          [w.tenantId, c.id],
        );
        await other.query('COMMIT');
      } finally {
        await other.query('ROLLBACK').catch(() => {});
        other.release();
      }
    } finally {
      await worker.query('ROLLBACK');
      worker.release();
    }
    const asked = await t.pool.query('SELECT 1 FROM scoring_requests WHERE $1 = ANY(customer_ids)', [c.id]);
    expect(asked.rowCount).toBe(1);
  });

  it('drops a request for a customer erased before it was collected', async () => {
    const w = await tenantWithKey(t.prisma);
    const c = await customer(t.prisma, w.tenantId);
    await signals(t.prisma, w.tenantId, c.id, [{ kind: 'usage.event' }]);
    await t.services.customers.erase(operator(w.tenantId), c.id);
    expect((await t.pool.query('SELECT 1 FROM scoring_requests WHERE $1 = ANY(customer_ids)', [c.id])).rowCount).toBe(1);
    await t.scoringLoop.collect();
    expect((await t.pool.query('SELECT 1 FROM scoring_queue WHERE customer_id = $1', [c.id])).rowCount).toBe(0);
  });

  it('collects each customer once from many requests, at the earliest time asked', async () => {
    const w = await tenantWithKey(t.prisma);
    const [a, b] = [await customer(t.prisma, w.tenantId), await customer(t.prisma, w.tenantId)];
    await t.pool.query(
      `INSERT INTO scoring_requests (customer_ids, due_at) VALUES ($1, now() + interval '1 hour'), ($2, now() - interval '1 minute'), ($1, now() + interval '2 hours')`,
      [[a.id, b.id], [a.id]],
    );
    await t.scoringLoop.collect();
    const { rows } = await t.pool.query<{ customer_id: string; late: boolean }>(
      `SELECT customer_id, due_at > now() AS late FROM scoring_queue WHERE customer_id = ANY($1::uuid[]) ORDER BY customer_id`,
      [[a.id, b.id]],
    );
    expect(rows.map((r) => [r.customer_id, r.late])).toEqual(
      [
        [a.id, false],
        [b.id, true],
      ].sort((x, y) => ((x[0] as string) < (y[0] as string) ? -1 : 1)),
    );
  });

  it('computes once more when a change lands while a worker is computing', async () => {
    const w = await tenantWithKey(t.prisma);
    const c = await customer(t.prisma, w.tenantId);
    await signals(t.prisma, w.tenantId, c.id, [{ kind: 'usage.event', daysAgo: 3 }]);
    await t.scoringLoop.collect();
    await t.pool.query('UPDATE scoring_queue SET due_at = now()');
    const claims = await claimDue(onPg(t.pool), 1000, 60);
    await signals(t.prisma, w.tenantId, c.id, [{ kind: 'usage.event' }]);
    // Another worker's loop collects the new request while this one computes.
    await t.scoringLoop.collect();
    await t.scorer.recompute(claims);
    expect((await t.pool.query('SELECT claimed_until FROM scoring_queue WHERE customer_id = $1', [c.id])).rows).toEqual([
      { claimed_until: null },
    ]);
    await t.score();
    expect(dimension(await health(w.apiKey, c.id), 'usage').signals[0]).toMatchObject({ key: 'days_since_last_use', value: 0 });
  });

  it('also follows invoices and subscriptions, and events attributed later', async () => {
    const w = await tenantWithKey(t.prisma);
    const c = await customer(t.prisma, w.tenantId);
    await t.score();
    await invoice(t.prisma, w.tenantId, c.id, { status: 'overdue', dueDaysAgo: 3, overdueDaysAgo: 3 });
    await t.score();
    expect(dimension(await health(w.apiKey, c.id), 'billing').score).toBe(75);
    await t.prisma.signal.create({
      data: { tenantId: w.tenantId, customerId: null, source: 'slack', kind: 'chat.message', occurredAt: new Date(), accountId: 'T-LATE' },
    });
    await t.prisma.signal.updateMany({ where: { accountId: 'T-LATE', tenantId: w.tenantId }, data: { customerId: c.id } });
    await t.score();
    expect(dimension(await health(w.apiKey, c.id), 'engagement').score).not.toBeNull();
  });

  it('the daily pass queues every customer not computed for a day', async () => {
    const w = await tenantWithKey(t.prisma);
    const a = await activeCustomer(w.tenantId);
    const b = await activeCustomer(w.tenantId);
    await t.score();
    await t.pool.query(`UPDATE health_snapshots SET computed_at = now() - interval '2 days' WHERE customer_id = ANY($1)`, [[a.id, b.id]]);
    const { queued } = await t.scoringLoop.daily();
    expect(queued).toBeGreaterThanOrEqual(2);
    await t.score();
    const fresh = await t.pool.query(
      `SELECT 1 FROM health_snapshots WHERE customer_id = ANY($1) AND computed_at > now() - interval '1 minute'`,
      [[a.id, b.id]],
    );
    expect(fresh.rowCount).toBe(2);
  });

  it('costs the same statements for 5 customers as for 150: batched SQL, never a query per customer', async () => {
    const count = async (n: number) => {
      const w = await tenantWithKey(t.prisma);
      for (let i = 0; i < n; i++) await customer(t.prisma, w.tenantId);
      const ids = (await t.prisma.customer.findMany({ where: { tenantId: w.tenantId }, select: { id: true } })).map((c) => c.id);
      await t.score();
      const statements: string[] = [];
      const spy = { query: async (text: string, values?: unknown[]) => (statements.push(text), (await t.pool.query(text, values)).rows) };
      await spy.query(
        `INSERT INTO scoring_queue (customer_id, tenant_id, due_at) SELECT id, tenant_id, now() FROM customers WHERE id = ANY($1)`,
        [ids],
      );
      statements.length = 0;
      const { extractFeatures } = await import('../../src/scoring/features.ts');
      await extractFeatures(
        spy as never,
        ids.map((customerId) => ({ customerId, asOf: new Date() })),
      );
      const claims = await claimDue(onPg(t.pool), 1000, 60);
      await t.scorer.recompute(claims);
      return statements.length;
    };
    expect(await count(5)).toBe(await count(150));
  });

  it('is safe with two workers draining at once: each customer computed once', async () => {
    const w = await tenantWithKey(t.prisma);
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) ids.push((await activeCustomer(w.tenantId)).id);
    await t.scoringLoop.collect();
    await t.pool.query('UPDATE scoring_queue SET due_at = now()');
    const { createScoringLoop } = await import('../../src/scoring/drain.ts');
    const { createScorer } = await import('../../src/scoring/recompute.ts');
    const { customerRows } = await import('../../src/services/customer-rows.ts');
    const { createPool } = await import('../../src/db/prisma.ts');
    const pools = [createPool(t.config.database.url!, 4), createPool(t.config.database.url!, 4)];
    const quiet = { error: () => {}, warn: () => {}, info: () => {} };
    const loops = pools.map((p) =>
      createScoringLoop(p, createScorer(p, customerRows.saveScores), { batchSize: 7, leaseSeconds: 60, concurrency: 2, log: quiet }),
    );
    const computed = await Promise.all(loops.map((l) => l.drain()));
    await Promise.all(pools.map((p) => p.end()));
    expect(computed.reduce((a, b) => a + b, 0)).toBe(40);
    expect(computed.every((n) => n > 0)).toBe(true);
    const events = await t.pool.query(
      `SELECT subject, count(*)::int AS n FROM outbox_events WHERE type = 'customer.health_changed' AND subject = ANY($1) GROUP BY subject`,
      [ids],
    );
    expect(events.rows).toHaveLength(40);
    expect(events.rows.every((r) => r.n === 1)).toBe(true);
  });
});

describe('alerts', () => {
  it('a silent customer gets an inactivity alert that resolves when usage returns', async () => {
    const w = await tenantWithKey(t.prisma);
    const c = await customer(t.prisma, w.tenantId);
    await signals(
      t.prisma,
      w.tenantId,
      c.id,
      spread('usage.event', 10, 10).map((s) => ({ ...s, daysAgo: s.daysAgo! + 20 })),
    );
    await t.score();
    const [raised] = await alertsOf(w.apiKey, c.id);
    expect(raised).toMatchObject({ alert_type: 'inactivity', status: 'open', severity: 'medium', details: { days_inactive: 20 } });
    expect(await outbox('alert.created', raised.id)).toEqual([{ payload: expect.objectContaining({ id: raised.id, status: 'open' }) }]);

    const posted = await send(w.apiKey, 'POST', '/api/v1/events', { events: [{ customer_id: c.id, event: 'report.exported' }] });
    expect(posted.statusCode).toBe(202);
    await t.score();
    const [after] = await alertsOf(w.apiKey, c.id);
    expect(after).toMatchObject({ id: raised.id, status: 'resolved' });
    expect(after.resolved_at).not.toBeNull();
    expect(await outbox('alert.resolved', raised.id)).toEqual([
      { payload: expect.objectContaining({ id: raised.id, status: 'resolved' }) },
    ]);
  });

  const cases: [string, string, (tenantId: string, id: string) => Promise<unknown>][] = [
    [
      'health_drop',
      'high',
      async (tenant, id) => {
        await historyPoint(t.prisma, tenant, id, 7, { score: 100 });
        // Usage about 78 and billing 60 (two old failures): about 70, down 30 from 100.
        await signals(t.prisma, tenant, id, [
          ...spread('billing.payment_failed', 2, 2).map((s) => ({ ...s, daysAgo: 20 })),
          ...spread('usage.event', 3, 3),
        ]);
      },
    ],
    [
      'churn_risk',
      'critical',
      (tenant, id) =>
        signals(t.prisma, tenant, id, [
          { kind: 'usage.event', daysAgo: 60 },
          ...spread('billing.payment_failed', 3, 20),
          { kind: 'chat.message', daysAgo: 50, sentiment: -1 },
        ]),
    ],
    ['payment_failed', 'medium', (tenant, id) => signals(t.prisma, tenant, id, [{ kind: 'billing.payment_failed', daysAgo: 2 }])],
    ['invoice_overdue', 'high', (tenant, id) => invoice(t.prisma, tenant, id, { status: 'overdue', dueDaysAgo: 20, overdueDaysAgo: 19 })],
    ['trial_ending', 'high', (tenant, id) => subscription(t.prisma, tenant, id, { status: 'trialing', trialEndsInDays: 2 })],
    ['inactivity', 'high', (tenant, id) => signals(t.prisma, tenant, id, [{ kind: 'code.push', daysAgo: 35 }])],
    [
      'support_backlog',
      'high',
      (tenant, id) =>
        signals(
          t.prisma,
          tenant,
          id,
          Array.from({ length: 5 }, (_, i) => ({
            kind: 'support.conversation_opened',
            daysAgo: 2,
            attributes: { conversation_id: `c${i}` },
          })),
        ),
    ],
    ['negative_sentiment', 'high', (tenant, id) => signals(t.prisma, tenant, id, spread('chat.message', 4, 10, { sentiment: -0.7 }))],
  ];

  it.each(cases)('raises %s (severity %s) when its condition holds', async (type, severity, setup) => {
    const w = await tenantWithKey(t.prisma);
    const c = await customer(t.prisma, w.tenantId);
    await setup(w.tenantId, c.id);
    await t.score();
    const alerts = await alertsOf(w.apiKey, c.id);
    expect(alerts.find((a: { alert_type: string }) => a.alert_type === type)).toMatchObject({ status: 'open', severity });
  });

  it('keeps one unresolved alert per customer and type however often it recomputes', async () => {
    const { w, c } = await withPaymentAlert();
    await signals(t.prisma, w.tenantId, c.id, [{ kind: 'billing.payment_failed', daysAgo: 1 }]);
    await t.score();
    const alerts = await alertsOf(w.apiKey, c.id);
    expect(alerts.filter((a: { alert_type: string }) => a.alert_type === 'payment_failed')).toEqual([
      expect.objectContaining({ status: 'open', severity: 'high' }),
    ]);
  });

  it('resolves a payment alert once an invoice is paid after the failure', async () => {
    const { w, c } = await withPaymentAlert();
    await signals(t.prisma, w.tenantId, c.id, [{ kind: 'billing.invoice_paid', daysAgo: 1 }]);
    await t.score();
    expect((await alertsOf(w.apiKey, c.id))[0]).toMatchObject({ alert_type: 'payment_failed', status: 'resolved' });
  });

  it('leaves a snoozed alert snoozed while its condition holds, and opens it when the time comes', async () => {
    const { w, c, alert: a } = await withPaymentAlert();
    const until = new Date(Date.now() + 3600_000).toISOString();
    await send(w.apiKey, 'PATCH', `/api/v1/alerts/${a.id}`, { status: 'snoozed', snoozed_until: until });
    await signals(t.prisma, w.tenantId, c.id, [{ kind: 'usage.event' }]);
    await t.score();
    expect((await alertsOf(w.apiKey, c.id))[0]).toMatchObject({ status: 'snoozed', snoozed_until: until });
    await t.pool.query(`UPDATE alerts SET snoozed_until = now() - interval '1 second' WHERE id = $1`, [a.id]);
    await t.scoringLoop.daily();
    expect((await alertsOf(w.apiKey, c.id))[0]).toMatchObject({ status: 'open', snoozed_until: null });
  });

  it('resolves a snoozed alert when its condition clears', async () => {
    const { w, c, alert: a } = await withPaymentAlert();
    await send(w.apiKey, 'PATCH', `/api/v1/alerts/${a.id}`, {
      status: 'snoozed',
      snoozed_until: new Date(Date.now() + 3600_000).toISOString(),
    });
    await signals(t.prisma, w.tenantId, c.id, [{ kind: 'billing.invoice_paid' }]);
    await t.score();
    expect((await alertsOf(w.apiKey, c.id))[0]).toMatchObject({ status: 'resolved', snoozed_until: null });
  });

  it('does not raise again a week after a hand-made resolve, unless it gets worse', async () => {
    const { w, c, alert: a } = await withPaymentAlert();
    await send(w.apiKey, 'PATCH', `/api/v1/alerts/${a.id}`, { status: 'resolved' });
    await signals(t.prisma, w.tenantId, c.id, [{ kind: 'usage.event' }]);
    await t.score();
    expect(await alertsOf(w.apiKey, c.id)).toHaveLength(1);
    await signals(t.prisma, w.tenantId, c.id, [{ kind: 'billing.payment_failed', daysAgo: 1 }]);
    await t.score();
    const alerts = await alertsOf(w.apiKey, c.id);
    expect(alerts).toHaveLength(2);
    expect(alerts[0]).toMatchObject({ status: 'open', severity: 'high' });
  });

  it('writes alert.resolved with a hand-made resolve, in the same change', async () => {
    const { w, alert: a } = await withPaymentAlert();
    await send(w.apiKey, 'PATCH', `/api/v1/alerts/${a.id}`, { status: 'resolved' });
    expect(await outbox('alert.resolved', a.id)).toHaveLength(1);
  });

  it('refuses to reopen an alert while a newer one of its type is unresolved', async () => {
    const { w, c, alert: old } = await withPaymentAlert();
    await send(w.apiKey, 'PATCH', `/api/v1/alerts/${old.id}`, { status: 'resolved' });
    await signals(t.prisma, w.tenantId, c.id, [...spread('billing.payment_failed', 2, 1)]);
    await t.score();
    const res = await send(w.apiKey, 'PATCH', `/api/v1/alerts/${old.id}`, { status: 'open' });
    expect(res.statusCode).toBe(409);
    expect(res.json().code).toBe('conflict');
  });
});

describe('events to endpoints', () => {
  it('announces customer.health_changed and churn_prediction.updated, but not a change of a point or two', async () => {
    const w = await tenantWithKey(t.prisma);
    const c = await activeCustomer(w.tenantId);
    await t.score();
    await signals(t.prisma, w.tenantId, c.id, [{ kind: 'usage.event' }]);
    await t.score();
    const changed = await outbox('customer.health_changed', c.id);
    expect(changed).toHaveLength(1);
    expect(changed[0].payload).toMatchObject({ tenant_id: w.tenantId, id: c.id, previous_health_score: null, health_status: 'healthy' });
    expect(await outbox('churn_prediction.updated', c.id)).toHaveLength(1);

    await signals(t.prisma, w.tenantId, c.id, spread('billing.payment_failed', 3, 3));
    await t.score();
    const again = await outbox('customer.health_changed', c.id);
    expect(again).toHaveLength(2);
    expect(again[1].payload.previous_health_score).toBe(changed[0].payload.health_score);
  });
});
