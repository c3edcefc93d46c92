/**
 * Collects items into groups by key and runs each group as one call: when its window ends, or at once
 * when it is full (by count or by bytes). Groups of different keys are run separately, so one key's slow group never holds
 * back another's items.
 */
export interface Groups<T, R> {
  /** Resolves with this item's own result of its group's run, or rejects with the run's error. */
  add(key: string, item: T): Promise<R>;
}

export function createGroups<T, R>(opts: {
  windowMs: number;
  maxCount: number;
  /** An item that would take its group past this starts a new one; a larger item runs alone. */
  maxBytes: number;
  sizeOf: (item: T) => number;
  /** Returns one result per item, in the items' order. */
  run: (items: T[]) => Promise<R[]>;
}): Groups<T, R> {
  interface Open {
    items: T[];
    bytes: number;
    waiters: { resolve: (r: R) => void; reject: (e: unknown) => void }[];
    timer?: NodeJS.Timeout;
  }
  const open = new Map<string, Open>();
  const close = (key: string, g: Open) => {
    clearTimeout(g.timer);
    if (open.get(key) === g) open.delete(key);
    Promise.resolve()
      .then(() => opts.run(g.items))
      .then(
        (results) => g.waiters.forEach((w, i) => w.resolve(results[i]!)),
        (err: unknown) => g.waiters.forEach((w) => w.reject(err)),
      );
  };
  return {
    add(key, item) {
      const size = opts.sizeOf(item);
      let g = open.get(key);
      if (g && g.bytes + size > opts.maxBytes) {
        close(key, g);
        g = undefined;
      }
      if (!g) {
        const created: Open = { items: [], bytes: 0, waiters: [] };
        created.timer = setTimeout(() => close(key, created), opts.windowMs);
        open.set(key, created);
        g = created;
      }
      const group = g;
      const result = new Promise<R>((resolve, reject) => group.waiters.push({ resolve, reject }));
      group.items.push(item);
      group.bytes += size;
      if (group.items.length >= opts.maxCount || group.bytes >= opts.maxBytes) close(key, group);
      return result;
    },
  };
}
