// Synthetic cohorts: each customer has four hidden risk drivers (standard normal) from which everything
// the service sees is drawn with noise (product events, Stripe billing, Intercom conversations). Customers
// churn over what they went through: the true churn log-odds weigh each driver's realised pressure (usage
// that fell or stopped, seats cut and left idle, failed and overdue payments, many angry and slowly
// answered conversations), standardised over the cohort, plus a little that no data shows. The true
// probabilities are the upper bound: the best any model could do on what it is sent.

export type Driver = 'disengagement' | 'seats' | 'billing' | 'support';
export const DRIVERS: Driver[] = ['disengagement', 'seats', 'billing', 'support'];

export interface Scenario {
  name: string;
  description: string;
  customers: number;
  /** The share of customers whose outcome the tenant labels (the rest are scored and measured). */
  labelled: number;
  /** The target share of churners. */
  churnRate: number;
  /** Log-odds per standard deviation of each driver. */
  weights: Record<Driver, number>;
  /** The share of customers that have Stripe billing and Intercom support (1 when left out). */
  billingCoverage?: number;
  supportCoverage?: number;
  /** The share of customers whose team chat (a Slack workspace) the tenant connected (0 when left out). */
  chatCoverage?: number;
  /** Log-odds added from the first outcome to the last (half before, half after): churn pressure that grows over time. */
  drift?: number;
  /**
   * How churn follows from what a customer went through: `pressure` (the default) weighs each driver's realised
   * pressure, graded and standardised; `thresholds` is a different process over the same histories, of steps and
   * interactions (see thresholdLogit), for measuring a model on a process it was not designed around.
   */
  outcome?: 'pressure' | 'thresholds';
  seed: number;
}

export interface UsageEvent {
  day: number;
  user: string;
}
export interface SeatChange {
  day: number;
  seats: number;
  status?: 'active' | 'past_due';
}
export interface Conversation {
  day: number;
  text: string;
  firstResponseHours: number | null;
  closedAfterDays: number | null;
  rating: number | null;
}
export interface ChatMessage {
  day: number;
  user: string;
}
export interface Invoice {
  day: number;
  failedDays: number[];
  paid: boolean;
  overdue: boolean;
}

/** One synthetic customer: its outcome, its true probability, and the history the service is sent. */
export interface SyntheticCustomer {
  index: number;
  truth: number;
  churned: boolean;
  drivers: Record<Driver, number>;
  usage: UsageEvent[];
  billing: { seats0: number; unitMinor: number; changes: SeatChange[]; invoices: Invoice[] } | null;
  support: Conversation[] | null;
  /** Messages in the customer's shared Slack channel, or null without chat. */
  chat: ChatMessage[] | null;
}

