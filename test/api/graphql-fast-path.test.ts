// Hot documents on POST /graphql skip Yoga (src/http/graphql-fast.ts). The same requests go to an app
// with the fast path and to one without it, enough times for every document to be hot in both: the
// answers must not differ in status, the headers a client reads, or body.
import { randomUUID } from 'node:crypto';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPILE_AFTER_RUNS } from '../../src/http/graphql-jit.ts';
import { GRAPHQL_LIMITS } from '../../src/http/graphql-limits.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { scoredCustomer, tenantWithKey } from '../support/factories.ts';

let fast: TestApp;
let yoga: TestApp;
const registry = new Registry();
let apiKey: string;
let customerId: string;
beforeAll(async () => {
  // Each case is sent a few dozen times to each app: far more than a tenant's rate limit allows.
  const env = { RATE_LIMIT_SCALE: '100000', CORS_ORIGINS: 'https://app.example' };
  fast = await createTestApp({ env, registry });
  yoga = await createTestApp({ env: { ...env, GRAPHQL_FAST_PATH: 'false' }, registry: new Registry() });
  const t = await tenantWithKey(fast.prisma);
  apiKey = t.apiKey;
  customerId = (await scoredCustomer(fast.prisma, t.tenantId, { usage: 70, engagement: 60, support: 50, billing: 40, growth: 30 }, 0.3))
    .customer.id;
  await scoredCustomer(fast.prisma, t.tenantId, { usage: 20, engagement: 30, support: 40, billing: 50, growth: null }, 0.7);
});
afterAll(async () => {
  await fast?.close();
  await yoga?.close();
});

const fastAnswers = async () => (await registry.getSingleMetric('graphql_fast_path_answers_total')!.get()).values[0]?.value ?? 0;

const PAGE =
  '{ customers(first: 25) { nodes { id name externalId healthScore healthStatus churnProbability churnRiskLevel createdAt } pageInfo { hasNextPage endCursor } } }';
const PAGE_OF =
  'query Page($n: Int, $after: String) { customers(first: $n, after: $after) { nodes { id name health { score dimensions { key score } } } pageInfo { hasNextPage } totalCount } }';
const ONE = 'query One($id: UUID!) { customer(id: $id) { id name churnPrediction { probability } } }';
const VIEWER = '{ viewer { kind } }';
const TWO = 'query A { viewer { kind } } query B { customers(first: 1) { totalCount } }';
const NESTED = 'query Nested($a: Int, $b: Int) { customers(first: $a) { nodes { id recentEvents(first: $b) { kind } } } }';
const LISTED = 'query Listed($status: HealthStatus, $n: Int) { customers(first: $n, healthStatus: $status) { totalCount } }';
const AUDIT = 'query Audit($since: DateTime) { auditEvents(first: 1, since: $since) { nodes { action } } }';
const INTROSPECTION = '{ __schema { queryType { name } types { name kind } } }';
const nest = (n: number): string => (n === 0 ? 'kind' : `... on Viewer { ${nest(n - 1)} }`);
const WIDE =
  'nodes { id name health { dimensions { key score signals { key label value } } } churnPrediction { riskFactors { code description impact } } }';
/** One document over each limit. */
const OVER_LIMITS = {
  depth: `{ viewer { ${nest(GRAPHQL_LIMITS.maxDepth + 1)} } }`,
  aliases: `{ ${Array.from({ length: GRAPHQL_LIMITS.maxAliases + 1 }, (_, i) => `a${i}: viewer { kind }`).join(' ')} }`,
  tokens: `{ viewer { ${'kind '.repeat(GRAPHQL_LIMITS.maxTokens)} } }`,
  cost: `{ ${Array.from({ length: 10 }, (_, i) => `a${i}: customers(first: 100) { ${WIDE} }`).join(' ')} }`,
};

interface Case {
  name: string;
  body: unknown;
  headers?: Record<string, string>;
  /** Whether the fast path answers it once hot (otherwise Yoga does, in both apps). */
  fastPath: boolean;
}

