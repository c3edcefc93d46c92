import type { SignalKind } from '../scoring/signal-kinds.ts';
import type pg from 'pg';
import type { Db } from '../db/prisma.ts';
import { onPg } from '../db/sql.ts';
import { createAccountService } from '../services/accounts.ts';
import { operator } from '../services/audit.ts';
import { customerRows, identityRows } from '../services/customer-rows.ts';
import { createScorer } from '../scoring/recompute.ts';
import { insertInvoice } from '../services/invoices.ts';
import { recordSignals, type SignalInput } from '../scoring/signals.ts';
import { saveSubscription } from '../services/subscriptions.ts';

/** How a demo customer behaves over the last 90 days; the scoring engine makes the rest of it. */
interface Profile {
  name: string;
  domain: string;
  /** Product events per day: [days 90-31 ago, days 30-0 ago]. */
  usage: [number, number];
  /** Usage stopped this many days ago. */
  quietFor?: number;
  users: number;
  chatPerDay?: number;
  tone?: number;
  openConversations?: number;
  rating?: number;
  failedPayments?: number[];
  overdueDays?: number;
  subscription: { status: string; seats: number; seatsBefore?: number; trialEndsIn?: number };
  leads?: number;
}

const PROFILES: Profile[] = [
  {
    name: 'Northwind Traders',
    domain: 'northwind.example',
    usage: [8, 10],
    users: 9,
    chatPerDay: 3,
    tone: 0.5,
    rating: 5,
    subscription: { status: 'active', seats: 24, seatsBefore: 20 },
    leads: 2,
  },
  {
    name: 'Globex',
    domain: 'globex.example',
    usage: [5, 5],
    users: 6,
    chatPerDay: 1,
    tone: 0.3,
    subscription: { status: 'active', seats: 12 },
  },
  { name: 'Initech', domain: 'initech.example', usage: [0, 4], users: 3, subscription: { status: 'trialing', seats: 5, trialEndsIn: 3 } },
  {
    name: 'Umbrella Analytics',
    domain: 'umbrella.example',
    usage: [7, 1.2],
    users: 4,
    chatPerDay: 0.5,
    tone: 0,
    subscription: { status: 'active', seats: 15 },
  },
  {
    name: 'Hooli',
    domain: 'hooli.example',
    usage: [4, 4],
    users: 5,
    chatPerDay: 1,
    tone: -0.5,
    openConversations: 5,
    rating: 2,
    subscription: { status: 'active', seats: 30 },
  },
  {
    name: 'Vandelay Industries',
    domain: 'vandelay.example',
    usage: [3, 3],
    users: 3,
    failedPayments: [9, 2],
    subscription: { status: 'past_due', seats: 8 },
  },
  {
    name: 'Stark Logistics',
    domain: 'stark.example',
    usage: [6, 5],
    users: 7,
    chatPerDay: 0.5,
    tone: 0.2,
    overdueDays: 20,
    subscription: { status: 'active', seats: 18 },
  },
  { name: 'Wayne Biotech', domain: 'wayne.example', usage: [5, 5], quietFor: 24, users: 4, subscription: { status: 'active', seats: 10 } },
  {
    name: 'Acme Robotics',
    domain: 'acme.example',
    usage: [3, 2.5],
    users: 3,
    chatPerDay: 0.3,
    tone: 0.1,
    subscription: { status: 'active', seats: 8, seatsBefore: 11 },
  },
  {
    name: 'Soylent Foods',
    domain: 'soylent.example',
    usage: [2, 2],
    quietFor: 45,
    users: 2,
    failedPayments: [20, 12, 5],
    subscription: { status: 'past_due', seats: 4, seatsBefore: 6 },
  },
  {
    name: 'Cyberdyne Cloud',
    domain: 'cyberdyne.example',
    usage: [6, 7],
    users: 8,
    chatPerDay: 4,
    tone: 0.4,
    subscription: { status: 'active', seats: 16 },
  },
  {
    name: 'Tyrell Labs',
    domain: 'tyrell.example',
    usage: [4, 1],
    users: 3,
    chatPerDay: 0.7,
    tone: -0.45,
    rating: 3,
    subscription: { status: 'past_due', seats: 9, seatsBefore: 12 },
  },
];

export interface DemoTenant {
  tenantId: string;
  apiKey: string;
  email: string;
  password: string;
}

const DAY = 86_400_000;
const HISTORY_DAYS = 30;

/** Deterministic spread, so every demo looks the same. */
function lcg(seed: number) {
  return () => (seed = (seed * 1664525 + 1013904223) % 4294967296) / 4294967296;
}

