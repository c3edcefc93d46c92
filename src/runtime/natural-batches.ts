/**
 * Collects items into groups by key and runs each group as one call ("natural batching"): while fewer
 * than `maxRunning` runs of a key are in flight, what arrived in the same turn of the event loop runs at
 * once; while that many are in flight, items wait and go together in the run that starts as the next one
 * ends. So a lone item never waits for a timer, and under load the groups grow by themselves with the
 * time a run takes. A group is also closed when full (by count or by bytes). Groups of different keys run
 * separately, so one key's slow group never holds back another's items; with `maxRunningTotal`, at most
 * that many run at once over all keys, and a slot that frees goes to the key that has waited longest.
 */
export interface NaturalBatches<T, R> {
  /** Resolves with this item's own result of its group's run, or rejects with the run's error. */
  add(key: string, item: T): Promise<R>;
}

export function createNaturalBatches<T, R>(opts: {
  /** Runs of one key in flight at once. */
  maxRunning: number;
  /** Runs in flight at once over all keys; unset, no bound but each key's. */
  maxRunningTotal?: number;
  maxCount: number;
  /** An item that would take its group past this starts a new one; a larger item runs alone. */
  maxBytes: number;
  sizeOf: (item: T) => number;
  /** Returns one result per item, in the items' order. */
  run: (items: T[]) => Promise<R[]>;
}): NaturalBatches<T, R> {
  interface Group {
    items: T[];
    bytes: number;
    waiters: { resolve: (r: R) => void; reject: (e: unknown) => void }[];
  }
  interface Lane {
    running: number;
    /** Groups waiting to run, oldest first; the last one still takes items unless full. */
    waiting: Group[];
    scheduled: boolean;
  }
  const lanes = new Map<string, Lane>();
  const full = (g: Group) => g.items.length >= opts.maxCount || g.bytes >= opts.maxBytes;
  let running = 0;
  const totalFree = () => running < (opts.maxRunningTotal ?? Infinity);
  /** Keys with groups waiting for a slot of the total, longest waiting first. */
  const starved = new Set<string>();

  const pump = (key: string, lane: Lane) => {
    lane.scheduled = false;
    while (lane.running < opts.maxRunning && lane.waiting.length > 0) {
      if (!totalFree()) {
        starved.add(key);
        return;
      }
      const g = lane.waiting.shift()!;
      lane.running++;
      running++;
      Promise.resolve()
        .then(() => opts.run(g.items))
        .then(
          (results) => g.waiters.forEach((w, i) => w.resolve(results[i]!)),
          (err: unknown) => g.waiters.forEach((w) => w.reject(err)),
        )
        .finally(() => {
          lane.running--;
          running--;
          // The slot of the total goes to the key that has waited longest; then this key's next group,
          // what gathered meanwhile, runs as one.
          for (const k of starved) {
            if (!totalFree()) break;
            starved.delete(k);
            const l = lanes.get(k);
            if (l) pump(k, l);
          }
          if (lane.waiting.length > 0) pump(key, lane);
          else if (lane.running === 0 && !lane.scheduled && !starved.has(key)) lanes.delete(key);
        });
    }
  };

  return {
    add(key, item) {
      const size = opts.sizeOf(item);
      let lane = lanes.get(key);
      if (!lane) {
        lane = { running: 0, waiting: [], scheduled: false };
        lanes.set(key, lane);
      }
      let g = lane.waiting.at(-1);
      if (!g || full(g) || (g.items.length > 0 && g.bytes + size > opts.maxBytes)) {
        g = { items: [], bytes: 0, waiters: [] };
        lane.waiting.push(g);
      }
      const group = g;
      const result = new Promise<R>((resolve, reject) => group.waiters.push({ resolve, reject }));
      group.items.push(item);
      group.bytes += size;
      // A free run slot is taken after the current turn, so the items arriving in it go together.
      if (lane.running < opts.maxRunning && !lane.scheduled) {
        lane.scheduled = true;
        const l = lane;
        setImmediate(() => pump(key, l));
      }
      return result;
    },
  };
}
