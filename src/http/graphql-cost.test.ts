import { type FragmentDefinitionNode, Kind, type OperationDefinitionNode, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { schema } from '../schema/index.ts';
import { operationCost } from './graphql-cost.ts';

function costOf(query: string, variables?: Record<string, unknown>) {
  const document = parse(query);
  const operation = document.definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION) as OperationDefinitionNode;
  const fragments = new Map(
    document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((f) => [f.name.value, f]),
  );
  return operationCost(schema, operation, (name) => fragments.get(name), variables);
}

const PAGE = '{ nodes { id name } }';

describe('operationCost', () => {
  it('multiplies a paged field by the page size written in the document', () => {
    expect(costOf(`{ customers(first: 50) ${PAGE} }`).cost).toBe(50 * costOf(`{ customers(first: 1) ${PAGE} }`).cost);
  });

  it('counts a page size left out, or null, as the default page of 25', () => {
    const one = costOf(`{ customers(first: 1) ${PAGE} }`).cost;
    expect(costOf(`{ customers ${PAGE} }`).cost).toBe(25 * one);
    expect(costOf(`{ customers(first: null) ${PAGE} }`).cost).toBe(25 * one);
  });

  it('counts a page size given as a variable as one row until the variables are known, and says so', () => {
    const query = `query Q($n: Int) { customers(first: $n) ${PAGE} }`;
    const one = costOf(`{ customers(first: 1) ${PAGE} }`).cost;
    expect(costOf(query)).toEqual({ cost: one, variable: true });
    expect(costOf(query, { n: 80 })).toEqual({ cost: 80 * one, variable: false });
  });

  it('takes an absent variable at its default in the document, else at the default page size', () => {
    const one = costOf(`{ customers(first: 1) ${PAGE} }`).cost;
    expect(costOf(`query Q($n: Int = 60) { customers(first: $n) ${PAGE} }`, {}).cost).toBe(60 * one);
    expect(costOf(`query Q($n: Int) { customers(first: $n) ${PAGE} }`, {}).cost).toBe(25 * one);
    expect(costOf(`query Q($n: Int = 60) { customers(first: $n) ${PAGE} }`, { n: null }).cost).toBe(25 * one);
  });

  it('never counts more rows than the largest page, nor fewer than one', () => {
    const one = costOf(`{ customers(first: 1) ${PAGE} }`).cost;
    expect(costOf(`{ customers(first: 100000) ${PAGE} }`).cost).toBe(100 * one);
    expect(costOf(`query Q($n: Int) { customers(first: $n) ${PAGE} }`, { n: -5 }).cost).toBe(one);
  });

  it('multiplies nested pages', () => {
    const inner = (n: number) =>
      costOf(`query Q($a: Int, $b: Int) { customers(first: $a) { nodes { recentEvents(first: $b) { kind } } } }`, { a: 10, b: n }).cost;
    expect(inner(100)).toBeGreaterThan(50 * inner(1));
  });

  it('walks a fragment spread many times over once, and counts a fragment spreading itself as expensive', () => {
    // F0 spreads F1 fifty times, F1 spreads F2 fifty times, …: 50^6 spreads in all, which a walk of each
    // would not finish within the test's time.
    const chain = Array.from({ length: 6 }, (_, i) => `fragment F${i} on Query { ${`...F${i + 1} `.repeat(50)} }`).join(' ');
    const { cost } = costOf(`{ ...F0 } ${chain} fragment F6 on Query { viewer { kind } }`);
    expect(cost).toBeGreaterThan(5000);
    expect(costOf('{ ...A } fragment A on Query { viewer { kind } ...A }').cost).toBeGreaterThanOrEqual(1000);
  });

  it('weighs a free-form JSON leaf as twenty others: it can hold kilobytes', () => {
    const events = (leaf: string) => costOf(`{ customers(first: 1) { nodes { recentEvents(first: 1) { ${leaf} } } } }`).cost;
    expect(events('attributes') - events('kind')).toBe(1.5 * 1.5 * 1.5 * 19);
  });

  it('costs nothing for introspection of the schema', () => {
    expect(costOf('{ __schema { types { name fields { name } } } }').cost).toBe(0);
  });
});
