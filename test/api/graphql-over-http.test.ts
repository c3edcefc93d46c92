// The GraphQL over HTTP audits of graphql-http (the reference implementation of the GraphQL over HTTP
// specification) run against /graphql with an API key: every MUST, SHOULD and MAY the audits check.
import { serverAudits } from 'graphql-http';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPILE_AFTER_RUNS } from '../../src/http/graphql-jit.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { tenantWithKey } from '../support/factories.ts';

let t: TestApp;
let url: string;
let apiKey: string;
const registry = new Registry();
beforeAll(async () => {
  // The audits run many times over (below): more requests than a tenant's rate limit allows.
  t = await createTestApp({ registry, env: { RATE_LIMIT_SCALE: '100000' } });
  apiKey = (await tenantWithKey(t.prisma)).apiKey;
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  url = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}/graphql`;
});
afterAll(() => t.close());

describe('/graphql against the GraphQL over HTTP audits', () => {
  it('passes every audit, the SHOULDs and MAYs included', async () => {
    const fetchFn = (input: RequestInfo | URL, init?: RequestInit) => {
      const headers = new Headers(init?.headers);
      headers.set('x-api-key', apiKey);
      return fetch(input, { ...init, headers });
    };
    const audits = serverAudits({ url, fetchFn });
    expect(audits.length).toBeGreaterThan(50);
    const fastAnswers = async () => (await registry.getSingleMetric('graphql_fast_path_answers_total')!.get()).values[0]?.value ?? 0;
    // Until its documents are hot Yoga answers every audit; from then on the fast path answers those it
    // takes, and must pass them all the same.
    const failed = new Set<string>();
    let lastPassFast = 0;
    for (let pass = 0; pass <= COMPILE_AFTER_RUNS; pass++) {
      const before = await fastAnswers();
      for (const audit of audits) {
        const result = await audit.fn();
        if (result.status !== 'ok') failed.add(`${audit.id} ${audit.name}: ${result.status} — ${result.reason}`);
      }
      lastPassFast = (await fastAnswers()) - before;
    }
    expect([...failed]).toEqual([]);
    expect(lastPassFast).toBeGreaterThan(0);
  });
});