const key = () => ({ 'x-api-key': apiKey });
const CASES = (): Case[] => [
  { name: 'a page, no Accept', body: { query: PAGE }, headers: key(), fastPath: true },
  { name: 'a page, Accept application/json', body: { query: PAGE }, headers: { ...key(), accept: 'application/json' }, fastPath: true },
  {
    name: 'a page, Accept application/graphql-response+json',
    body: { query: PAGE },
    headers: { ...key(), accept: 'application/graphql-response+json' },
    fastPath: true,
  },
  {
    name: 'a page, Accept of both with a quality',
    body: { query: PAGE },
    headers: { ...key(), accept: 'application/graphql-response+json, application/json;q=0.9' },
    fastPath: true,
  },
  { name: 'a page, Accept */*', body: { query: PAGE }, headers: { ...key(), accept: '*/*' }, fastPath: true },
  { name: 'a page, Accept text/event-stream', body: { query: PAGE }, headers: { ...key(), accept: 'text/event-stream' }, fastPath: false },
  {
    name: 'a page, Accept of JSON and an event stream',
    body: { query: PAGE },
    headers: { ...key(), accept: 'text/event-stream, application/json' },
    fastPath: true,
  },
  {
    name: 'a page, Accept JSON in another charset',
    body: { query: PAGE },
    headers: { ...key(), accept: 'application/json; charset=latin1' },
    fastPath: false,
  },
  { name: 'a page, Accept text/html', body: { query: PAGE }, headers: { ...key(), accept: 'text/html' }, fastPath: false },
  {
    name: 'variables and the right operationName',
    body: { query: PAGE_OF, variables: { n: 1 }, operationName: 'Page' },
    headers: key(),
    fastPath: true,
  },
  { name: 'variables: null', body: { query: PAGE_OF, variables: null }, headers: key(), fastPath: true },
  {
    name: 'an operationName the document lacks',
    body: { query: PAGE_OF, variables: { n: 1 }, operationName: 'Nope' },
    headers: key(),
    fastPath: false,
  },
  {
    name: 'a forged cursor (an execution error)',
    body: { query: PAGE_OF, variables: { n: 1, after: 'forged' } },
    headers: key(),
    fastPath: true,
  },
  {
    name: 'a forged cursor, Accept application/graphql-response+json',
    body: { query: PAGE_OF, variables: { n: 1, after: 'forged' } },
    headers: { ...key(), accept: 'application/graphql-response+json' },
    fastPath: true,
  },
  { name: 'a page size out of range', body: { query: PAGE_OF, variables: { n: 500 } }, headers: key(), fastPath: true },
  { name: 'a customer by id', body: { query: ONE, variables: { id: customerId } }, headers: key(), fastPath: true },
  { name: 'a customer that does not exist', body: { query: ONE, variables: { id: randomUUID() } }, headers: key(), fastPath: true },
  { name: 'a variable that is no UUID', body: { query: ONE, variables: { id: 'nope' } }, headers: key(), fastPath: true },
  {
    name: 'a variable that is no UUID, Accept application/graphql-response+json',
    body: { query: ONE, variables: { id: 'nope' } },
    headers: { ...key(), accept: 'application/graphql-response+json' },
    fastPath: true,
  },
  { name: 'a missing variable', body: { query: ONE }, headers: key(), fastPath: true },
  { name: 'a variable that is no enum value', body: { query: LISTED, variables: { status: 'sunny' } }, headers: key(), fastPath: true },
  { name: 'a variable of the wrong type', body: { query: LISTED, variables: { n: 'ten' } }, headers: key(), fastPath: true },
  {
    name: 'two variables of the wrong type, Accept application/graphql-response+json',
    body: { query: LISTED, variables: { status: 3, n: 1.5 } },
    headers: { ...key(), accept: 'application/graphql-response+json' },
    fastPath: true,
  },
  { name: 'a variable that is no date', body: { query: AUDIT, variables: { since: 'yesterday' } }, headers: key(), fastPath: true },
  { name: 'a date as a variable', body: { query: AUDIT, variables: { since: '2026-01-01T00:00:00Z' } }, headers: key(), fastPath: true },
  { name: 'a foreign origin', body: { query: PAGE }, headers: { ...key(), origin: 'https://elsewhere.example' }, fastPath: true },
  {
    name: 'an origin allowed across origins',
    body: { query: PAGE },
    headers: { ...key(), origin: 'https://app.example' },
    fastPath: false,
  },
  { name: 'no credentials', body: { query: VIEWER }, fastPath: true },
  { name: 'an unknown API key', body: { query: VIEWER }, headers: { 'x-api-key': 'sk_unknown' }, fastPath: false },
  { name: 'the viewer', body: { query: VIEWER }, headers: key(), fastPath: true },
  { name: 'two operations, the first asked for', body: { query: TWO, operationName: 'A' }, headers: key(), fastPath: false },
  { name: 'two operations, the second asked for', body: { query: TWO, operationName: 'B' }, headers: key(), fastPath: false },
  { name: 'two operations, none asked for', body: { query: TWO }, headers: key(), fastPath: false },
  { name: 'a field that does not exist', body: { query: '{ customers(first: 1) { nope } }' }, headers: key(), fastPath: false },
  { name: 'a document that does not parse', body: { query: '{ customers(' }, headers: key(), fastPath: false },
  ...Object.entries(OVER_LIMITS).map(([limit, query]) => ({
    name: `a document over the ${limit} limit`,
    body: { query },
    headers: key(),
    fastPath: false,
  })),
  {
    name: 'page sizes as variables within the cost limit',
    body: { query: NESTED, variables: { a: 2, b: 2 } },
    headers: key(),
    fastPath: true,
  },
  {
    name: 'page sizes as variables over the cost limit',
    body: { query: NESTED, variables: { a: 100, b: 100 } },
    headers: key(),
    fastPath: true,
  },
  { name: 'introspection', body: { query: INTROSPECTION }, headers: key(), fastPath: true },
  { name: 'an unexpected parameter', body: { query: VIEWER, nope: 1 }, headers: key(), fastPath: false },
  { name: 'extensions', body: { query: VIEWER, extensions: { a: 1 } }, headers: key(), fastPath: false },
];

