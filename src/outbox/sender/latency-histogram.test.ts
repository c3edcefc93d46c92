import { describe, expect, it } from 'vitest';
import { addHistograms, bucketBounds, bucketOf, emptyHistogram, LATENCY_BUCKETS, quantile } from './latency-histogram.ts';

describe('the latency histogram of the delivery figures', () => {
  it('files a duration in the bucket whose bounds hold it, 12 % wide, from under 1 ms to past the timeout', () => {
    for (const ms of [0, 0.5, 1, 3, 10, 47, 100, 999, 1000, 15_000]) {
      const [lo, hi] = bucketBounds(bucketOf(ms));
      expect(ms, String(ms)).toBeGreaterThanOrEqual(lo);
      expect(ms, String(ms)).toBeLessThan(hi);
      if (ms >= 1) expect(hi / lo).toBeCloseTo(10 ** (1 / 20), 10);
    }
    expect(bucketOf(10 ** 9)).toBe(LATENCY_BUCKETS - 1);
  });

  it('answers each percentile within the bucket of the exact value, and null when it counts nothing', () => {
    const durations = [...Array.from({ length: 90 }, (_, i) => 5 + (i % 10)), ...Array.from({ length: 10 }, (_, i) => 400 + 10 * i)];
    const h = emptyHistogram();
    for (const d of durations) h[bucketOf(d)]!++;
    const sorted = [...durations].sort((a, b) => a - b);
    for (const q of [0.5, 0.9, 0.95, 0.99, 1]) {
      const exact = sorted[Math.ceil(q * sorted.length) - 1]!;
      const [lo, hi] = bucketBounds(bucketOf(exact));
      const estimate = quantile(h, q)!;
      expect(estimate, String(q)).toBeGreaterThanOrEqual(lo);
      expect(estimate, String(q)).toBeLessThanOrEqual(hi);
    }
    expect(quantile(emptyHistogram(), 0.5)).toBeNull();
  });

  it('adds histograms bucket by bucket, a missing one as zeros', () => {
    const a = emptyHistogram();
    a[3] = 2;
    expect(addHistograms(addHistograms(emptyHistogram(), a), [0, 0, 0, 1]).slice(0, 4)).toEqual([0, 0, 0, 3]);
    expect(addHistograms(a, null)).toBe(a);
  });
});
