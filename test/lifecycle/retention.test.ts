import { describe, expect } from 'vitest';
import { onPg } from '../../src/db/sql.ts';
import { runRetention } from '../../src/lifecycle/retention.ts';
import { extractFeatures, type AsOf } from '../../src/scoring/features.ts';
import { testWith } from '../support/fixtures.ts';
import { customer, daysAgo, signals, type SignalSpec } from '../support/factories.ts';
import type { TestApp } from '../support/app.ts';
import { emptyBodiesBefore } from '../../src/ingest/inbox.ts';

// Data made old on purpose, then one retention pass as the worker runs it, connected as the service's own
// database role: what is past each tenant's window goes, nothing younger does.

const METRICS_TOKEN = 'metrics-token-0123456789abcdef';
const test = testWith({ asAppRole: true, env: { METRICS_TOKEN } });
const pass = (app: TestApp, batchSize = 1000, maxBatches = 1000) =>
  runRetention(app.pool, { batchSize, maxBatches, emptyInboundBodies: emptyBodiesBefore });

interface Aged {
  days: number;
  id: string;
}

/** One of each kind of data at each age, for a tenant. */
async function agedData(app: TestApp, tenantId: string, ages: number[]) {
  const c = await customer(app.prisma, tenantId);
  const q = <T = { id: string }>(text: string, values: unknown[]) => app.pool.query(text, values).then((r) => r.rows as T[]);
  const [endpoint] = await q(
    `INSERT INTO webhook_endpoints (id, tenant_id, url, events, secret, updated_at) VALUES (gen_random_uuid(), $1, 'https://127.0.0.1:9/h', '{}', 'x', now()) RETURNING id`,
    [tenantId],
  );
  const out = {
    customerId: c.id,
    inbox: [] as Aged[],
    signals: [] as Aged[],
    deliveries: [] as Aged[],
    outbox: [] as Aged[],
    audit: [] as Aged[],
  };
  for (const days of ages) {
    const at = daysAgo(days);
    const [inbox] = await q(
      `INSERT INTO inbox_events (id, tenant_id, provider, dedup_key, event_type, body, status, received_at)
       VALUES (gen_random_uuid(), $1, 'stripe', $2, 'customer.updated', '{"name":"Initech"}', 'processed', $3) RETURNING id`,
      [tenantId, `evt_${days}_${Math.random()}`, at],
    );
    out.inbox.push({ days, id: inbox!.id });
    const [signal] = await q(
      `INSERT INTO signals (id, tenant_id, customer_id, inbox_event_id, source, kind, occurred_at) VALUES (gen_random_uuid(), $1, $2, $3, 'api', 'usage.event', $4) RETURNING id`,
      [tenantId, c.id, inbox!.id, at],
    );
    out.signals.push({ days, id: signal!.id });
    const [outbox] = await q(
      `INSERT INTO outbox_events (id, tenant_id, type, payload, created_at) VALUES (gen_random_uuid(), $1, 'customer.created', '{}', $2) RETURNING id`,
      [tenantId, at],
    );
    // Relayed long ago: no longer listed as still to relay.
    await q('DELETE FROM outbox_pending WHERE event_id = $1', [outbox!.id]);
    out.outbox.push({ days, id: outbox!.id });
    const [delivery] = await q(
      `INSERT INTO webhook_deliveries (id, tenant_id, endpoint_id, outbox_event_id, event_type, envelope, status, created_at, updated_at)
       VALUES (gen_random_uuid(), $1, $2, $3, 'customer.created', '{}', 'succeeded', $4, $4) RETURNING id`,
      [tenantId, endpoint!.id, outbox!.id, at],
    );
    await q(
      `INSERT INTO webhook_attempts (id, delivery_id, attempt, started_at, duration_ms, status_code, response_body) VALUES (gen_random_uuid(), $1, 1, $2, 5, 200, 'ok') RETURNING id`,
      [delivery!.id, at],
    );
    out.deliveries.push({ days, id: delivery!.id });
    const [audit] = await q(
      `INSERT INTO audit_events (id, tenant_id, occurred_at, actor_type, action) VALUES (gen_random_uuid(), $1, $2, 'operator', 'user.created') RETURNING id`,
      [tenantId, at],
    );
    out.audit.push({ days, id: audit!.id });
  }
  // Not yet processed: kept with its body whatever its age.
  const [pending] = await q(
    `INSERT INTO inbox_events (id, tenant_id, provider, dedup_key, event_type, body, status, received_at)
     VALUES (gen_random_uuid(), $1, 'stripe', $2, 'customer.updated', '{"name":"Initech"}', 'received', $3) RETURNING id`,
    [tenantId, `evt_pending_${Math.random()}`, daysAgo(Math.max(...ages))],
  );
  return { ...out, pendingInboxId: pending!.id };
}