async function ask(app: TestApp, c: Case) {
  const r = await app.app.inject({
    method: 'POST',
    url: '/graphql',
    headers: { 'content-type': 'application/json', ...c.headers },
    payload: JSON.stringify(c.body),
  });
  const pick = ['content-type', 'content-length', 'retry-after', 'cache-control', 'content-security-policy', 'allow', 'vary'];
  for (const h of Object.keys(r.headers)) if (h.startsWith('access-control-')) pick.push(h);
  const headers = Object.fromEntries(pick.filter((h) => r.headers[h] !== undefined).map((h) => [h, String(r.headers[h])]));
  return { status: r.statusCode, headers, body: r.body };
}

describe('the fast path for hot documents on POST /graphql', () => {
  // About 900 requests (every case made hot in both apps): far more than one test's default time on a busy machine.
  it('answers every request as Yoga does, status, headers and body', { timeout: 180_000 }, async () => {
    const differences: string[] = [];
    const cases = CASES();
    // Hot in both apps first: the fast path serves a document only once it has proved hot.
    for (let i = 0; i < COMPILE_AFTER_RUNS; i++) for (const c of cases) await Promise.all([ask(fast, c), ask(yoga, c)]);
    for (const c of cases) {
      const before = await fastAnswers();
      const [ours, theirs] = [await ask(fast, c), await ask(yoga, c)];
      const served = (await fastAnswers()) - before;
      if (served !== (c.fastPath ? 1 : 0)) differences.push(`${c.name}: answered by the fast path ${served} times`);
      if (JSON.stringify(ours) !== JSON.stringify(theirs)) {
        differences.push(`${c.name}:\n  fast ${JSON.stringify(ours).slice(0, 600)}\n  yoga ${JSON.stringify(theirs).slice(0, 600)}`);
      }
    }
    expect(differences).toEqual([]);
  });

  // A document is interpreted (graphql-js) until it proves hot, then compiled (graphql-jit), and then
  // answered by the fast path where it can: none of it may show in an answer.
  it('answers each request the same on its first run as once its document is compiled', { timeout: 180_000 }, async () => {
    const differences: string[] = [];
    // A comment makes each document new to both apps: cold, as on its first sight.
    const cases = CASES().map((c) => {
      const body = c.body as { query: string };
      return { ...c, body: { ...body, query: `${body.query}\n# at every hotness` } };
    });
    for (const c of cases) {
      const first = await ask(yoga, c);
      for (let run = 1; run <= COMPILE_AFTER_RUNS + 2; run++) {
        for (const [name, app] of [
          ['fast', fast],
          ['yoga', yoga],
        ] as const) {
          const answer = await ask(app, c);
          if (JSON.stringify(answer) !== JSON.stringify(first)) {
            differences.push(
              `${c.name}, run ${run} (${name}):\n  now   ${JSON.stringify(answer).slice(0, 1400)}\n  first ${JSON.stringify(first).slice(0, 1400)}`,
            );
            break;
          }
        }
      }
    }
    expect(differences).toEqual([]);
  });

  it.each(Object.entries(OVER_LIMITS))('refuses a document over the %s limit however often it is sent', async (_, query) => {
    const before = await fastAnswers();
    for (let i = 0; i < COMPILE_AFTER_RUNS + 2; i++) {
      const body = JSON.parse((await ask(fast, { name: 'over a limit', body: { query }, headers: key(), fastPath: false })).body);
      expect(body.data).toBeUndefined();
      expect(body.errors[0].extensions.code).toBe('validation_failed');
    }
    expect(await fastAnswers()).toBe(before);
  });
});
