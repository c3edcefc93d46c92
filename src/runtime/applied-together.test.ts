import { describe, expect, it } from 'vitest';
import { appliedTogether, waves } from './applied-together.ts';

describe('items applied together', () => {
  it('runs the group once, at its first item, and answers each item its own outcome', async () => {
    const runs: string[][] = [];
    const group = appliedTogether<number, number, null>(async (items) => {
      runs.push(items.map((i) => i.id));
      return new Map(items.map((i) => [i.id, i.item * 10]));
    });
    group.add('a', 1);
    group.add('b', 2);
    expect(group.ids()).toEqual(['a', 'b']);
    expect(await group.outcomeOf('a', null)).toBe(10);
    expect(await group.outcomeOf('b', null)).toBe(20);
    expect(runs).toEqual([['a', 'b']]);
  });

  it('refuses to be entered at any item but its first, and to take items once applied', async () => {
    const group = appliedTogether<number, number, null>(async (items) => new Map(items.map((i) => [i.id, 0])));
    group.add('a', 1);
    group.add('b', 2);
    await expect(group.outcomeOf('b', null)).rejects.toThrow(/after its first item/);
    await group.outcomeOf('a', null);
    expect(() => group.add('c', 3)).toThrow(/after its group was applied/);
  });

  it('gives every item the run’s error when the run fails', async () => {
    const group = appliedTogether<number, number, null>(async () => {
      throw new Error('statement failed');
    });
    group.add('a', 1);
    group.add('b', 2);
    await expect(group.outcomeOf('a', null)).rejects.toThrow('statement failed');
    await expect(group.outcomeOf('b', null)).rejects.toThrow('statement failed');
  });
});

describe('waves by key', () => {
  it('puts the n-th item of each key in the n-th wave, keeping their order', () => {
    const items = ['x1', 'y1', 'x2', 'z1', 'x3', 'y2'];
    expect(waves(items, (s) => s[0]!)).toEqual([['x1', 'y1', 'z1'], ['x2', 'y2'], ['x3']]);
  });
});
