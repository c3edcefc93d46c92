// What must hold after a mixed workload (mixed-workload.ts), whatever the interleaving: each check reads
// the database, the run's records and the healthy receiver's hits, and says what it found.
import pg from 'pg';
import { createPool, createPrisma } from '../../src/db/prisma.ts';
import { processInboxEvent } from '../../src/ingest/processor.ts';
import { cloneTemplate } from './database.ts';
import type { Hit } from './receiver.ts';
import { seedCustomers, type MixedReport, type TenantPlan } from './mixed-workload.ts';

export interface CheckResult {
  ok: boolean;
  summary: string;
  details: unknown[];
}

export interface Checks {
  noServerErrors: CheckResult;
  noDeadlocks: CheckResult;
  drained: CheckResult;
  inboundExactlyOnce: CheckResult;
  inboundInOrder: CheckResult;
  usageExactlyOnce: CheckResult;
  serialEquivalence: CheckResult;
  outboundDelivered: CheckResult;
  tenantIsolation: CheckResult;
  workspacePurged: CheckResult;
  harnessClean: CheckResult;
}

interface Input {
  report: Omit<MixedReport, 'checks'>;
  pool: pg.Pool;
  plans: TenantPlan[];
  okHits: Hit[];
  endpoints: TenantPlan['endpoints'][];
}

const result = (ok: boolean, summary: string, details: unknown[] = []): CheckResult => ({ ok, summary, details: details.slice(0, 25) });

/** Runs every check; one that throws is reported failed with its error rather than hiding the others. */
export async function runChecks(input: Input): Promise<Checks> {
  const guard = async (name: string, fn: () => Promise<CheckResult> | CheckResult): Promise<CheckResult> => {
    try {
      return await fn();
    } catch (e) {
      return result(false, `the check ${name} could not run: ${String(e)}`, [(e as Error).stack]);
    }
  };
  return {
    noServerErrors: await guard('noServerErrors', () => noServerErrors(input)),
    noDeadlocks: await guard('noDeadlocks', () => noDeadlocks(input)),
    drained: await guard('drained', () => drained(input)),
    inboundExactlyOnce: await guard('inboundExactlyOnce', () => inboundExactlyOnce(input)),
    inboundInOrder: await guard('inboundInOrder', () => inboundInOrder(input)),
    usageExactlyOnce: await guard('usageExactlyOnce', () => usageExactlyOnce(input)),
    serialEquivalence: await guard('serialEquivalence', () => serialEquivalence(input)),
    outboundDelivered: await guard('outboundDelivered', () => outboundDelivered(input)),
    tenantIsolation: await guard('tenantIsolation', () => tenantIsolation(input)),
    workspacePurged: await guard('workspacePurged', () => workspacePurged(input)),
    harnessClean: await guard('harnessClean', () => harnessClean(input)),
  };
}

const liveTenants = (plans: TenantPlan[]) => plans.filter((p) => !p.doomed).map((p) => p.id);

// (a) -------------------------------------------------------------------------------------------------

function noServerErrors({ report }: Input): CheckResult {
  const bad = report.figures.filter((f) => f.serverErrors > 0 || f.noAnswer > 0);
  const errors = bad.reduce((a, f) => a + f.serverErrors, 0);
  const none = bad.reduce((a, f) => a + f.noAnswer, 0);
  const shed = report.figures.reduce((a, f) => a + f.shed, 0);
  const total = report.figures.reduce((a, f) => a + f.count, 0);
  const fromDoomed = bad.reduce(
    (a, f) => a + Object.entries(f.serverErrorsByTenant).reduce((n, [t, k]) => n + (t.includes('deleted during the run') ? k : 0), 0),
    0,
  );
  return result(
    errors === 0 && none === 0,
    `${total} requests: ${errors} answered 5xx (${fromDoomed} of them from the tenant whose workspace was deleted during the run), ${none} got no whole answer, ${shed} shed with 503 + Retry-After (allowed)` +
      (bad.length
        ? `; on ${bad.map((f) => `${f.path} (${f.serverErrors} 5xx${f.noAnswer ? `, ${f.noAnswer} no answer` : ''})`).join(', ')}`
        : ''),
    bad.map((f) => ({ path: f.path, statuses: f.statuses, samples: f.samples })),
  );
}

