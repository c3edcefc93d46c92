import type { AlertSeverity, AlertStatus, AlertType } from '../contract/enums.ts';
import type { DimensionKey } from './dimensions.ts';
import { daysBetween, type Features } from './features.ts';
import { trialDaysLeft } from './dimension-scores.ts';
import type { Prediction } from './churn-model.ts';
import { plural } from './numbers.ts';

export type { AlertType };
export type Severity = AlertSeverity;

export const SEVERITY_RANK: Record<Severity, number> = { low: 0, medium: 1, high: 2, critical: 3 };

/** An alert a rule wants open now; `null` means its condition is clear. */
export interface Firing {
  severity: Severity;
  title: string;
  message: string;
  details: Record<string, unknown>;
}

export interface RuleInput {
  name: string;
  features: Features;
  score: number | null;
  change7d: number | null;
  weakest: DimensionKey | null;
  /** Days since the customer last did anything, or null when activity is not tracked for it. */
  daysInactive: number | null;
  prediction: Prediction | null;
}

const PAYMENT_WINDOW_DAYS = 14;

// The rules of docs/scoring.md (Alerts), one per alert type.
const RULES: Record<AlertType, (r: RuleInput) => Firing | null> = {
  health_drop: (r) => {
    if (r.score === null || r.change7d === null || r.change7d > -10) return null;
    const drop = -Math.round(r.change7d);
    const severity: Severity = drop >= 35 ? 'critical' : drop >= 25 ? 'high' : drop >= 15 ? 'medium' : 'low';
    return {
      severity,
      title: `${r.name}: health fell ${drop} points`,
      message: `Health fell from ${r.score + drop} to ${r.score} in 7 days${r.weakest ? `; the weakest dimension is ${r.weakest}` : ''}.`,
      details: { score: r.score, change_7d: -drop, weakest_dimension: r.weakest },
    };
  },
  churn_risk: (r) => {
    const p = r.prediction;
    if (!p || (p.riskLevel !== 'high' && p.riskLevel !== 'critical')) return null;
    const pct = Math.round(p.probability * 100);
    return {
      severity: p.riskLevel,
      title: `${r.name}: ${p.riskLevel} churn risk (${pct} %)`,
      message: p.riskFactors.length
        ? `Churn probability is ${pct} %. ${p.riskFactors.map((f) => f.description).join(' ')}`
        : `Churn probability is ${pct} %.`,
      details: { probability: p.probability, risk_level: p.riskLevel, risk_factors: p.riskFactors.map((f) => f.code) },
    };
  },
  payment_failed: ({ name, features: f }) => {
    const sinceFailure = daysBetween(f.lastFailedAt, f.asOf);
    const settled = f.lastPaidAt && f.lastFailedAt && f.lastPaidAt > f.lastFailedAt;
    if (f.failedPayments30d === 0 || sinceFailure === null || sinceFailure > PAYMENT_WINDOW_DAYS || settled) return null;
    const n = f.failedPayments30d;
    return {
      severity: n >= 3 ? 'critical' : n === 2 ? 'high' : 'medium',
      title: `${name}: ${plural(n, 'payment')} failed`,
      message: `${plural(n, 'payment')} failed in the last 30 days and no invoice has been paid since.`,
      details: { failed_payments_30d: n, last_failed_at: f.lastFailedAt!.toISOString() },
    };
  },
  invoice_overdue: ({ name, features: f }) => {
    if (f.overdueInvoices === 0) return null;
    const days = Math.max(0, Math.floor(daysBetween(f.oldestOverdueDueAt, f.asOf) ?? 0));
    return {
      severity: days >= 30 ? 'critical' : days >= 14 ? 'high' : 'medium',
      title: `${name}: ${plural(f.overdueInvoices, 'invoice')} overdue`,
      message: `${plural(f.overdueInvoices, 'invoice')} overdue, the oldest for ${plural(days, 'day')}.`,
      details: { overdue_invoices: f.overdueInvoices, days_overdue: days },
    };
  },
  trial_ending: ({ name, features: f }) => {
    const left = trialDaysLeft(f);
    if (left === null || left > 7) return null;
    const days = Math.max(0, Math.ceil(left));
    return {
      severity: left <= 3 ? 'high' : 'medium',
      title: `${name}: trial ends in ${plural(days, 'day')}`,
      message: `The trial ends on ${f.trialEnd!.toISOString().slice(0, 10)}.`,
      details: { trial_end: f.trialEnd!.toISOString(), days_left: days },
    };
  },
  inactivity: ({ name, daysInactive }) => {
    if (daysInactive === null || daysInactive < 14) return null;
    const days = Math.floor(daysInactive);
    return {
      severity: days >= 60 ? 'critical' : days >= 30 ? 'high' : 'medium',
      title: `${name}: no activity for ${days >= 90 ? '90+ days' : plural(days, 'day')}`,
      message: `Nothing from the customer in product usage, code activity, chat or support for ${days >= 90 ? '90 days or more' : plural(days, 'day')}.`,
      details: { days_inactive: Math.min(days, 90) },
    };
  },
  support_backlog: ({ name, features: f }) => {
    if (f.openConversations < 3) return null;
    const n = f.openConversations;
    return {
      severity: n >= 10 ? 'critical' : n >= 5 ? 'high' : 'medium',
      title: `${name}: ${n} support conversations open`,
      message: `${n} support conversations are waiting${f.oldestOpenConversationAt ? `, the oldest since ${f.oldestOpenConversationAt.toISOString().slice(0, 10)}` : ''}.`,
      details: { open_conversations: n },
    };
  },
  negative_sentiment: ({ name, features: f }) => {
    if (f.messages14d < 3 || f.sentiment14d === null || f.sentiment14d > -0.2) return null;
    const s = Math.round(f.sentiment14d * 100) / 100;
    return {
      severity: s <= -0.5 ? 'high' : 'medium',
      title: `${name}: messages read negative`,
      message: `The customer’s last ${f.messages14d} messages in chat and support average a sentiment of ${s} (−1 to 1).`,
      details: { sentiment_14d: s, messages_14d: f.messages14d },
    };
  },
};