/** mulberry32: a small deterministic generator, so a scenario is the same cohort on every run. */
export function random(seed: number) {
  let s = seed | 0;
  return () => {
    s = (s + 0x6d2b79f5) | 0;
    let x = Math.imul(s ^ (s >>> 15), 1 | s);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

type Rand = () => number;
const normal = (r: Rand) => Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
const poisson = (r: Rand, mean: number) => {
  // Knuth's method; means here stay small.
  const l = Math.exp(-Math.min(mean, 30));
  let k = 0;
  for (let p = r(); p > l; p *= r()) k++;
  return k;
};
const sigmoid = (z: number) => 1 / (1 + Math.exp(-z));
const clamp = (x: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, x));

// What customers write to support, from calm to angry (the service scores it with AFINN).
const TEXTS = [
  'Thanks, quick question about exporting a report, great product',
  'How do I add a colleague to the workspace?',
  'The export seems slow today, could you check?',
  'The dashboard is broken again and this is a problem for us',
  'This is terrible, the sync failed again and we are frustrated and angry',
  'Awful experience, nothing works, we are disappointed and considering cancelling',
];

/** The intercept that makes the cohort's mean probability the target churn rate (bisection). */
function interceptFor(logits: number[], rate: number): number {
  let lo = -15;
  let hi = 15;
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2;
    const mean = logits.reduce((s, z) => s + sigmoid(mid + z), 0) / logits.length;
    if (mean < rate) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

/** Days are relative to now (negative is the past); the histories reach 60 days back at most, 85 for billing. */
export function generateCohort(s: Scenario): SyntheticCustomer[] {
  const r = random(s.seed);
  const drivers = Array.from(
    { length: s.customers },
    () => Object.fromEntries(DRIVERS.map((d) => [d, normal(r)])) as Record<Driver, number>,
  );
  const customers = drivers.map((d, index) => {
    // A nuisance: how big and busy the account is, unrelated to churn.
    const size = normal(r);
    const seats0 = clamp(Math.round(Math.exp(2 + 0.6 * size + 0.3 * normal(r))), 2, 150);
    const seatsNow = clamp(Math.round(seats0 * Math.exp(-0.35 * d.seats + 0.1 * normal(r))), 1, 300);
    const activeShare = sigmoid(1.1 - 0.9 * d.seats + 0.4 * normal(r));
    const activeUsers = Math.max(1, Math.round(seatsNow * activeShare));

    // Usage: a steady daily rate over the month before last, then a trend driven by disengagement; the
    // most disengaged stop altogether some days ago.
    const rate = Math.min(6, activeUsers * 0.25 * Math.exp(0.4 * normal(r)));
    const trend = clamp(Math.exp(-0.7 * d.disengagement + 0.25 * normal(r)), 0.05, 2);
    const stoppedDaysAgo = d.disengagement > 1.2 && r() < 0.6 ? 3 + Math.floor(r() * 25) : 0;
    const usage: UsageEvent[] = [];
    for (let day = -60; day < 0; day++) {
      const inRecent = day >= -30;
      // The trend sets in gradually over the recent month.
      const factor = inRecent ? 1 + (trend - 1) * ((day + 31) / 30) : 1;
      if (stoppedDaysAgo && day >= -stoppedDaysAgo) continue;
      const n = Math.min(5, poisson(r, rate * factor));
      for (let k = 0; k < n; k++) usage.push({ day: day + r() * 0.9, user: `u${Math.floor(r() * activeUsers)}` });
    }

    const hasBilling = r() < (s.billingCoverage ?? 1);
    let billing: SyntheticCustomer['billing'] = null;
    if (hasBilling) {
      const changes: SeatChange[] = [];
      if (seatsNow !== seats0) changes.push({ day: -10 - Math.floor(r() * 60), seats: seatsNow });
      const failures = poisson(r, Math.exp(-1.4 + 1.0 * d.billing));
      const invoices: Invoice[] = [-75, -45, -15].map((day) => ({ day, failedDays: [], paid: true, overdue: false }));
      for (let k = 0; k < failures; k++) {
        // Trouble is more recent the larger the driver.
        const ago = 2 + Math.floor(80 * Math.pow(r(), 1 + Math.max(0, d.billing)));
        const inv = invoices.findLast((i) => i.day <= -ago) ?? invoices[0]!;
        inv.failedDays.push(-ago);
      }
      const last = invoices.at(-1)!;
      if (d.billing > 0.8 && r() < 0.6) {
        last.paid = false;
        last.overdue = true;
      }
      if (d.billing > 1.4 && r() < 0.7) changes.push({ day: -3 - Math.floor(r() * 8), seats: seatsNow, status: 'past_due' });
      billing = { seats0, unitMinor: 2000 + Math.floor(r() * 4) * 1000, changes: changes.sort((a, b) => a.day - b.day), invoices };
    }

    const hasSupport = r() < (s.supportCoverage ?? 1);
    let support: Conversation[] | null = null;
    if (hasSupport) {
      const n = Math.min(8, poisson(r, Math.exp(0.1 + 0.3 * size + 0.55 * d.support)));
      support = Array.from({ length: n }, () => {
        const tone = clamp(Math.floor(TEXTS.length * sigmoid(-0.6 + 1.3 * d.support + 0.8 * normal(r))), 0, TEXTS.length - 1);
        const answered = r() < sigmoid(2.5 - 0.8 * d.support);
        const closed = r() < sigmoid(1.6 - 0.9 * d.support);
        const rated = r() < 0.5;
        return {
          day: -1 - r() * 58,
          text: TEXTS[tone]!,
          firstResponseHours: answered ? Math.exp(1.2 + 0.9 * d.support + 0.6 * normal(r)) : null,
          closedAfterDays: closed ? 0.5 + r() * 3 : null,
          rating: rated ? clamp(Math.round(4.2 - 1.0 * d.support + 0.7 * normal(r)), 1, 5) : null,
        };
      });
    }
    return { index, truth: 0, churned: false, drivers: d, usage, billing, support, chat: chatHistory(s, index, d, activeUsers) };
  });
  // Each driver's realised pressure, standardised over the customers that have the source; a customer
  // without it still feels the pressure, through its hidden driver.
  const pressures = DRIVERS.map((k) => {
    const raw = customers.map((c) => pressure(c, k));
    const known = raw.filter((v): v is number => v !== null);
    const mean = known.reduce((a, b) => a + b, 0) / known.length;
    const sd = Math.sqrt(known.reduce((a, b) => a + (b - mean) ** 2, 0) / known.length) || 1;
    return raw.map((v, i) => (v === null ? drivers[i]![k] : (v - mean) / sd));
  });
  const hidden = customers.map(() => 0.5 * normal(r));
  const logits = customers.map(
    (c, i) =>
      hidden[i]! + (s.outcome === 'thresholds' ? thresholdLogit(c) : DRIVERS.reduce((z, k, j) => z + s.weights[k] * pressures[j]![i]!, 0)),
  );
  const b0 = interceptFor(logits, s.churnRate);
  for (const c of customers) {
    const shift = (s.drift ?? 0) * (c.index / Math.max(1, s.customers - 1) - 0.5);
    c.truth = sigmoid(b0 + shift + logits[c.index]!);
    c.churned = r() < c.truth;
  }
  return customers;
}

/**
 * Team chat: a customer's people talk in a shared channel at a rate of their own, which fades over the
 * recent month with disengagement (noisily: chat is a second, weaker view of the same driver), and the most
 * disengaged fall silent. Drawn from a generator of its own, so adding chat leaves every other part of a
 * cohort as it was; it feeds no driver's pressure, so the outcomes do not change either.
 */
function chatHistory(s: Scenario, index: number, d: Record<Driver, number>, activeUsers: number): ChatMessage[] | null {
  const r = random(s.seed * 100_003 + index);
  if (r() >= (s.chatCoverage ?? 0)) return null;
  const rate = 0.15 * Math.exp(0.5 * normal(r));
  const trend = clamp(Math.exp(-0.6 * d.disengagement + 0.45 * normal(r)), 0.05, 2);
  const silentDaysAgo = d.disengagement + 0.5 * normal(r) > 1.2 && r() < 0.5 ? 5 + Math.floor(r() * 20) : 0;
  const people = Math.max(1, Math.round(activeUsers * sigmoid(-0.3 * d.disengagement + 0.5 * normal(r))));
  const chat: ChatMessage[] = [];
  for (let day = -60; day < 0; day++) {
    const factor = day >= -30 ? 1 + (trend - 1) * ((day + 31) / 30) : 1;
    if (silentDaysAgo && day >= -silentDaysAgo) continue;
    const n = Math.min(6, poisson(r, rate * factor));
    for (let k = 0; k < n; k++) chat.push({ day: day + r() * 0.9, user: `U${index}x${Math.floor(r() * people)}` });
  }
  return chat;
}

/** What a customer went through on one driver (larger is worse), or null without the data source. */
function pressure(c: SyntheticCustomer, k: Driver): number | null {
  switch (k) {
    case 'disengagement': {
      const recent = c.usage.filter((u) => u.day >= -30).length;
      const before = c.usage.length - recent;
      const last = c.usage.reduce((m, u) => Math.max(m, u.day), -90);
      return -Math.log((recent + 1) / (before + 1)) + 0.5 * Math.log1p(-last);
    }
    case 'seats': {
      if (!c.billing) return null;
      const now = c.billing.changes.at(-1)?.seats ?? c.billing.seats0;
      const users = new Set(c.usage.filter((u) => u.day >= -30).map((u) => u.user)).size;
      return -Math.log(now / c.billing.seats0) + (1 - Math.min(1, users / now));
    }
    case 'billing': {
      if (!c.billing) return null;
      const failed = c.billing.invoices.flatMap((i) => i.failedDays);
      const overdue = c.billing.invoices.some((i) => i.overdue) ? 1 : 0;
      const pastDue = c.billing.changes.some((ch) => ch.status === 'past_due') ? 1 : 0;
      return Math.log1p(failed.length) + Math.log1p(failed.filter((d) => d >= -30).length) + overdue + pastDue;
    }
    case 'support': {
      if (!c.support) return null;
      const n = c.support.length;
      if (n === 0) return 0;
      const tone = c.support.reduce((s, v) => s + TEXTS.indexOf(v.text), 0) / n;
      const wait = c.support.reduce((s, v) => s + Math.log1p(v.firstResponseHours ?? 24 * -v.day), 0) / n;
      return Math.log1p(n) * (0.5 + tone / 3) + 0.3 * wait;
    }
  }
}

/**
 * Churn log-odds of the `thresholds` process: steps and interactions instead of graded pressure. A customer churns
 * when the product fell out of its routine (few active days in the last month, whatever the trend), when seats were
 * cut and the remaining ones sit idle (either alone counts for nothing), when a recent failed payment is still unpaid
 * (a failure that was recovered counts little), when conversations went unanswered for two days (however calm their
 * words), and small accounts churn more.
 */
function thresholdLogit(c: SyntheticCustomer): number {
  const recent = c.usage.filter((u) => u.day >= -30);
  const activeDays = new Set(recent.map((u) => Math.floor(u.day))).size;
  let z = activeDays < 6 ? 3 : activeDays < 12 ? 1.2 : 0;
  if (c.billing) {
    const b = c.billing;
    const now = b.changes.at(-1)?.seats ?? b.seats0;
    const users = new Set(recent.map((u) => u.user)).size;
    if (now < 0.8 * b.seats0 && users / now < 0.5) z += 3;
    const unpaid = b.invoices.some((i) => !i.paid) || b.changes.some((ch) => ch.status === 'past_due');
    const recentFailure = b.invoices.some((i) => i.failedDays.some((d) => d >= -30));
    z += unpaid && recentFailure ? 3.5 : unpaid || recentFailure ? 0.8 : 0;
    if (b.seats0 <= 4) z += 1;
  }
  if (c.support) z += 1.6 * Math.min(2, c.support.filter((v) => v.firstResponseHours === null || v.firstResponseHours > 48).length);
  return z;
}