// (b) -------------------------------------------------------------------------------------------------

function noDeadlocks({ report }: Input): CheckResult {
  const delta = report.deadlocks.after - report.deadlocks.before;
  const logged = report.logMatches.reduce((a, m) => a + m.count, 0);
  const sites: Record<string, number> = {};
  for (const m of report.logMatches) for (const [site, n] of Object.entries(m.sites)) sites[site] = (sites[site] ?? 0) + n;
  return result(
    delta === 0 && logged === 0,
    `pg_stat_database.deadlocks ${report.deadlocks.before} → ${report.deadlocks.after} (+${delta}); ${logged} service log lines report a deadlock (40P01) or a serialization failure (40001)` +
      (logged
        ? `: ${Object.entries(sites)
            .map(([site, n]) => `${n} × ${site}`)
            .join('; ')}`
        : '') +
      (report.lockCycles.length ? `; lock cycles sampled: ${report.lockCycles.join(' ;; ')}` : ''),
    report.logMatches.filter((m) => m.count > 0),
  );
}

function drained({ report }: Input): CheckResult {
  return result(
    report.quiesce.drained && report.exited.length === 0,
    `${report.quiesce.drained ? 'drained' : 'NOT drained'} within ${(report.quiesce.waitedMs / 1000).toFixed(1)} s: ${JSON.stringify(report.quiesce.remaining)}` +
      `; ${report.exited.length ? report.exited.join(', ') : 'every service process stayed up'}`,
    report.quiesce.timeline,
  );
}

// (c) -------------------------------------------------------------------------------------------------

/** Event kinds whose processing records exactly one signal. */
const ONE_SIGNAL = new Set([
  'stripe invoice.paid',
  'stripe charge.refunded',
  'github push',
  'slack message',
  'discord MESSAGE_CREATE',
  'intercom conversation.user.created',
  'meta_ads leadgen',
]);

async function inboundExactlyOnce({ report, pool, plans }: Input): Promise<CheckResult> {
  const live = new Set(liveTenants(plans));
  const accepted = new Map(report.accepted.filter((a) => live.has(a.tenantId)).map((a) => [a.id, a]));
  const ids = [...accepted.keys()];
  const { rows } = await pool.query<{ id: string; status: string; emptied: boolean; signals: number }>(
    `SELECT i.id, i.status::text AS status, i.body = '' AS emptied,
            (SELECT count(*)::int FROM signals s WHERE s.inbox_event_id = i.id) AS signals
     FROM inbox_events i WHERE i.id = ANY($1::uuid[])`,
    [ids],
  );
  const found = new Map(rows.map((r) => [r.id, r]));
  const lost = ids.filter((id) => !found.has(id));
  const stuck = await pool.query<{
    id: string;
    provider: string;
    event_type: string;
    status: string;
    attempts: number;
    last_error: string | null;
  }>(
    `SELECT id, provider, event_type, status::text AS status, attempts, last_error FROM inbox_events
     WHERE tenant_id = ANY($1::uuid[]) AND status IN ('received', 'failed')`,
    [[...live]],
  );
  const duplicated = await pool.query<{ inbox_event_id: string; kind: string; n: number }>(
    `SELECT inbox_event_id, kind, count(*)::int AS n FROM signals
     WHERE tenant_id = ANY($1::uuid[]) AND inbox_event_id IS NOT NULL
     GROUP BY inbox_event_id, kind, occurred_at, value, account_id, attributes::text HAVING count(*) > 1`,
    [[...live]],
  );
  // An event whose raw body an erasure emptied had its signals erased with its customer.
  const wrongCount = rows.filter((r) => {
    const a = accepted.get(r.id)!;
    return ONE_SIGNAL.has(`${a.provider} ${a.type}`) && r.status === 'processed' && !r.emptied && r.signals !== 1;
  });
  const byStatus: Record<string, number> = {};
  const ignored: Record<string, number> = {};
  for (const r of rows) {
    byStatus[r.status] = (byStatus[r.status] ?? 0) + 1;
    const a = accepted.get(r.id)!;
    if (r.status === 'ignored')
      ignored[`${a.provider} ${a.type}${r.emptied ? ' (body erased)' : ''}`] =
        (ignored[`${a.provider} ${a.type}${r.emptied ? ' (body erased)' : ''}`] ?? 0) + 1;
  }
  const ok =
    lost.length === 0 &&
    stuck.rows.length === 0 &&
    duplicated.rows.length === 0 &&
    wrongCount.length === 0 &&
    report.duplicateMismatches.length === 0;
  return result(
    ok,
    `${ids.length} accepted events of the live tenants: ${JSON.stringify(byStatus)} (ignored: ${JSON.stringify(ignored)}); ${lost.length} lost, ${stuck.rows.length} left received/failed, ` +
      `${duplicated.rows.length} signals recorded twice for one event, ${wrongCount.length} events with other than their one signal, ` +
      `${report.duplicateMismatches.length} redeliveries not answered as the duplicate of the first`,
    [
      ...lost.slice(0, 5).map((id) => ({ lost: accepted.get(id) })),
      ...stuck.rows.slice(0, 10).map((r) => ({ stuck: r })),
      ...duplicated.rows.slice(0, 5).map((r) => ({ duplicated: r })),
      ...wrongCount.slice(0, 5).map((r) => ({ signals: r.signals, event: accepted.get(r.id) })),
      ...report.duplicateMismatches.slice(0, 5).map((d) => ({ redelivery: d })),
    ],
  );
}

