import { describe, expect, it } from 'vitest';
import { createNaturalBatches } from './natural-batches.ts';

function recorder(maxCount = 10, maxBytes = 1000) {
  const runs: string[][] = [];
  const groups = createNaturalBatches<string, string>({
    maxRunning: 1,
    maxCount,
    maxBytes,
    sizeOf: (item) => item.length,
    run: async (items) => {
      runs.push(items);
      return items.map((i) => i.toUpperCase());
    },
  });
  return { runs, groups };
}

describe('groups', () => {
  it('runs the items of one key together and answers each with its own result', async () => {
    const { runs, groups } = recorder();
    expect(await Promise.all([groups.add('a', 'x'), groups.add('a', 'y')])).toEqual(['X', 'Y']);
    expect(runs).toEqual([['x', 'y']]);
  });

  it('runs the items of different keys in separate groups', async () => {
    const { runs, groups } = recorder();
    await Promise.all([groups.add('a', 'x'), groups.add('b', 'y'), groups.add('a', 'z')]);
    expect(runs.sort()).toEqual([['x', 'z'], ['y']]);
  });

  it('starts a new group when one is full', async () => {
    const { runs, groups } = recorder(2);
    await Promise.all(['p', 'q', 'r'].map((i) => groups.add('a', i)));
    expect(runs).toEqual([['p', 'q'], ['r']]);
  });

  it('starts a new group when the next item would take it past its byte cap, and runs a larger item alone', async () => {
    const { runs, groups } = recorder(10, 10);
    await Promise.all(['aaaa', 'bbbb', 'cccc', 'dddddddddddd', 'e'].map((i) => groups.add('a', i)));
    expect(runs).toEqual([['aaaa', 'bbbb'], ['cccc'], ['dddddddddddd'], ['e']]);
  });

  it('runs a lone item at once, and gathers the items that arrive while a run is in flight into the next run', async () => {
    const runs: string[][] = [];
    let release = () => {};
    const groups = createNaturalBatches<string, string>({
      maxRunning: 1,
      maxCount: 10,
      maxBytes: 1000,
      sizeOf: () => 1,
      run: async (items) => {
        runs.push(items);
        if (runs.length === 1) await new Promise<void>((r) => (release = r));
        return items;
      },
    });
    const first = groups.add('a', 'x');
    await new Promise((r) => setImmediate(r));
    expect(runs).toEqual([['x']]);
    const later = [groups.add('a', 'y'), groups.add('a', 'z')];
    await new Promise((r) => setImmediate(r));
    expect(runs).toEqual([['x']]);
    release();
    expect(await Promise.all([first, ...later])).toEqual(['x', 'y', 'z']);
    expect(runs).toEqual([['x'], ['y', 'z']]);
  });

  it('rejects every item of a group whose run fails', async () => {
    const groups = createNaturalBatches<string, string>({
      maxRunning: 1,
      maxCount: 10,
      maxBytes: 1000,
      sizeOf: () => 1,
      run: () => Promise.reject(new Error('down')),
    });
    const settled = await Promise.allSettled([groups.add('a', 'x'), groups.add('a', 'y')]);
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected']);
  });

  it('runs at most the total over all keys, and gives a freed slot to the key that waited longest', async () => {
    const runs: string[][] = [];
    const releases: (() => void)[] = [];
    const groups = createNaturalBatches<string, string>({
      maxRunning: 2,
      maxRunningTotal: 2,
      maxCount: 10,
      maxBytes: 1000,
      sizeOf: () => 1,
      run: async (items) => {
        runs.push(items);
        await new Promise<void>((r) => releases.push(r));
        return items;
      },
    });
    const settle = () => new Promise((r) => setImmediate(r));
    const all = [groups.add('a', 'a1'), groups.add('b', 'b1')];
    await settle();
    all.push(groups.add('c', 'c1'), groups.add('a', 'a2'));
    await settle();
    expect(runs).toEqual([['a1'], ['b1']]);
    releases.shift()!();
    await settle();
    await settle();
    // c waited before a's second group: it goes first.
    expect(runs).toEqual([['a1'], ['b1'], ['c1']]);
    releases.shift()!();
    await settle();
    await settle();
    expect(runs).toEqual([['a1'], ['b1'], ['c1'], ['a2']]);
    while (releases.length) releases.shift()!();
    expect(await Promise.all(all)).toEqual(['a1', 'b1', 'c1', 'a2']);
  });
});
