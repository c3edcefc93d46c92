// The GraphQL over HTTP audits of graphql-http (the reference implementation of the GraphQL over HTTP
// specification) run against /graphql with an API key: every MUST, SHOULD and MAY the audits check.
import { serverAudits } from 'graphql-http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/app.ts';
import { tenantWithKey } from './support/factories.ts';

let t: TestApp;
let url: string;
let apiKey: string;
beforeAll(async () => {
  t = await createTestApp();
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
    const failed: string[] = [];
    for (const audit of audits) {
      const result = await audit.fn();
      if (result.status !== 'ok') failed.push(`${audit.id} ${audit.name}: ${result.status} — ${result.reason}`);
    }
    expect(failed).toEqual([]);
  });
});