/**
 * The harness sends the events about one invoice or subscription each once the one before was accepted: the
 * service applies them in that order, so none is applied after a later one and found out of date (ignored),
 * but those an erasure emptied.
 */
async function inboundInOrder({ report, pool, plans }: Input): Promise<CheckResult> {
  const live = new Set(liveTenants(plans));
  const ordered = report.accepted.filter((a) => live.has(a.tenantId) && a.object !== null);
  const { rows } = await pool.query<{ id: string }>(
    `SELECT id FROM inbox_events WHERE id = ANY($1::uuid[]) AND status = 'ignored' AND body <> ''`,
    [ordered.map((a) => a.id)],
  );
  const byId = new Map(ordered.map((a) => [a.id, a]));
  const late: Record<string, number> = {};
  for (const { id } of rows) {
    const a = byId.get(id)!;
    late[a.type] = (late[a.type] ?? 0) + 1;
  }
  const objects = new Set(ordered.map((a) => a.object)).size;
  return result(
    rows.length === 0,
    `${ordered.length} events about ${objects} invoices and subscriptions, each sent after the one before was accepted: ` +
      `${rows.length} applied after a later one (${JSON.stringify(late)})`,
    rows.slice(0, 10).map(({ id }) => ({ outOfOrder: byId.get(id) })),
  );
}

// (d) -------------------------------------------------------------------------------------------------

async function usageExactlyOnce({ report, pool, plans }: Input): Promise<CheckResult> {
  const details: unknown[] = [];
  const lines: string[] = [];
  let ok = report.idempotencyMismatches.length === 0;
  for (const tenantId of liveTenants(plans)) {
    const u = report.usage[tenantId]!;
    const stored = await pool.query<{ customer_id: string | null; n: number }>(
      `SELECT customer_id, count(*)::int AS n FROM signals WHERE tenant_id = $1 AND kind = 'usage.event' AND source = 'api' GROUP BY customer_id`,
      [tenantId],
    );
    const existing = new Set(
      (await pool.query<{ id: string }>('SELECT id FROM customers WHERE tenant_id = $1', [tenantId])).rows.map((r) => r.id),
    );
    const storedBy = new Map(stored.rows.map((r) => [r.customer_id, r.n]));
    // An erased customer's usage goes with it; every other customer keeps exactly what was accepted for it.
    let expected = 0;
    let actual = 0;
    const off: { customer: string | null; expected: number; stored: number }[] = [];
    for (const id of new Set([...Object.keys(u.perCustomer), ...existing])) {
      if (!existing.has(id)) continue;
      const e = u.perCustomer[id] ?? 0;
      const a = storedBy.get(id) ?? 0;
      expected += e;
      actual += a;
      if (a < e || a > e + u.unanswered) off.push({ customer: id, expected: e, stored: a });
    }
    const orphaned = [...storedBy].filter(([id]) => id === null || !existing.has(id));
    if (off.length || orphaned.length) ok = false;
    lines.push(`${tenantId.slice(0, 8)}: ${actual} stored / ${expected} accepted${u.unanswered ? ` (+≤${u.unanswered} unanswered)` : ''}`);
    details.push(
      ...off.slice(0, 5).map((o) => ({ tenantId, ...o })),
      ...orphaned.map(([customer, n]) => ({ tenantId, leftWithoutCustomer: n, customer })),
    );
  }
  return result(
    ok,
    `usage.event signals per tenant, customer by customer: ${lines.join('; ')}; ${report.idempotencyMismatches.length} repeated Idempotency-Keys answered differently`,
    [...details, ...report.idempotencyMismatches.slice(0, 5)],
  );
}

