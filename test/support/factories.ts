import { EVENTS, type EventName } from '../../src/outbox/events/registry.ts';
import type { OutboxInput } from '../../src/outbox/events/enqueue.ts';
import { randomUUID } from 'node:crypto';
import { issueApiKey } from '../../src/services/api-keys.ts';
import { hashPassword } from '../../src/auth/passwords.ts';
import type { Sessions } from '../../src/auth/sessions.ts';
import type { Db } from '../../src/db/prisma.ts';
import { overallHealth } from '../../src/scoring/overall-score.ts';
import type { SecretBox } from '../../src/crypto/secret-box.ts';
import { operator } from '../../src/services/audit.ts';
import { createInboundSecretStore } from '../../src/services/integrations.ts';
import { DEFAULT_WEIGHTS, riskLevelFor } from '../../src/scoring/dimensions.ts';

type Plan = 'free' | 'starter' | 'growth' | 'scale';
type Role = 'owner' | 'admin' | 'member' | 'viewer';

const uniq = () => randomUUID().slice(0, 8);

export async function tenantWithKey(db: Db, plan: Plan = 'scale') {
  const tenant = await db.tenant.create({ data: { name: `Tenant ${uniq()}`, plan } });
  const { key, secret } = await issueApiKey(db, { tenantId: tenant.id, name: 'test key' });
  return { tenant, tenantId: tenant.id, apiKey: secret, apiKeyId: key.id };
}

export async function userWithSession(
  db: Db,
  sessions: Sessions,
  tenantId: string,
  role: Role = 'admin',
  password = 'correct horse battery',
) {
  const email = `user-${uniq()}@example.com`;
  const user = await db.user.create({ data: { tenantId, email, role, passwordHash: await hashPassword(password) } });
  const { token } = await sessions.issue({ userId: user.id, tenantId, role });
  return { user, email, password, token };
}

export async function customer(
  db: Db,
  tenantId: string,
  data: Partial<{ name: string; externalId: string; domain: string; email: string; createdAt: Date }> = {},
) {
  return db.customer.create({ data: { tenantId, name: data.name ?? `Customer ${uniq()}`, ...data } });
}

/** A customer with a computed health snapshot and churn prediction, and the denormalised list fields set. */
export async function scoredCustomer(
  db: Db,
  tenantId: string,
  scores: { usage: number | null; engagement: number | null; support: number | null; billing: number | null; growth: number | null },
  probability = 0.2,
) {
  const h = overallHealth(
    Object.fromEntries(
      Object.entries(scores).map(([k, v]) => [k, { score: v, signals: [{ key: `${k}_signal`, label: `${k} signal`, value: v }] }]),
    ) as never,
    DEFAULT_WEIGHTS,
  );
  const c = await db.customer.create({
    data: {
      tenantId,
      name: `Scored ${uniq()}`,
      healthScore: h.score,
      healthStatus: h.status,
      churnProbability: probability,
      churnRiskLevel: riskLevelFor(probability),
    },
  });
  await db.healthSnapshot.create({
    data: {
      tenantId,
      customerId: c.id,
      score: h.score ?? 0,
      status: h.status ?? 'at_risk',
      dimensions: h.dimensions as object[],
      trend7d: -3,
      trend30d: 5,
      weakestDimension: h.weakestDimension,
    },
  });
  await db.churnPrediction.create({
    data: {
      tenantId,
      customerId: c.id,
      probability,
      riskLevel: riskLevelFor(probability),
      riskFactors: [{ code: 'low_usage', description: 'Usage fell', impact: 0.7 }],
      recommendedInterventions: [{ code: 'training', title: 'Offer training', description: 'Book a session', priority: 'high' }],
      modelVersion: 'test-v1',
    },
  });
  return { customer: c, health: h };
}

export async function alert(
  db: Db,
  tenantId: string,
  customerId: string,
  data: Partial<{
    alertType: 'health_drop' | 'churn_risk' | 'payment_failed' | 'inactivity';
    severity: 'low' | 'medium' | 'high' | 'critical';
    status: 'open' | 'acknowledged' | 'snoozed' | 'resolved';
  }> = {},
) {
  return db.alert.create({
    data: {
      tenantId,
      customerId,
      alertType: data.alertType ?? 'health_drop',
      severity: data.severity ?? 'high',
      status: data.status ?? 'open',
      title: 'Health dropped',
      message: 'The score fell by 20 points in 7 days.',
      details: { drop: 20 },
    },
  });
}

const DAY_MS = 86_400_000;
/** A time `days` ago (fractions allowed). */
export const daysAgo = (days: number, from = Date.now()) => new Date(from - days * DAY_MS);

export interface SignalSpec {
  kind: string;
  /** Days before now; default just now. */
  daysAgo?: number;
  value?: number;
  sentiment?: number | null;
  attributes?: Record<string, unknown>;
  source?: string;
}

