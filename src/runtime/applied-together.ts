/**
 * Items that would be applied one after the other, applied instead all at once when the first of them is
 * reached, each answering its own outcome ("applied together"). The caller decides which items may go
 * together (consecutive ones that cannot see each other's writes but in the order `waves` keeps); this
 * holds them and runs `applyAll` once.
 */
export interface AppliedTogether<T, R, C> {
  add(id: string, item: T): void;
  ids(): string[];
  /**
   * The item's outcome; the first call, which must be the first item's, runs `applyAll` for them all with
   * its `ctx` (the transaction it is applied in, say).
   */
  outcomeOf(id: string, ctx: C): Promise<R>;
}

export function appliedTogether<T, R, C>(
  applyAll: (items: { id: string; item: T }[], ctx: C) => Promise<Map<string, R>>,
): AppliedTogether<T, R, C> {
  const entries: { id: string; item: T }[] = [];
  let outcomes: Promise<Map<string, R>> | undefined;
  return {
    add: (id, item) => {
      if (outcomes) throw new Error('an item was added after its group was applied');
      entries.push({ id, item });
    },
    ids: () => entries.map((e) => e.id),
    async outcomeOf(id, ctx) {
      if (!outcomes) {
        // Items are reached in their order, so the first one comes first; anything else is a caller's bug.
        if (entries[0]?.id !== id) throw new Error('a group applied together was entered after its first item');
        outcomes = applyAll(entries, ctx);
      }
      const outcome = (await outcomes).get(id);
      if (outcome === undefined) throw new Error(`no outcome for ${id}`);
      return outcome;
    },
  };
}

/**
 * Items split into waves by key: the n-th item of each key goes to the n-th wave, in their order. Applying
 * the waves in turn, each as one set, gives every key's items in order, and items of different keys side by side.
 */
export function waves<T>(items: T[], keyOf: (item: T) => string): T[][] {
  const seen = new Map<string, number>();
  const out: T[][] = [];
  for (const item of items) {
    const key = keyOf(item);
    const n = seen.get(key) ?? 0;
    seen.set(key, n + 1);
    (out[n] ??= []).push(item);
  }
  return out;
}
