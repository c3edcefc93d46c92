import { describe, expect, it } from 'vitest';
import type { Driver } from './attribution.ts';
import { announcedDrivers } from './announced-drivers.ts';

const driver = (input: string, score: number, churn = 0): Driver => ({
  input,
  group: 'usage',
  from: null,
  to: null,
  score,
  dimensions: {},
  churn,
});
const since = new Date('2026-11-01T00:00:00.000Z');

describe('an announcement’s drivers', () => {
  it('sums each input over the changes since, names the five largest and puts the rest together, adding up to the move', () => {
    const changes = [
      [driver('a', -4), driver('b', 2), driver('c', 1)],
      [driver('a', -3), driver('d', -2), driver('e', 1), driver('f', -1), driver('g', 1)],
    ];
    const d = announcedDrivers(changes, 'score', -5, since)!;
    expect(d.top.map((t) => [t.input, t.amount])).toEqual([
      ['a', -7],
      ['b', 2],
      ['d', -2],
      ['c', 1],
      ['e', 1],
    ]);
    expect(d.other).toBe(0); // f −1 and g +1
    expect(d.top.reduce((s, t) => s + t.amount, d.other)).toBe(-5);
  });

  it('sums churn in ten-thousandths, so that the parts add up without a float’s near miss', () => {
    const d = announcedDrivers([[driver('a', 0, 0.0017)], [driver('a', 0, 0.0001), driver('b', 0, 0.0006)]], 'churn', 24, since)!;
    expect(d.top).toMatchObject([
      { input: 'a', amount: 0.0018 },
      { input: 'b', amount: 0.0006 },
    ]);
    expect(d.other).toBe(0);
  });

  it('claims nothing when the changes do not add up to the move (one of them is no longer kept)', () => {
    expect(announcedDrivers([[driver('a', -3)]], 'score', -5, since)).toBeNull();
  });
});
