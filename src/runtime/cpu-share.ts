import { performance } from 'node:perf_hooks';
import { setImmediate as turn } from 'node:timers/promises';

/**
 * A fair share of the process's CPU, and of its database connections, for tenants' heavy work: the work a single request does in many
 * synchronous steps (an export serialising page after page, training building feature vectors). Counting
 * requests is not enough there: one export holds one place while it keeps the event loop busy for
 * seconds, and every other tenant's requests wait behind its steps.
 *
 * Each step runs through `run`, which first yields to the event loop (so whatever is ready, other tenants'
 * requests included, goes before the next step), then measures the step's time. A tenant may spend up to
 * `share` of the process's time on such steps, with a burst of `burstMs`, while another tenant is being
 * served; past that its next step waits until it is back within its share. Alone, a tenant's heavy work
 * runs at full speed, and what it spent alone beyond the burst is not charged later. Whether another tenant
 * is being served (an API request running, a webhook being accepted, either within the last second) is the
 * process's one count of what runs per tenant (tenant-load.ts).
 */
export interface CpuShare {
  run<T>(tenantId: string, step: () => T): Promise<T>;
  /**
   * As `run`, for a step that waits on the database (an export's page read): its whole time is charged, the
   * statement's and reading its rows, which the process cannot tell apart from here. Another tenant's
   * requests wait for the same database and the same cores, so that time is what they lose to it.
   */
  read<T>(tenantId: string, step: () => Promise<T>): Promise<T>;
  /**
   * Waits for `weight` of the tenant's HEAVY_AT_ONCE places for heavy work and answers its release. An
   * export or a training takes a whole place; a GraphQL operation the part of one its static cost is of the
   * largest cost allowed (http/graphql-share.ts). A tenant's further heavy requests wait for its own, in
   * order, rather than each reading and parsing pages beside the others, which no step's share can count.
   */
  hold(tenantId: string, weight?: number): Promise<() => void>;
  /**
   * Runs one database statement of a tenant's heavy GraphQL operation, at most HEAVY_STATEMENTS_AT_ONCE of
   * the tenant's at once; while another tenant is served, the next starts only once fewer than
   * HEAVY_STATEMENTS_SHARED run. The others wait in order. Such an operation runs its fields side by side
   * (ten aliased searches, each with its count), so two of them would otherwise take every connection of
   * the pool, and every other tenant's one-statement reads would queue behind theirs; and two of its
   * statements at once keep two of the database's cores busy, which on a small machine is all of them. Each statement's whole time is charged as `read` charges a page: the
   * cores it keeps busy are the ones the others wait for. That time includes its wait for a connection and
   * for the cores, so a tenant is charged more, not less, on a busy machine, when the others most need it
   * to hold back.
   */
  statement<T>(tenantId: string, run: () => Promise<T>): Promise<T>;
  /**
   * For a tenant's work that runs on another thread and cannot wait here (a churn model's fit): charges the
   * `spentMs` it reports, and answers whether it should now wait, being past its share while another tenant
   * is served (thread-pace.ts holds the thread until this answers no).
   */
  account(tenantId: string, spentMs: number): boolean;
}

/** Places for heavy requests of one tenant in a process (two exports at once); the others wait in order. */
const HEAVY_AT_ONCE = 2;

/**
 * Connections one tenant's heavy GraphQL operations hold at once in a process: a fifth of the default pool of
 * ten, so that the rest is always there for everyone else, while the operations still read two at a time.
 * While another tenant is served, one (HEAVY_STATEMENTS_SHARED), so that a core is left to the others.
 */
export const HEAVY_STATEMENTS_AT_ONCE = 2;
export const HEAVY_STATEMENTS_SHARED = 1;

/**
 * Per key, holders weighing at most `maxOf(key)` in all at once (looked at as each comes and as each leaves:
 * a lower most holds back the next ones, never the ones already in), the others served in arrival order (a
 * light one does not pass a heavy one waiting, so a stream of light ones cannot starve it). A weight above
 * the most when it comes counts as the most; one left alone waiting always goes in.
 */