function signalsFor(p: Profile, tenantId: string, customerId: string, now: number, r: () => number): SignalInput[] {
  const out: SignalInput[] = [];
  const at = (daysAgo: number) => new Date(now - daysAgo * DAY - r() * 3_600_000);
  const add = (kind: SignalKind, daysAgo: number, extra: Partial<SignalInput> = {}) =>
    out.push({ tenantId, customerId, source: kind.split('.')[0]!, kind, occurredAt: at(daysAgo), ...extra });
  for (let d = 89; d >= 0; d--) {
    if (p.quietFor !== undefined && d < p.quietFor) continue;
    const rate = d >= 30 ? p.usage[0] : p.usage[1];
    for (let n = Math.floor(rate + r()); n > 0; n--) {
      add('usage.event', d, { source: 'api', attributes: { event: 'report.viewed', user_id: `user-${Math.floor(r() * p.users)}` } });
    }
    for (let n = Math.floor((p.chatPerDay ?? 0) + r()); n > 0 && (p.quietFor === undefined || d >= p.quietFor); n--) {
      add('chat.message', d, {
        source: 'slack',
        sentiment: Math.max(-1, Math.min(1, (p.tone ?? 0) + (r() - 0.5) * 0.4)),
        attributes: { actor: `member-${Math.floor(r() * 5)}` },
      });
    }
  }
  for (let i = 0; i < (p.openConversations ?? 0); i++) {
    add('support.conversation_opened', 2 + i * 2, {
      source: 'intercom',
      sentiment: p.tone ?? 0,
      attributes: { conversation_id: `conv-${customerId}-${i}` },
    });
  }
  if (p.rating !== undefined) {
    add('support.conversation_opened', 40, { source: 'intercom', attributes: { conversation_id: `conv-${customerId}-rated` } });
    // Answered within the working day, closed two days later.
    add('support.agent_replied', 39.8, { source: 'intercom', attributes: { conversation_id: `conv-${customerId}-rated` } });
    add('support.conversation_closed', 38, { source: 'intercom', attributes: { conversation_id: `conv-${customerId}-rated` } });
    add('support.rating', 38, { source: 'intercom', value: p.rating });
  }
  for (const d of p.failedPayments ?? []) add('billing.payment_failed', d, { source: 'stripe' });
  for (const d of [75, 45, 15])
    if (!p.failedPayments?.length && p.subscription.status === 'active') add('billing.invoice_paid', d, { source: 'stripe', value: 4900 });
  if (p.subscription.seatsBefore !== undefined) {
    add('growth.seats', 35, { source: 'stripe', value: p.subscription.seats, attributes: { previous: p.subscription.seatsBefore } });
  }
  for (let i = 0; i < (p.leads ?? 0); i++) add('ads.lead', 5 + i * 7, { source: 'meta_ads' });
  return out;
}

/**
 * A Scale-plan demo tenant whose customers have 90 days of realistic activity, payments, chat and
 * support, scored by the engine for each of the last 30 days, so history, trends and alerts are real.
 */
export async function seedDemoTenant(db: Db, pool: pg.Pool, password: string, now = Date.now()): Promise<DemoTenant> {
  const accounts = createAccountService({ prisma: db });
  const { tenant, apiKey: secret } = await accounts.createTenant({ name: 'Demo Co', plan: 'scale', keyName: 'Demo key' });
  const email = 'demo@example.com';
  await accounts.createUser(operator(tenant.id), { email, password, role: 'owner' });
  const sql = onPg(pool);

  const r = lcg(7);
  const ids: string[] = [];
  for (const [i, p] of PROFILES.entries()) {
    const created = new Date(now - 120 * DAY);
    const customer = await customerRows.insert(sql, {
      tenantId: tenant.id,
      name: p.name,
      domain: p.domain,
      email: `ops@${p.domain}`,
      externalId: `demo-${i + 1}`,
      createdAt: created,
    });
    await identityRows.insert(sql, tenant.id, customer.id, [
      { provider: 'stripe', externalId: `cus_demo${String(i + 1).padStart(4, '0')}` },
    ]);
    ids.push(customer.id);
    await saveSubscription(
      sql,
      { tenantId: tenant.id, provider: 'stripe', externalId: `sub_demo${i + 1}`, account: `cus_demo${String(i + 1).padStart(4, '0')}` },
      undefined,
      {
        status: p.subscription.status,
        seats: p.subscription.seats,
        mrrMinor: BigInt(p.subscription.seats * 2900),
        currency: 'usd',
        trialEnd: p.subscription.trialEndsIn === undefined ? null : new Date(now + p.subscription.trialEndsIn * DAY),
        planId: null,
        canceledAt: null,
      },
      customer.id,
      created,
      created,
    );
    if (p.overdueDays !== undefined) {
      await insertInvoice(sql, {
        tenantId: tenant.id,
        customerId: customer.id,
        provider: 'stripe',
        externalId: `in_demo${i + 1}`,
        status: 'overdue',
        total: BigInt(p.subscription.seats * 2900),
        currency: 'usd',
        dueAt: new Date(now - p.overdueDays * DAY),
        overdueAt: new Date(now - p.overdueDays * DAY),
        createdAt: new Date(now - (p.overdueDays + 30) * DAY),
      });
    }
    await recordSignals(sql, signalsFor(p, tenant.id, customer.id, now, r));
  }

  // The engine scores each past day as of that day, oldest first, so trends have their history.
  const scorer = createScorer(pool, customerRows.saveScores);
  const claims = ids.map((customerId) => ({ customerId, version: 0 }));
  for (let d = HISTORY_DAYS; d >= 0; d--) await scorer.recompute(claims, new Date(now - d * DAY));
  return { tenantId: tenant.id, apiKey: secret, email, password };
}