// (e) -------------------------------------------------------------------------------------------------

/**
 * The stored Stripe events of the live tenants, applied one at a time in the order they were accepted
 * (received_at, then the order the harness saw the acceptances) to a fresh database holding the same
 * tenants, customers and identities, must leave the same invoices (status, total) and subscriptions
 * (status, seats) as the system under load did. Only Stripe events touch either. An object is compared
 * only if every accepted event about it still has its raw body: erasing a customer empties the bodies
 * that name it, and such an event cannot be applied again.
 */
async function serialEquivalence({ report, pool, plans }: Input): Promise<CheckResult> {
  const livePlans = plans.filter((p) => !p.doomed);
  const live = new Set(livePlans.map((p) => p.id));
  const bySeq = new Map<string, MixedReport['accepted'][number]>();
  for (const a of report.accepted) if (a.provider === 'stripe' && live.has(a.tenantId) && !bySeq.has(a.id)) bySeq.set(a.id, a);
  const { rows } = await pool.query<{
    id: string;
    tenant_id: string;
    provider: string;
    dedup_key: string;
    event_type: string;
    body: string;
    received_at: Date;
  }>(`SELECT id, tenant_id, provider, dedup_key, event_type, body, received_at FROM inbox_events WHERE id = ANY($1::uuid[])`, [
    [...bySeq.keys()],
  ]);
  const excluded = new Set<string>();
  for (const r of rows) if (r.body === '') excluded.add(bySeq.get(r.id)!.object ?? '');
  for (const id of bySeq.keys()) if (!rows.some((r) => r.id === id)) excluded.add(bySeq.get(id)!.object ?? '');
  // The events about an erased customer's account accepted before its erasure began must have lost their bodies.
  const erasedBefore = new Map<string, number>();
  for (const tenantId of live) for (const e of report.erased[tenantId] ?? []) if (e.status === 200) erasedBefore.set(e.stripe, e.at);
  const aboutErased = [...bySeq.values()].filter((a) => a.account && erasedBefore.has(a.account) && a.at < erasedBefore.get(a.account)!);
  const bodyOf = new Map(rows.map((r) => [r.id, r.body]));
  const keptBodies = aboutErased.filter((a) => bodyOf.get(a.id) !== '');
  const order = rows
    .filter((r) => r.body !== '')
    .sort((a, b) => a.received_at.getTime() - b.received_at.getTime() || bySeq.get(a.id)!.seq - bySeq.get(b.id)!.seq);

  const clone = await cloneTemplate();
  const replayPool = createPool(clone.url, 4);
  const replay = createPrisma({ url: clone.url, poolSize: 4, pool: replayPool });
  const failures: unknown[] = [];
  try {
    await replay.tenant.createMany({ data: livePlans.map((p) => ({ id: p.id, name: p.name, plan: 'scale' as const })) });
    await seedCustomers(replay, livePlans);
    for (let i = 0; i < order.length; i += 500) {
      const chunk = order.slice(i, i + 500);
      await replayPool.query(
        `INSERT INTO inbox_events (id, tenant_id, provider, dedup_key, event_type, body, received_at)
         SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[])`,
        [
          chunk.map((r) => r.id),
          chunk.map((r) => r.tenant_id),
          chunk.map((r) => r.provider),
          chunk.map((r) => r.dedup_key),
          chunk.map((r) => r.event_type),
          chunk.map((r) => r.body),
          chunk.map((r) => r.received_at),
        ],
      );
    }
    for (const r of order) {
      try {
        await processInboxEvent(replayPool, r.id);
      } catch (e) {
        failures.push({ event: r.id, type: r.event_type, error: String(e) });
      }
    }
    const invoices = `SELECT 'invoice:' || tenant_id || ':' || external_id AS k, status::text || ' ' || total_minor::text AS v
                      FROM invoices WHERE tenant_id = ANY($1::uuid[])`;
    const subscriptions = `SELECT 'subscription:' || tenant_id || ':' || external_id AS k, status || ' seats ' || coalesce(seats::text, '-') AS v
                           FROM subscriptions WHERE tenant_id = ANY($1::uuid[])`;
    const read = async (q: pg.Pool) => {
      const m = new Map<string, string>();
      for (const sql of [invoices, subscriptions])
        for (const r of (await q.query<{ k: string; v: string }>(sql, [[...live]])).rows) m.set(r.k, r.v);
      return m;
    };
    const underLoad = await read(pool);
    const serial = await read(replayPool);
    const objects = new Set([...bySeq.values()].map((a) => a.object).filter((o): o is string => o !== null));
    const mismatches: { object: string; underLoad: string | null; serial: string | null }[] = [];
    let compared = 0;
    for (const o of objects) {
      if (excluded.has(o)) continue;
      compared++;
      const a = underLoad.get(o) ?? null;
      const b = serial.get(o) ?? null;
      if (a !== b) mismatches.push({ object: o, underLoad: a, serial: b });
    }
    return result(
      mismatches.length === 0 && failures.length === 0,
      `${order.length} Stripe events replayed one at a time; ${compared} invoices and subscriptions compared, ${mismatches.length} differ, ` +
        `${[...excluded].filter(Boolean).length} left out (an event about them was erased: ${aboutErased.length} events about erased customers accepted before their erasure, ` +
        `${keptBodies.length} of them still with a body), ${failures.length} events failed to apply serially`,
      [...mismatches.slice(0, 15), ...failures.slice(0, 5), ...keptBodies.slice(0, 5).map((a) => ({ keptBodyOfErased: a }))],
    );
  } finally {
    await replay.$disconnect().catch(() => {});
    await replayPool.end().catch(() => {});
    await clone.drop().catch(() => {});
  }
}