const kept = (all: Aged[], windowDays: number) =>
  all
    .filter((a) => a.days < windowDays)
    .map((a) => a.id)
    .sort();
const ids = (rows: { id: string }[]) => rows.map((r) => r.id).sort();

describe('a retention pass', () => {
  test('removes exactly what is past the default windows', async ({ app, tenant }) => {
    const d = await agedData(app, tenant.tenantId, [1, 20, 40, 380, 420, 800]);
    await pass(app);
    const where = { tenantId: tenant.tenantId };
    const inbox = await app.prisma.inboxEvent.findMany({ where: { ...where, status: 'processed' } });
    // Bodies go after 30 days; the rows stay, with their metadata, for the 400 days signals are kept.
    expect(ids(inbox)).toEqual(kept(d.inbox, 400));
    expect(ids(inbox.filter((e) => e.body !== ''))).toEqual(kept(d.inbox, 30));
    expect((await app.prisma.inboxEvent.findUniqueOrThrow({ where: { id: d.pendingInboxId } })).body).not.toBe('');
    expect(ids(await app.prisma.signal.findMany({ where }))).toEqual(kept(d.signals, 400));
    expect(ids(await app.prisma.outboxEvent.findMany({ where }))).toEqual(kept(d.outbox, 30));
    expect(ids(await app.prisma.webhookDelivery.findMany({ where }))).toEqual(kept(d.deliveries, 30));
    expect(await app.prisma.webhookAttempt.count({ where: { delivery: where } })).toBe(kept(d.deliveries, 30).length);
    expect(ids(await app.prisma.auditEvent.findMany({ where }))).toEqual(kept(d.audit, 730));
  });

  test('never removes an outbound event the relay has not fanned out yet, however old', async ({ app, tenant }) => {
    const [event] = (
      await app.pool.query<{ id: string }>(
        `INSERT INTO outbox_events (id, tenant_id, type, payload, created_at) VALUES (gen_random_uuid(), $1, 'customer.created', '{}', now() - interval '90 days') RETURNING id`,
        [tenant.tenantId],
      )
    ).rows;
    await pass(app);
    expect(await app.prisma.outboxEvent.count({ where: { id: event!.id } })).toBe(1);
  });

  test('follows a tenant’s own windows and leaves other tenants to theirs', async ({ app, tenant, signedIn }) => {
    const admin = await signedIn('admin');
    const res = await app.app.inject({
      method: 'PUT',
      url: '/api/v1/retention',
      headers: { authorization: `Bearer ${admin.token}` },
      payload: { inbound_bodies: 10, signals: 150, deliveries: 5, audit_events: 400 },
    });
    expect(res.statusCode).toBe(200);
    const mine = await agedData(app, tenant.tenantId, [1, 8, 12, 100, 200, 500]);
    const other = await (await import('../support/factories.ts')).tenantWithKey(app.prisma);
    const theirs = await agedData(app, other.tenantId, [1, 8, 12, 100, 200, 500]);
    await pass(app);
    const bodies = async (tenantId: string) =>
      ids(await app.prisma.inboxEvent.findMany({ where: { tenantId, status: 'processed', body: { not: '' } } }));
    expect(await bodies(tenant.tenantId)).toEqual(kept(mine.inbox, 10));
    expect(await bodies(other.tenantId)).toEqual(kept(theirs.inbox, 30));
    expect(ids(await app.prisma.signal.findMany({ where: { tenantId: tenant.tenantId } }))).toEqual(kept(mine.signals, 150));
    expect(ids(await app.prisma.signal.findMany({ where: { tenantId: other.tenantId } }))).toEqual(kept(theirs.signals, 400));
    expect(ids(await app.prisma.webhookDelivery.findMany({ where: { tenantId: tenant.tenantId } }))).toEqual(kept(mine.deliveries, 5));
    expect(ids(await app.prisma.auditEvent.findMany({ where: { tenantId: tenant.tenantId, action: 'user.created' } }))).toEqual(
      kept(mine.audit, 400),
    );
    expect(ids(await app.prisma.auditEvent.findMany({ where: { tenantId: other.tenantId } }))).toEqual(kept(theirs.audit, 730));
  });

  test('reads back the windows a tenant set, and the defaults for the ones it cleared', async ({ app, signedIn }) => {
    const admin = await signedIn('admin');
    const headers = { authorization: `Bearer ${admin.token}` };
    const set = await app.app.inject({
      method: 'PUT',
      url: '/api/v1/retention',
      headers,
      payload: { inbound_bodies: 14, deliveries: 7, signals: null },
    });
    expect(set.statusCode).toBe(200);
    const res = await app.app.inject({ method: 'GET', url: '/api/v1/retention', headers });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      inbound_bodies: { days: 14, is_default: false },
      deliveries: { days: 7, is_default: false },
      signals: { days: 400, is_default: true },
      audit_events: { days: 730, is_default: true },
    });
  });

  test('rolls a customer’s old signals up into daily aggregates and deletes unattributed ones', async ({ app, tenant }) => {
    const c = await customer(app.prisma, tenant.tenantId);
    await signals(app.prisma, tenant.tenantId, c.id, [
      { kind: 'chat.message', daysAgo: 450, sentiment: 0.5, attributes: { actor: 'U1' } },
      { kind: 'chat.message', daysAgo: 450, sentiment: -0.25, attributes: { actor: 'U1' } },
      { kind: 'chat.message', daysAgo: 450, attributes: { actor: 'U2' } },
      { kind: 'code.push', daysAgo: 420, value: 3, attributes: { actor: 'octocat', message: 'fix the thing' } },
    ]);
    await app.pool.query(
      `INSERT INTO signals (id, tenant_id, source, kind, occurred_at, account_id) VALUES (gen_random_uuid(), $1, 'slack', 'chat.message', $2, 'T0001')`,
      [tenant.tenantId, daysAgo(450)],
    );
    const [report] = (await pass(app)).filter((r) => r.kind === 'signals');
    expect(report).toMatchObject({ processed: 5, behind: false });
    const rollups = await app.prisma.signalRollup.findMany({
      where: { customerId: c.id },
      orderBy: [{ kind: 'asc' }, { signals: 'desc' }],
    });
    expect(
      rollups.map((r) => ({
        kind: r.kind,
        signals: r.signals,
        sentimentSum: r.sentimentSum,
        sentimentCount: r.sentimentCount,
        value: r.value,
      })),
    ).toEqual([
      { kind: 'chat.message', signals: 2, sentimentSum: 0.25, sentimentCount: 2, value: 1 },
      { kind: 'chat.message', signals: 1, sentimentSum: 0, sentimentCount: 0, value: 1 },
      { kind: 'code.push', signals: 1, sentimentSum: 0, sentimentCount: 0, value: 3 },
    ]);
    // Actors are kept only as hashes; the commit message is gone.
    expect(JSON.stringify(rollups)).not.toMatch(/U1|octocat|fix the thing/);
    expect(await app.prisma.signal.count({ where: { tenantId: tenant.tenantId } })).toBe(0);
  });

  test('works in bounded batches and says when it is behind', async ({ app, tenant }) => {
    const c = await customer(app.prisma, tenant.tenantId);
    await signals(
      app.prisma,
      tenant.tenantId,
      c.id,
      Array.from({ length: 5 }, (_, i) => ({ kind: 'usage.event', daysAgo: 500 + i })),
    );
    const signalsReport = async () => (await pass(app, 2, 2)).find((r) => r.kind === 'signals')!;
    expect(await signalsReport()).toEqual({ kind: 'signals', processed: 4, behind: true });
    expect(await signalsReport()).toEqual({ kind: 'signals', processed: 1, behind: false });
  });

  test('shows what it did in /metrics', async ({ app, tenant }) => {
    await agedData(app, tenant.tenantId, [40]);
    await pass(app);
    const res = await app.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(res.body).toMatch(/chs_retention_processed_total\{kind="inbound_bodies"\} [1-9]/);
    expect(res.body).toMatch(/chs_retention_last_run_timestamp_seconds\{kind="signals"\} \d/);
    expect(res.body).toMatch(/chs_retention_behind\{kind="deliveries"\} 0/);
  });
});

