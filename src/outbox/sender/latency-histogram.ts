// The latency histogram of the per-endpoint delivery figures (webhook_endpoint_stats.latency): attempts by
// duration in buckets 10^(1/20) ≈ 12 % apart, from under 1 ms to the delivery timeout and beyond. The deliverer
// files each attempt in its bucket (delivery-store.ts) and the API reads the percentiles back
// (src/services/webhook-stats.ts), both from here, so the two cannot disagree.

/** Buckets per decade: each bucket's upper bound is 10^(1/20) times its lower one. */
export const BUCKETS_PER_DECADE = 20;
/**
 * Bucket 0 holds durations under 1 ms; bucket i ≥ 1 holds [10^((i-1)/20), 10^(i/20)) ms; the last one also
 * everything longer (from about 22 s: past the 15 s delivery timeout).
 */
export const LATENCY_BUCKETS = 88;

/** The bucket of a duration in milliseconds. */
export function bucketOf(ms: number): number {
  if (!(ms >= 1)) return 0;
  return Math.min(LATENCY_BUCKETS - 1, 1 + Math.floor(BUCKETS_PER_DECADE * Math.log10(ms)));
}

/** The lower and upper bound of a bucket, in milliseconds. */
export function bucketBounds(i: number): [number, number] {
  if (i <= 0) return [0, 1];
  return [10 ** ((i - 1) / BUCKETS_PER_DECADE), 10 ** (i / BUCKETS_PER_DECADE)];
}

/** Adds histograms bucket by bucket (a missing or short one counts as zeros). */
export function addHistograms(into: number[], add: readonly (number | null)[] | null | undefined): number[] {
  if (!add) return into;
  for (let i = 0; i < LATENCY_BUCKETS; i++) into[i] = (into[i] ?? 0) + (add[i] ?? 0);
  return into;
}

export const emptyHistogram = () => new Array<number>(LATENCY_BUCKETS).fill(0);

/**
 * The q-quantile (0 < q ≤ 1) of the durations a histogram counts, in milliseconds, interpolated linearly within
 * its bucket as Prometheus's histogram_quantile does: within about 12 % of the exact value. Null when it counts
 * nothing.
 */
export function quantile(h: readonly number[], q: number): number | null {
  const total = h.reduce((a, b) => a + b, 0);
  if (total === 0) return null;
  const rank = q * total;
  let below = 0;
  for (let i = 0; i < h.length; i++) {
    const n = h[i] ?? 0;
    if (n > 0 && below + n >= rank) {
      const [lo, hi] = bucketBounds(i);
      return lo + (hi - lo) * ((rank - below) / n);
    }
    below += n;
  }
  return bucketBounds(h.length - 1)[1];
}
