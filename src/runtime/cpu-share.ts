import { performance } from 'node:perf_hooks';
import { setImmediate as turn } from 'node:timers/promises';

/**
 * A fair share of the process's CPU for tenants' heavy work: the work a single request does in many
 * synchronous steps (an export serialising page after page, training building feature vectors). Counting
 * requests is not enough there: one export holds one place while it keeps the event loop busy for
 * seconds, and every other tenant's requests wait behind its steps.
 *
 * Each step runs through `run`, which first yields to the event loop (so whatever is ready, other tenants'
 * requests included, goes before the next step), then measures the step's time. A tenant may spend up to
 * `share` of the process's time on such steps, with a burst of `burstMs`, while another tenant has
 * requests running; past that its next step waits until it is back within its share. Alone, a tenant's
 * heavy work runs at full speed, and what it spent alone beyond the burst is not charged later. "Requests
 * running" are authenticated API requests, as admission runs them (http/admission.ts).
 */
export interface CpuShare {
  run<T>(tenantId: string, step: () => T): Promise<T>;
  /**
   * Waits for one of the tenant's HEAVY_AT_ONCE places for heavy work (an export, a training) and answers
   * its release: a tenant's further heavy requests wait for its own, rather than each reading and parsing
   * pages beside the others, which no step's share can count.
   */
  hold(tenantId: string): Promise<() => void>;
}

/** Heavy requests of one tenant that run at once in a process; the others wait in order. */
const HEAVY_AT_ONCE = 2;

/** Per key, at most `max` holders at once, the others served in order. */
function places(max: number) {
  const lanes = new Map<string, { held: number; waiting: (() => void)[] }>();
  return (key: string): Promise<() => void> => {
    let lane = lanes.get(key);
    if (!lane) lanes.set(key, (lane = { held: 0, waiting: [] }));
    const own = lane;
    const release = () => {
      const next = own.waiting.shift();
      if (next) next();
      else if (--own.held === 0) lanes.delete(key);
    };
    let released = false;
    const once = () => {
      if (!released) {
        released = true;
        release();
      }
    };
    if (own.held < max) {
      own.held++;
      return Promise.resolve(once);
    }
    return new Promise((resolve) => own.waiting.push(() => resolve(once)));
  };
}

/** The requests of each tenant running in the process, as admission starts and ends them (http/admission.ts). */
export interface TenantActivity {
  began(tenantId: string): void;
  ended(tenantId: string): void;
}

export interface CpuShareOptions {
  /** The part of the process's time one tenant's heavy steps may take while others are served, 0 to 1. */
  share: number;
  /** What a tenant may spend at once beyond its share, in milliseconds of steps. */
  burstMs: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/** One tenant's heavy work may take a quarter of the process while others are served (TENANT_CPU_SHARE), 50 ms at once beyond. */
export const DEFAULT_CPU_SHARE: CpuShareOptions = { share: 0.25, burstMs: 50 };

/** The longest a held step sleeps before it looks again whether the others are still busy. */
const SLICE_MS = 20;

export function createCpuShare(opts: CpuShareOptions = DEFAULT_CPU_SHARE): CpuShare & TenantActivity {
  const now = opts.now ?? (() => performance.now());
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const running = new Map<string, number>();
  let total = 0;
  const othersBusy = (tenantId: string) => total - (running.get(tenantId) ?? 0) > 0;
  // Per tenant: the step time spent beyond what its share has paid back since, and when that was counted.
  // What a tenant spends while nobody else is served counts up to the burst only: a tenant alone is never
  // made to pay for it once another tenant's request comes.
  const owed = new Map<string, { ms: number; at: number }>();
  const debtOf = (tenantId: string) => {
    const d = owed.get(tenantId);
    if (!d) return 0;
    const left = d.ms - (now() - d.at) * opts.share;
    if (left <= 0) owed.delete(tenantId);
    return Math.max(0, left);
  };
  const metered = opts.share < 1;
  const hold = places(HEAVY_AT_ONCE);
  return {
    hold: (tenantId) => (metered ? hold(tenantId) : Promise.resolve(() => {})),
    began(tenantId) {
      running.set(tenantId, (running.get(tenantId) ?? 0) + 1);
      total++;
    },
    ended(tenantId) {
      const n = (running.get(tenantId) ?? 1) - 1;
      if (n > 0) running.set(tenantId, n);
      else running.delete(tenantId);
      total--;
    },
    async run<T>(tenantId: string, step: () => T): Promise<T> {
      await turn();
      if (!metered) return step();
      // Held in short slices, each looking again: the others' requests may end meanwhile.
      for (let debt = debtOf(tenantId); debt > opts.burstMs && othersBusy(tenantId); debt = debtOf(tenantId))
        await sleep(Math.min(SLICE_MS, (debt - opts.burstMs) / opts.share));
      const started = now();
      try {
        return step();
      } finally {
        const spent = now() - started;
        const debt = debtOf(tenantId) + spent;
        owed.set(tenantId, { ms: othersBusy(tenantId) ? debt : Math.min(debt, opts.burstMs), at: now() });
      }
    },
  };
}

/** No share kept: each step only yields to the event loop first (tests and tools that run alone). */
export const unmetered: CpuShare = createCpuShare({ share: 1, burstMs: 0 });