// (f) -------------------------------------------------------------------------------------------------

/**
 * Every outbox event of a live tenant reached every enabled endpoint subscribed to its type that existed
 * when it was written: a delivery row exists; to the healthy receiver it succeeded and the receiver got
 * it (by X-Webhook-Id); to the failing and hanging ones it is still pending (being retried), never given up.
 */
async function outboundDelivered({ pool, plans, okHits }: Input): Promise<CheckResult> {
  const live = plans.filter((p) => !p.doomed);
  const okIds = new Set(live.map((p) => p.endpoints.ok));
  const { rows } = await pool.query<{
    outbox_id: string;
    type: string;
    endpoint_id: string;
    delivery_id: string | null;
    status: string | null;
    attempts: number | null;
  }>(
    `SELECT o.id AS outbox_id, o.type, e.id AS endpoint_id, d.id AS delivery_id, d.status::text AS status, d.attempts
     FROM outbox_events o
     JOIN webhook_endpoints e ON e.tenant_id = o.tenant_id AND e.enabled AND o.type = ANY(e.events) AND o.created_at >= e.created_at
     LEFT JOIN webhook_deliveries d ON d.outbox_event_id = o.id AND d.endpoint_id = e.id
     WHERE o.tenant_id = ANY($1::uuid[])`,
    [live.map((p) => p.id)],
  );
  const received = new Set(okHits.map((h) => String(h.headers['x-webhook-id'])));
  const missing = rows.filter((r) => !r.delivery_id);
  const healthy = rows.filter((r) => r.delivery_id && okIds.has(r.endpoint_id));
  const notDelivered = healthy.filter((r) => r.status !== 'succeeded' || !received.has(r.delivery_id!));
  const unhealthy = rows.filter((r) => r.delivery_id && !okIds.has(r.endpoint_id));
  const givenUp = unhealthy.filter((r) => r.status !== 'pending');
  const attempted = unhealthy.filter((r) => (r.attempts ?? 0) > 0).length;
  const outbox = new Set(rows.map((r) => r.outbox_id)).size;
  const hitsPerId = new Map<string, number>();
  for (const h of okHits) hitsPerId.set(String(h.headers['x-webhook-id']), (hitsPerId.get(String(h.headers['x-webhook-id'])) ?? 0) + 1);
  const repeats = [...hitsPerId.values()].filter((n) => n > 1).length;
  return result(
    missing.length === 0 && notDelivered.length === 0 && givenUp.length === 0,
    `${outbox} outbox events × subscribed endpoints = ${rows.length} deliveries expected: ${missing.length} never created, ` +
      `${healthy.length - notDelivered.length}/${healthy.length} to the healthy receiver delivered, ${givenUp.length} to the failing/hanging ones given up ` +
      `(${unhealthy.length - givenUp.length} pending, ${attempted} attempted at least once); ${repeats} deliveries reached the healthy receiver more than once (same X-Webhook-Id, allowed)`,
    [
      ...missing.slice(0, 5).map((r) => ({ missing: r })),
      ...notDelivered.slice(0, 5).map((r) => ({ notDelivered: r })),
      ...givenUp.slice(0, 5).map((r) => ({ givenUp: r })),
    ],
  );
}