function places(maxOf: (key: string) => number) {
  const lanes = new Map<string, { held: number; waiting: { weight: number; go: () => void }[] }>();
  return (key: string, asked: number): Promise<() => void> => {
    const weight = Math.min(maxOf(key), asked);
    let lane = lanes.get(key);
    if (!lane) lanes.set(key, (lane = { held: 0, waiting: [] }));
    const own = lane;
    const release = () => {
      own.held -= weight;
      for (let next = own.waiting[0]; next && (own.held <= 0 || own.held + next.weight <= maxOf(key)); next = own.waiting[0]) {
        own.waiting.shift();
        own.held += next.weight;
        next.go();
      }
      if (own.held <= 0 && own.waiting.length === 0) lanes.delete(key);
    };
    let released = false;
    const once = () => {
      if (!released) {
        released = true;
        release();
      }
    };
    if (own.waiting.length === 0 && own.held + weight <= maxOf(key)) {
      own.held += weight;
      return Promise.resolve(once);
    }
    return new Promise((resolve) => own.waiting.push({ weight, go: () => resolve(once) }));
  };
}

export interface CpuShareOptions {
  /** The part of the process's time one tenant's heavy steps may take while others are served, 0 to 1. */
  share: number;
  /** What a tenant may spend at once beyond its share, in milliseconds of steps. */
  burstMs: number;
  /** Whether another tenant than this one is being served (tenant-load.ts); without it nobody ever is. */
  othersBusy?: (tenantId: string) => boolean;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/** One tenant's heavy work may take a quarter of the process while others are served (TENANT_CPU_SHARE), 50 ms at once beyond. */
export const DEFAULT_CPU_SHARE: CpuShareOptions = { share: 0.25, burstMs: 50 };

/** The longest a held step sleeps before it looks again whether the others are still busy. */
const SLICE_MS = 20;

/**
 * The longest a tenant is held at once, however long the step it paid for (a page that waited seconds for
 * a thread on an overloaded machine): what it owes beyond this is let go. A streaming answer writes nothing
 * while held, and a connection idle for REQUEST_TIMEOUT_MS (30 s) is closed, cutting the answer off.
 */
export const MAX_HOLD_MS = 5_000;

export function createCpuShare(opts: CpuShareOptions = DEFAULT_CPU_SHARE): CpuShare {
  const now = opts.now ?? (() => performance.now());
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const othersBusy = opts.othersBusy ?? (() => false);
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
  // Past its share and burst while another tenant is served: its next step waits.
  const mustWait = (tenantId: string) => debtOf(tenantId) > opts.burstMs && othersBusy(tenantId);
  // Held in short slices, each looking again: the others' requests may end meanwhile.
  const inShare = async (tenantId: string) => {
    while (mustWait(tenantId)) await sleep(Math.min(SLICE_MS, (debtOf(tenantId) - opts.burstMs) / opts.share));
  };
  const charge = (tenantId: string, spent: number) => {
    const debt = debtOf(tenantId) + spent;
    const most = othersBusy(tenantId) ? opts.burstMs + MAX_HOLD_MS * opts.share : opts.burstMs;
    owed.set(tenantId, { ms: Math.min(debt, most), at: now() });
  };
  // A step that waits on the database: held while past the share, then charged its whole time.
  const charged = async <T>(tenantId: string, step: () => Promise<T>): Promise<T> => {
    await inShare(tenantId);
    const started = now();
    try {
      return await step();
    } finally {
      charge(tenantId, now() - started);
    }
  };
  const hold = places(() => HEAVY_AT_ONCE);
  const statements = places((tenantId) => (othersBusy(tenantId) ? HEAVY_STATEMENTS_SHARED : HEAVY_STATEMENTS_AT_ONCE));
  return {
    hold: (tenantId, weight = 1) => (metered ? hold(tenantId, weight) : Promise.resolve(() => {})),
    async statement(tenantId, run) {
      if (!metered) return run();
      const release = await statements(tenantId, 1);
      try {
        return await charged(tenantId, run);
      } finally {
        release();
      }
    },
    async run<T>(tenantId: string, step: () => T): Promise<T> {
      await turn();
      if (!metered) return step();
      await inShare(tenantId);
      const started = now();
      try {
        return step();
      } finally {
        charge(tenantId, now() - started);
      }
    },
    read: (tenantId, step) => (metered ? charged(tenantId, step) : step()),
    account(tenantId, spentMs) {
      if (!metered) return false;
      charge(tenantId, spentMs);
      return mustWait(tenantId);
    },
  };
}

/** No share kept: each step only yields to the event loop first (tests and tools that run alone). */
export const unmetered: CpuShare = createCpuShare({ share: 1, burstMs: 0 });
