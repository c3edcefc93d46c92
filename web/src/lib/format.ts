import type { Dimension } from '../gql/graphql.ts';

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const dateOnly = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });
const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });

export function formatDateTime(iso: string | null | undefined): string {
  return iso ? dateTime.format(new Date(iso)) : '—';
}

export function formatDate(iso: string | null | undefined): string {
  return iso ? dateOnly.format(new Date(iso)) : '—';
}

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['year', 365 * 86_400],
  ['month', 30 * 86_400],
  ['week', 7 * 86_400],
  ['day', 86_400],
  ['hour', 3_600],
  ['minute', 60],
];

/** "3 hours ago", "in 2 days"; exact time is in the element's title. */
export function formatRelative(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return 'never';
  const seconds = (Date.parse(iso) - now) / 1000;
  for (const [unit, size] of UNITS) {
    if (Math.abs(seconds) >= size) return relative.format(Math.round(seconds / size), unit);
  }
  return 'just now';
}

export function formatPercent(p: number | null | undefined, digits = 0): string {
  return p === null || p === undefined ? '—' : `${(p * 100).toFixed(digits)}%`;
}

export function formatScore(s: number | null | undefined): string {
  return s === null || s === undefined ? '—' : String(Math.round(s));
}

export function formatTrend(t: number | null | undefined): string {
  if (t === null || t === undefined) return '—';
  const r = Math.round(t * 10) / 10;
  return r > 0 ? `+${r}` : String(r);
}

export function humanize(code: string): string {
  const s = code.replace(/[_.]/g, ' ');
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** An enum's values (the generated GraphQL objects), ordered by a rank the compiler holds complete. */
export const ranked = <T extends string>(values: Record<string, T>, rank: Record<T, number>): T[] =>
  Object.values(values).sort((a, b) => rank[a] - rank[b]);

// Labels of the schema's enums; `Record<Enum, …>` makes a value added to the schema fail to compile until it has one.
export const DIMENSION_LABELS: Record<Dimension, string> = {
  usage: 'Usage',
  engagement: 'Engagement',
  support: 'Support',
  billing: 'Billing',
  growth: 'Growth',
};