// (g) -------------------------------------------------------------------------------------------------

function tenantIsolation({ report }: Input): CheckResult {
  const foreign: { asking: string; path: string; id: string; owner: string | null }[] = [];
  let checked = 0;
  for (const [tenantId, reads] of Object.entries(report.seen)) {
    for (const r of reads) {
      for (const id of r.ids) {
        checked++;
        const owner = id.startsWith('tenant:') ? id.slice(7) : (report.owners[id] ?? null);
        if (owner !== tenantId) foreign.push({ asking: tenantId, path: r.path, id, owner });
      }
    }
  }
  return result(
    foreign.length === 0,
    `${checked} customer ids in read and export answers: ${foreign.length} not the asking tenant's (${foreign.filter((f) => f.owner === null).length} of no known tenant)`,
    foreign.slice(0, 10),
  );
}

// The doomed workspace --------------------------------------------------------------------------------

async function workspacePurged({ report, pool }: Input): Promise<CheckResult> {
  const id = report.doomedTenantId;
  const requested = report.milestones.find((m) => m.what.startsWith('deletion of the doomed'));
  const tables = [
    'customers',
    'signals',
    'inbox_events',
    'invoices',
    'subscriptions',
    'outbox_events',
    'webhook_deliveries',
    'scoring_queue',
    'api_keys',
  ];
  const left: Record<string, number> = {};
  for (const t of tables) {
    const { rows } = await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${t} WHERE tenant_id = $1`, [id]);
    if (rows[0]!.n) left[t] = rows[0]!.n;
  }
  const tenant = (await pool.query('SELECT 1 FROM tenants WHERE id = $1', [id])).rowCount ?? 0;
  const record = (await pool.query('SELECT 1 FROM deleted_workspaces WHERE tenant_id = $1', [id])).rowCount ?? 0;
  const ok = requested?.status === 202 && tenant === 0 && record === 1 && Object.keys(left).length === 0;
  return result(
    ok,
    `deletion requested → ${requested?.status ?? 'not reached'}; tenant row ${tenant ? 'still there' : 'gone'}, deleted_workspaces record ${record ? 'written' : 'missing'}, rows left: ${JSON.stringify(left)}`,
  );
}

function harnessClean({ report }: Input): CheckResult {
  return result(
    report.harnessErrors.length === 0,
    `${report.harnessErrors.length} errors in the harness itself`,
    report.harnessErrors.slice(0, 5),
  );
}