const queue = (app: TestApp, customerId: string, tenantId: string) =>
  app.pool.query(
    `INSERT INTO scoring_queue (customer_id, tenant_id, due_at) VALUES ($1, $2, now()) ON CONFLICT (customer_id) DO UPDATE SET due_at = now()`,
    [customerId, tenantId],
  );

describe('scoring over rolled-up signals', () => {
  /** Two years of a customer's life in every kind of signal the features read. */
  const history = (): SignalSpec[] =>
    Array.from({ length: 700 }, (_, day) => day + 0.3).flatMap((d, i) => [
      { kind: 'usage.event', daysAgo: d, attributes: { user_id: `user-${i % 7}@initech.example` } },
      { kind: 'code.push', daysAgo: d + 0.1, value: (i % 13) + 1, attributes: { actor: `dev${i % 3}` } },
      ...(i % 3 === 0
        ? [{ kind: 'chat.message', daysAgo: d + 0.2, sentiment: ((i % 5) - 2) / 4, attributes: { actor: `U${i % 4}` } }]
        : []),
      ...(i % 9 === 0
        ? [
            { kind: 'support.conversation_opened', daysAgo: d, sentiment: -0.5, attributes: { conversation_id: `c${i}` } },
            ...(i % 18 === 0 ? [{ kind: 'support.conversation_closed', daysAgo: d - 0.2, attributes: { conversation_id: `c${i}` } }] : []),
          ]
        : []),
      ...(i % 30 === 0 ? [{ kind: 'growth.seats', daysAgo: d, value: 10 + (i % 4), attributes: { previous: 10 } }] : []),
      ...(i % 45 === 0
        ? [
            { kind: 'billing.payment_failed', daysAgo: d },
            { kind: 'support.rating', daysAgo: d, value: (i % 5) + 1 },
          ]
        : []),
    ]);

  test('computes the same features, before and after the rollup, for windows that reach it', async ({ app, tenant }) => {
    const c = await customer(app.prisma, tenant.tenantId);
    await signals(app.prisma, tenant.tenantId, c.id, history());
    // Training reads each label's last 90 days, and the 30 days before: here every window reaches rolled-up days.
    const targets: AsOf[] = [380, 450, 520, 600, 681.37].map((days) => ({ customerId: c.id, asOf: daysAgo(days) }));
    const before = await extractFeatures(onPg(app.pool), targets);
    const [report] = (await pass(app)).filter((r) => r.kind === 'signals');
    expect(report!.processed).toBeGreaterThan(500);
    expect(await app.prisma.signalRollup.count({ where: { customerId: c.id } })).toBeGreaterThan(0);
    const after = await extractFeatures(onPg(app.pool), targets);
    for (const t of targets) {
      const b = before.get(t.customerId)!;
      const a = after.get(t.customerId)!;
      expect(Object.keys(a)).toEqual(Object.keys(b));
      for (const k of Object.keys(b) as (keyof typeof b)[]) {
        const [x, y] = [b[k], a[k]];
        if (typeof x === 'number' && typeof y === 'number') expect(y, k).toBeCloseTo(x, 9);
        else expect(y, k).toEqual(x);
      }
    }
  });

  test('keeps live scores exactly as they were', async ({ app, tenant }) => {
    const c = await customer(app.prisma, tenant.tenantId);
    await signals(app.prisma, tenant.tenantId, c.id, history());
    await queue(app, c.id, tenant.tenantId);
    await app.score();
    const before = await app.prisma.healthSnapshot.findUniqueOrThrow({ where: { customerId: c.id } });
    const churnBefore = await app.prisma.churnPrediction.findUniqueOrThrow({ where: { customerId: c.id } });
    await pass(app);
    expect(await app.prisma.signal.count({ where: { customerId: c.id, occurredAt: { lt: daysAgo(401) } } })).toBe(0);
    await queue(app, c.id, tenant.tenantId);
    await app.score();
    const after = await app.prisma.healthSnapshot.findUniqueOrThrow({ where: { customerId: c.id } });
    const churnAfter = await app.prisma.churnPrediction.findUniqueOrThrow({ where: { customerId: c.id } });
    expect(after.score).toBe(before.score);
    expect(after.dimensions).toEqual(before.dimensions);
    expect(churnAfter.probability).toBe(churnBefore.probability);
    expect(churnAfter.features).toEqual(churnBefore.features);
  });
});