/** The alert types the rules raise, in the order they are evaluated. */
export const RULE_TYPES = Object.keys(RULES) as AlertType[];

/** What every rule says about one customer now. */
export function evaluateAlerts(input: RuleInput): Record<AlertType, Firing | null> {
  return Object.fromEntries(RULE_TYPES.map((t) => [t, RULES[t](input)])) as Record<AlertType, Firing | null>;
}

export interface ExistingAlert {
  id: string;
  alertType: AlertType;
  severity: Severity;
  status: AlertStatus;
  details: unknown;
  resolvedBy: string | null;
  resolvedAt: Date | null;
}

/** After someone resolves an alert by hand, the same condition raises it again only this much later (or worse). */
export const MANUAL_RESOLVE_COOLDOWN_MS = 7 * 86_400_000;

export type AlertChange =
  | { kind: 'create'; alertType: AlertType; firing: Firing }
  | { kind: 'update'; id: string; firing: Firing }
  | { kind: 'resolve'; id: string };

/**
 * Turns what the rules say into changes: one unresolved alert per type (created, kept up to date, or
 * resolved when its condition clears); a hand-resolved alert stays quiet for a week unless it gets worse.
 */
export function planAlertChanges(
  firings: Record<AlertType, Firing | null>,
  unresolved: ExistingAlert[],
  recentlyResolvedByUser: ExistingAlert[],
  now: Date,
): AlertChange[] {
  const changes: AlertChange[] = [];
  for (const type of RULE_TYPES) {
    const firing = firings[type];
    const current = unresolved.find((a) => a.alertType === type);
    if (current) {
      if (!firing) changes.push({ kind: 'resolve', id: current.id });
      else if (firing.severity !== current.severity || JSON.stringify(firing.details) !== JSON.stringify(current.details)) {
        changes.push({ kind: 'update', id: current.id, firing });
      }
      continue;
    }
    if (!firing) continue;
    const quiet = recentlyResolvedByUser.find(
      (a) =>
        a.alertType === type &&
        a.resolvedAt &&
        now.getTime() - a.resolvedAt.getTime() < MANUAL_RESOLVE_COOLDOWN_MS &&
        SEVERITY_RANK[firing.severity] <= SEVERITY_RANK[a.severity],
    );
    if (!quiet) changes.push({ kind: 'create', alertType: type, firing });
  }
  return changes;
}
