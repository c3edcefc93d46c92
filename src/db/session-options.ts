// A module of its own: the export threads open their connections with these settings and load nothing else
// of the database layer (no Prisma client in a thread).

/**
 * Settings every session of the service starts with, as the `options` of its connection. JIT compilation
 * off: the service's statements are short, and a generic plan's estimate for a large tenant passes
 * `jit_above_cost` (a batched page's LIMIT, a parameter, counts as a tenth of the tenant's rows: 100,000 at
 * 1M customers), so each run of a 0.2 ms page compiled for 5–25 ms.
 */
export function sessionOptions(opts: { synchronousCommit?: boolean } = {}): string {
  return ['-c jit=off', ...(opts.synchronousCommit === false ? ['-c synchronous_commit=off'] : [])].join(' ');
}
