// A customer's fields are listed once (src/contract/customer-fields.ts); every place that shows a customer
// must show each of them, with the same value, whichever way it reads the customer.
import { readFileSync } from 'node:fs';
import { Kind, parse, type FragmentDefinitionNode } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CUSTOMER_FIELDS } from '../../src/contract/customer-fields.ts';
import { camelCase } from '../../src/contract/serialize.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { tenantWithKey } from '../support/factories.ts';

const NAMES = Object.keys(CUSTOMER_FIELDS);
const GRAPHQL_NAMES = NAMES.map(camelCase);

let t: TestApp;
let apiKey: string;
let id: string;
beforeAll(async () => {
  t = await createTestApp();
  const k = await tenantWithKey(t.prisma);
  apiKey = k.apiKey;
  // Every field set, to its example value, so that a read leaving one out shows as a null; the row's own
  // id and times are the database's.
  const examples = Object.entries(CUSTOMER_FIELDS)
    .filter(([name]) => !['id', 'created_at', 'updated_at'].includes(name))
    .map(([name, f]) => [camelCase(name), f.example]);
  const c = await t.prisma.customer.create({ data: { tenantId: k.tenantId, ...Object.fromEntries(examples) } as never });
  id = c.id;
});
afterAll(() => t.close());

const graphql = async (query: string) => {
  const res = await t.app.inject({ method: 'POST', url: '/graphql', headers: { 'x-api-key': apiKey }, payload: { query } });
  const body = res.json();
  expect(body.errors).toBeUndefined();
  return body.data;
};

describe('the one list of a customer’s fields', () => {
  it('is what the REST facade’s customer fragment selects', () => {
    const document = parse(readFileSync(new URL('../../src/rest/operations/customers.graphql', import.meta.url), 'utf8'));
    const fragment = document.definitions.find(
      (d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION && d.name.value === 'CustomerListItem',
    )!;
    const selected = fragment.selectionSet.selections.flatMap((s) => (s.kind === Kind.FIELD ? [s.name.value] : []));
    expect(selected.sort()).toEqual([...GRAPHQL_NAMES].sort());
  });

  it('is read the same by the plain page, the plain single read and Prisma’s planned query', async () => {
    const fields = GRAPHQL_NAMES.join(' ');
    const page = await graphql(`{ customers(first: 5) { nodes { ${fields} } } }`);
    const one = await graphql(`{ customer(id: "${id}") { ${fields} } }`);
    // A search, and a relation beside the fields, go through Prisma.
    const planned = await graphql(
      `{ customers(first: 5, search: "${CUSTOMER_FIELDS.name.example}") { nodes { ${fields} identities { provider } } } }`,
    );
    const { identities: _, ...fromPrisma } = planned.customers.nodes[0];
    expect(Object.values(one.customer)).not.toContain(null);
    expect(page.customers.nodes[0]).toEqual(one.customer);
    expect(fromPrisma).toEqual(one.customer);
  });

  it('is answered by the REST API under the contract’s names, with the values GraphQL gives', async () => {
    const rest = (await t.app.inject({ method: 'GET', url: `/api/v1/customers/${id}`, headers: { 'x-api-key': apiKey } })).json();
    const one = (await graphql(`{ customer(id: "${id}") { ${GRAPHQL_NAMES.join(' ')} } }`)).customer;
    for (const name of NAMES) expect(rest[name], name).toEqual(one[camelCase(name)]);
  });

  it('keeps the customers CSV’s columns where spreadsheets built on it expect them, a new one coming after them', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/exports/customers?format=csv', headers: { 'x-api-key': apiKey } });
    const established =
      'id,external_id,name,email,domain,identities,health_score,health_status,usage_score,engagement_score,support_score,billing_score,' +
      'growth_score,weakest_dimension,trend_7d,trend_30d,health_computed_at,churn_probability,churn_risk_level,churn_model_version,' +
      'churn_predicted_at,created_at,updated_at';
    const header = res.body.split('\n')[0]!.trim().split(',');
    expect(header.slice(0, established.split(',').length).join(',')).toBe(established);
  });

  it('has a column each in the customers export, with the same values', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/v1/exports/customers?format=ndjson',
      headers: { 'x-api-key': apiKey },
    });
    expect(res.statusCode).toBe(200);
    const [row] = res.body
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const one = (await graphql(`{ customer(id: "${id}") { ${GRAPHQL_NAMES.join(' ')} } }`)).customer;
    for (const name of NAMES) expect(row[name], name).toEqual(one[camelCase(name)]);
  });
});