/** Observations about a customer, written as the ingestion pipeline writes them (the triggers queue a recompute). */
export async function signals(db: Db, tenantId: string, customerId: string, specs: SignalSpec[]) {
  await db.signal.createMany({
    data: specs.map((s) => ({
      tenantId,
      customerId,
      source: s.source ?? s.kind.split('.')[0]!,
      kind: s.kind,
      occurredAt: daysAgo(s.daysAgo ?? 0),
      value: s.value ?? 1,
      sentiment: s.sentiment ?? null,
      attributes: (s.attributes ?? {}) as object,
    })),
  });
}

/** `n` signals of a kind spread evenly over the last `days` days. */
export const spread = (kind: string, n: number, days: number, extra: Partial<SignalSpec> = {}): SignalSpec[] =>
  Array.from({ length: n }, (_, i) => ({ kind, daysAgo: (i * days) / Math.max(1, n) + 0.01, ...extra }));

export async function invoice(
  db: Db,
  tenantId: string,
  customerId: string,
  data: { status: 'open' | 'sent' | 'paid' | 'overdue' | 'void'; dueDaysAgo?: number; overdueDaysAgo?: number },
) {
  return db.invoice.create({
    data: {
      tenantId,
      customerId,
      provider: 'stripe',
      externalId: `in_${uniq()}`,
      status: data.status,
      totalMinor: 4900n,
      currency: 'usd',
      dueAt: data.dueDaysAgo === undefined ? null : daysAgo(data.dueDaysAgo),
      overdueAt: data.overdueDaysAgo === undefined ? null : daysAgo(data.overdueDaysAgo),
    },
  });
}

export async function subscription(
  db: Db,
  tenantId: string,
  customerId: string,
  data: { status: string; trialEndsInDays?: number; seats?: number; mrrMinor?: number },
) {
  return db.subscription.create({
    data: {
      tenantId,
      customerId,
      provider: 'stripe',
      externalId: `sub_${uniq()}`,
      status: data.status,
      trialEnd: data.trialEndsInDays === undefined ? null : daysAgo(-data.trialEndsInDays),
      seats: data.seats ?? null,
      mrrMinor: data.mrrMinor === undefined ? null : BigInt(data.mrrMinor),
      currency: 'usd',
      lastEventAt: new Date(),
    },
  });
}

/** A day of history as the daily pass would have written it. */
export async function historyPoint(
  db: Db,
  tenantId: string,
  customerId: string,
  daysBack: number,
  point: {
    score: number;
    usage?: number | null;
    engagement?: number | null;
    support?: number | null;
    billing?: number | null;
    growth?: number | null;
  },
) {
  const day = new Date(`${daysAgo(daysBack).toISOString().slice(0, 10)}T00:00:00.000Z`);
  await db.healthHistory.create({
    data: {
      tenantId,
      customerId,
      day,
      score: point.score,
      status: point.score >= 75 ? 'healthy' : point.score >= 50 ? 'neutral' : 'at_risk',
      usage: point.usage ?? null,
      engagement: point.engagement ?? null,
      support: point.support ?? null,
      billing: point.billing ?? null,
      growth: point.growth ?? null,
      computedAt: day,
    },
  });
}

/** An outbox event of the given type with the registry's example payload for the tenant. */
export const exampleEvent = (tenantId: string, type: EventName = 'invoice.created', dedupKey = `${type}:${randomUUID()}`): OutboxInput =>
  ({ tenantId, type, payload: { ...EVENTS[type].example, tenant_id: tenantId }, dedupKey }) as OutboxInput;

/**
 * Customers labelled churned or retained, half each, whose only signal is their last use: the churned
 * stopped 40–46 days ago, the retained used the product 1–5 days ago. Inactivity drives churn, so a
 * model trained on them is worth using.
 */
export async function inactivityLabelledCustomers(db: Db, tenantId: string, n = 60) {
  for (let i = 0; i < n; i++) {
    const id = (await customer(db, tenantId)).id;
    const churned = i % 2 === 0;
    await db.signal.create({
      data: { tenantId, customerId: id, source: 'api', kind: 'usage.event', occurredAt: daysAgo(churned ? 40 + (i % 7) : 1 + (i % 5)) },
    });
    await db.churnOutcome.create({ data: { tenantId, customerId: id, churned, at: daysAgo(0.5), source: 'api' } });
  }
}

/**
 * A tenant connected to Stripe that has heard from it `count` times, every `everyHours` hours, the last at
 * `last`: applied events, for what is learned from an integration's cadence.
 */
export async function tenantHearingStripe(db: Db, box: SecretBox, opts: { count: number; everyHours: number; last: Date }) {
  const w = await tenantWithKey(db);
  await createInboundSecretStore(db, box, { cacheMs: 0 }).put({ tenantId: w.tenantId, provider: 'stripe' }, operator(w.tenantId));
  await db.inboxEvent.createMany({
    data: Array.from({ length: opts.count }, (_, i) => ({
      tenantId: w.tenantId,
      provider: 'stripe',
      dedupKey: `evt_${randomUUID()}`,
      eventType: 'invoice.paid',
      body: '{}',
      status: 'processed' as const,
      receivedAt: new Date(opts.last.getTime() - i * opts.everyHours * 3_600_000),
    })),
  });
  return w;
}
