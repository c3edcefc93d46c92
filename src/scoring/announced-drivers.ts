import { ANNOUNCED_DRIVERS } from '../contract/entities.ts';
import { inputLabel, type Driver, type InputGroup } from './attribution.ts';

// What an announcement (customer.health_changed, churn_prediction.updated) says moved its value: the
// drivers of every change recorded since the value before was announced, summed per input. Each change's
// drivers add up to that change exactly, and the changes follow one another, so the sums add up to the
// whole move since the announcement; when they do not (a change no longer kept), nothing is claimed.

export interface AnnouncedDriver {
  input: string;
  label: string;
  group: InputGroup;
  /** In the measure's own unit: points of the score, or of the churn probability. */
  amount: number;
}

export interface AnnouncedDrivers {
  since: Date;
  top: AnnouncedDriver[];
  other: number;
}

/** The two measures, each summed in its stored integer unit so that the check is exact. */
const MEASURES = {
  score: { of: (d: Driver) => d.score, scale: 1 },
  churn: { of: (d: Driver) => Math.round(d.churn * 10_000), scale: 10_000 },
} as const;

/**
 * Sums the drivers of `changes` (each a recorded change's drivers) for one measure. `expected` is the whole
 * move in the measure's integer unit (points, or ten-thousandths of a probability); null when the sums do
 * not add up to it.
 */
export function announcedDrivers(
  changes: readonly Driver[][],
  measure: keyof typeof MEASURES,
  expected: number,
  since: Date,
): AnnouncedDrivers | null {
  const { of, scale } = MEASURES[measure];
  const sums = new Map<string, { group: InputGroup; amount: number }>();
  for (const drivers of changes) {
    for (const d of drivers) {
      const amount = of(d);
      if (amount === 0) continue;
      const sum = sums.get(d.input);
      if (sum) sum.amount += amount;
      else sums.set(d.input, { group: d.group, amount });
    }
  }
  const all = [...sums].map(([input, s]) => ({ input, ...s })).filter((s) => s.amount !== 0);
  if (all.reduce((total, s) => total + s.amount, 0) !== expected) return null;
  all.sort((a, b) => Math.abs(b.amount) - Math.abs(a.amount) || (a.input < b.input ? -1 : 1));
  const top = all.slice(0, ANNOUNCED_DRIVERS);
  const other = expected - top.reduce((total, s) => total + s.amount, 0);
  return {
    since,
    top: top.map((s) => ({ input: s.input, label: inputLabel(s.input), group: s.group, amount: s.amount / scale })),
    other: other / scale,
  };
}
