import net, { type AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ConfigError } from '../../src/config.ts';
import { createTestApp, type TestApp, testConfig } from '../support/app.ts';
import { customer, tenantWithKey, userWithSession } from '../support/factories.ts';

// Input that once reached the database or the client unchecked: each is now a 4xx problem (REST) or a
// GraphQL error coded validation_failed, and changes nothing.
let t: TestApp;
let k: Awaited<ReturnType<typeof tenantWithKey>>;
let c: Awaited<ReturnType<typeof customer>>;

beforeAll(async () => {
  t = await createTestApp();
  k = await tenantWithKey(t.prisma);
  c = await customer(t.prisma, k.tenantId, { externalId: 'ext-1' });
});
afterAll(() => t.close());

const json = { 'content-type': 'application/json' };
const ZERO_ID = '00000000-0000-4000-8000-000000000000';
const cursor = (value: unknown, tag?: string) =>
  Buffer.from(JSON.stringify(tag ? [value, ZERO_ID, tag] : [value, ZERO_ID])).toString('base64url');
const deepObject = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;

const rest = (method: 'GET' | 'POST' | 'PUT' | 'PATCH', url: string, body?: string) =>
  t.app.inject({
    method,
    url,
    headers: { 'x-api-key': k.apiKey, ...(body !== undefined ? json : {}) },
    ...(body !== undefined ? { payload: body } : {}),
  });
const gql = async (query: string, variables: object = {}) =>
  (
    await t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'x-api-key': k.apiKey, ...json },
      payload: JSON.stringify({ query, variables }),
    })
  ).json();
const gqlRaw = async (payload: string) =>
  (await t.app.inject({ method: 'POST', url: '/graphql', headers: { 'x-api-key': k.apiKey, ...json }, payload })).json();

async function stored() {
  const [customers, signals, outcomes] = await Promise.all([
    t.prisma.customer.count({ where: { tenantId: k.tenantId } }),
    t.prisma.signal.count({ where: { tenantId: k.tenantId } }),
    t.prisma.churnOutcome.count({ where: { tenantId: k.tenantId } }),
  ]);
  return { customers, signals, outcomes };
}

describe('crafted REST input is a 4xx problem naming the field, never a 500', () => {
  const cases: { name: string; method: 'GET' | 'POST'; url: () => string; body?: () => string; status: number; path?: string }[] = [
    {
      name: 'a cursor carrying year 0',
      method: 'GET',
      url: () => `/api/v1/customers?cursor=${cursor('0000-01-01T00:00:00.000Z')}`,
      status: 400,
      path: 'cursor',
    },
    {
      name: 'a cursor carrying year -271821',
      method: 'GET',
      url: () => `/api/v1/customers?cursor=${cursor('-271821-04-20T00:00:00.000Z')}`,
      status: 400,
      path: 'cursor',
    },
    {
      name: 'a churn outcome at year 0',
      method: 'POST',
      url: () => `/api/v1/customers/${c.id}/churn-outcome`,
      body: () => '{"churned":true,"at":"0000-01-01T00:00:00Z"}',
      status: 400,
      path: 'at',
    },
    {
      name: 'a churn outcome at year +275760',
      method: 'POST',
      url: () => `/api/v1/customers/${c.id}/churn-outcome`,
      body: () => '{"churned":true,"at":"+275760-09-13T00:00:00Z"}',
      status: 400,
      path: 'at',
    },
    {
      name: 'event properties nested 20,000 deep',
      method: 'POST',
      url: () => '/api/v1/events',
      body: () => `{"events":[{"external_id":"ext-1","event":"e","properties":${deepObject(20_000)}}]}`,
      status: 400,
      path: 'events',
    },
    {
      name: 'event properties with 5,000 items',
      method: 'POST',
      url: () => '/api/v1/events',
      body: () =>
        JSON.stringify({ events: [{ external_id: 'ext-1', event: 'e', properties: { list: Array.from({ length: 5000 }, () => 0) } }] }),
      status: 400,
      path: 'events',
    },
    {
      name: 'event properties with an unpaired surrogate',
      method: 'POST',
      url: () => '/api/v1/events',
      body: () => '{"events":[{"external_id":"ext-1","event":"e","properties":{"a":"\\ud800"}}]}',
      status: 400,
      path: 'events',
    },
    {
      name: 'a customer name with an unpaired surrogate',
      method: 'POST',
      url: () => '/api/v1/customers',
      body: () => '{"name":"a\\udc00b"}',
      status: 400,
      path: 'name',
    },
    { name: 'a NUL byte in a query string', method: 'GET', url: () => '/api/v1/customers?risk_level=low%00', status: 400, path: 'url' },
    { name: 'a NUL byte in a path parameter', method: 'GET', url: () => `/api/v1/customers/${c.id}%00`, status: 400, path: 'url' },
    { name: 'a page size of 1e309', method: 'GET', url: () => '/api/v1/customers?limit=1e309', status: 400, path: 'limit' },
    { name: 'a page size of Infinity', method: 'GET', url: () => '/api/v1/customers?limit=Infinity', status: 400, path: 'limit' },
    { name: 'a page size of NaN', method: 'GET', url: () => '/api/v1/customers?limit=NaN', status: 400, path: 'limit' },
    { name: 'a page size of -0', method: 'GET', url: () => '/api/v1/customers?limit=-0', status: 400, path: 'limit' },
    { name: 'an enum value in another case', method: 'GET', url: () => '/api/v1/alerts?status=OPEN', status: 400, path: 'status' },
    {
      name: '100,000 events in one batch',
      method: 'POST',
      url: () => '/api/v1/events',
      body: () => JSON.stringify({ events: Array.from({ length: 100_000 }, () => ({})) }),
      status: 400,
      path: 'events',
    },
  ];

  it.each(cases.map((x) => [x.name, x] as const))('%s', async (_name, x) => {
    const before = await stored();
    const res = await rest(x.method, x.url(), x.body?.());
    expect(res.statusCode).toBe(x.status);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json().errors?.[0]?.path ?? '').toMatch(new RegExp(`^${x.path}`));
    expect(await stored()).toEqual(before);
  });

  it('still coerces query strings: limit=1 is a page of one', async () => {
    await customer(t.prisma, k.tenantId);
    const res = await rest('GET', '/api/v1/customers?limit=1');
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toHaveLength(1);
  });
});

describe('control characters in stored one-line text', () => {
  // A public address literal: accepted at creation without a name to resolve, so only the CR/LF decides.
  const URL_WITH_CRLF = 'https://93.184.216.34/hook\r\nX-Injected: 1';

  it('refuses an endpoint URL holding CR/LF with a 400 problem naming url, and stores nothing', async () => {
    const res = await rest('POST', '/api/v1/webhook-endpoints', JSON.stringify({ url: URL_WITH_CRLF, events: ['invoice.paid'] }));
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json().errors).toEqual([expect.objectContaining({ path: 'url', message: expect.stringMatching(/control characters/) })]);
    expect(await t.prisma.webhookEndpoint.count({ where: { tenantId: k.tenantId } })).toBe(0);
  });

  it('refuses a tab, a DEL or a C1 control in an endpoint URL, on update too', async () => {
    const created = await rest(
      'POST',
      '/api/v1/webhook-endpoints',
      JSON.stringify({ url: 'https://93.184.216.34/ok', events: ['invoice.paid'] }),
    );
    expect(created.statusCode).toBe(201);
    for (const url of ['https://93.184.216.34/a\tb', 'https://93.184.216.34/a\u007fb', 'https://93.184.216.34/a\u0085b']) {
      const res = await rest('PATCH', `/api/v1/webhook-endpoints/${created.json().id}`, JSON.stringify({ url }));
      expect(res.statusCode, JSON.stringify(url)).toBe(400);
      expect(res.json().errors[0].path).toBe('url');
    }
    expect((await t.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: created.json().id } })).url).toBe('https://93.184.216.34/ok');
    await t.prisma.webhookEndpoint.delete({ where: { id: created.json().id } });
  });

  it('refuses a bell in an endpoint description but keeps its line breaks', async () => {
    const bell = await rest(
      'POST',
      '/api/v1/webhook-endpoints',
      JSON.stringify({ url: 'https://93.184.216.34/d', events: ['invoice.paid'], description: 'a\u0007b' }),
    );
    expect(bell.statusCode).toBe(400);
    expect(bell.json().errors[0].path).toBe('description');
    const lines = await rest(
      'POST',
      '/api/v1/webhook-endpoints',
      JSON.stringify({ url: 'https://93.184.216.34/d', events: ['invoice.paid'], description: 'line one\nline two' }),
    );
    expect(lines.statusCode).toBe(201);
    await t.prisma.webhookEndpoint.delete({ where: { id: lines.json().id } });
  });

  it('refuses CR/LF in a customer’s name and external id, and in an API key’s name', async () => {
    const name = await rest('POST', '/api/v1/customers', JSON.stringify({ name: 'Acme\r\nInc' }));
    expect([name.statusCode, name.json().errors?.[0]?.path]).toEqual([400, 'name']);
    const externalId = await rest('PATCH', `/api/v1/customers/${c.id}`, JSON.stringify({ external_id: 'a\nb' }));
    expect([externalId.statusCode, externalId.json().errors?.[0]?.path]).toEqual([400, 'external_id']);
    const admin = await userWithSession(t.prisma, t.sessions, k.tenantId, 'admin');
    const key = await t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { authorization: `Bearer ${admin.token}`, ...json },
      payload: JSON.stringify({ query: 'mutation($n: String!) { createApiKey(name: $n) { secret } }', variables: { n: 'deploy\nkey' } }),
    });
    expect(key.json().errors?.[0]?.extensions?.code).toBe('validation_failed');
    expect(await t.prisma.apiKey.count({ where: { tenantId: k.tenantId } })).toBe(1);
  });
});

describe('crafted GraphQL input is an error coded validation_failed, never an internal error', () => {
  const cases: { name: string; query: string; variables?: () => object; raw?: () => string }[] = [
    {
      name: 'a name-order cursor carrying a NUL',
      query: 'query($a: String) { customers(after: $a, orderBy: { field: name, direction: asc }) { nodes { id } } }',
      variables: () => ({ a: cursor('a\u0000b', 'name.asc') }),
    },
    {
      name: 'a score-order cursor carrying 1e308',
      query: 'query($a: String) { customers(after: $a, orderBy: { field: healthScore, direction: asc }) { nodes { id } } }',
      variables: () => ({ a: cursor(1e308, 'healthScore.asc') }),
    },
    {
      name: 'a probability-order cursor carrying -1e300',
      query: 'query($a: String) { customers(after: $a, orderBy: { field: churnProbability, direction: desc }) { nodes { id } } }',
      variables: () => ({ a: cursor(-1e300, 'churnProbability.desc') }),
    },
    { name: 'a \\u0000 literal in customers(search:)', query: '{ customers(search: "a\\u0000b") { nodes { id } } }' },
    { name: 'a \\u0000 literal in createCustomer(name:)', query: 'mutation { createCustomer(input: { name: "a\\u0000b" }) { id } }' },
    {
      name: 'a \\u0000 literal in a usage event field',
      query: 'mutation { recordUsageEvents(events: [{ externalId: "ext-1", event: "e", userId: "u\\u0000" }]) { accepted } }',
    },
    {
      name: 'a \\u0000 literal inside JSON event properties',
      query: 'mutation { recordUsageEvents(events: [{ externalId: "ext-1", event: "e", properties: { a: "x\\u0000" } }]) { accepted } }',
    },
    {
      name: 'event properties nested 20,000 deep through recordUsageEvents',
      query: '',
      raw: () =>
        `{"query":"mutation($e: [UsageEventInput!]!) { recordUsageEvents(events: $e) { accepted } }","variables":{"e":[{"externalId":"ext-1","event":"e","properties":${deepObject(20_000)}}]}}`,
    },
    {
      name: 'a churn outcome at year 0',
      query: 'mutation($id: UUID!) { recordChurnOutcome(customerId: $id, churned: true, at: "0000-01-01T00:00:00Z") { churned } }',
      variables: () => ({ id: c.id }),
    },
    {
      name: 'an idempotency key of 5,000 characters',
      query: `mutation { recordUsageEvents(events: [{ externalId: "ext-1", event: "e" }], idempotencyKey: "${'k'.repeat(5000)}") { accepted } }`,
    },
    { name: 'a search of 201 characters', query: `{ customers(search: "${'s'.repeat(201)}") { nodes { id } } }` },
    {
      name: 'a password of 20,000 characters',
      query: 'mutation($e: String!, $p: String!) { login(email: $e, password: $p) { token } }',
      variables: () => ({ e: 'a@b.c', p: 'p'.repeat(20_000) }),
    },
    { name: 'an Int beyond 32 bits', query: '{ customers(first: 2147483648) { nodes { id } } }' },
    {
      name: 'a Float of 1e309 through a variable',
      query: '',
      raw: () =>
        '{"query":"mutation($w: HealthWeightsInput!) { setHealthWeights(input: $w) { isDefault } }","variables":{"w":{"usage":1e309,"engagement":0,"support":0,"billing":0,"growth":0}}}',
    },
    { name: 'an enum value in another case', query: '{ customers(riskLevel: HIGH) { nodes { id } } }' },
    {
      name: '100,000 usage events through a variable',
      query: 'mutation($e: [UsageEventInput!]!) { recordUsageEvents(events: $e) { accepted } }',
      variables: () => ({ e: Array.from({ length: 100_000 }, () => ({})) }),
    },
    {
      name: 'a __proto__ key in JSON event properties',
      query:
        'mutation { recordUsageEvents(events: [{ externalId: "ext-1", event: "e", properties: { __proto__: { polluted: true } } }]) { accepted } }',
    },
  ];

  it('an unpaired surrogate in variables is refused with the request body, naming the variable', async () => {
    const before = await stored();
    const res = await t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'x-api-key': k.apiKey, ...json },
      payload: '{"query":"mutation($n: String!) { createCustomer(input: { name: $n }) { id } }","variables":{"n":"a\\ud800b"}}',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'validation_failed', errors: [{ path: 'variables.n' }] });
    expect(await stored()).toEqual(before);
  });

  it.each(cases.map((x) => [x.name, x] as const))('%s', async (_name, x) => {
    const before = await stored();
    const body = x.raw ? await gqlRaw(x.raw()) : await gql(x.query, x.variables?.() ?? {});
    expect(body.errors?.[0]?.extensions?.code).toBe('validation_failed');
    expect(await stored()).toEqual(before);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('names the field a bad string came in', async () => {
    const body = await gql('mutation { createCustomer(input: { name: "a\\u0000b" }) { id } }');
    expect(body.errors[0].extensions.errors).toEqual([{ path: 'input.name', message: expect.stringMatching(/NUL/) }]);
  });
});

describe('REST bodies are typed as sent', () => {
  const cases: { name: string; url: () => string; body: string; path: string }[] = [
    { name: 'a number as a name', url: () => '/api/v1/customers', body: '{"name":123}', path: 'name' },
    { name: 'an array as a name', url: () => '/api/v1/customers', body: '{"name":["x"]}', path: 'name' },
    { name: 'churned: null', url: () => `/api/v1/customers/${c.id}/churn-outcome`, body: '{"churned":null}', path: 'churned' },
    { name: 'churned: 0', url: () => `/api/v1/customers/${c.id}/churn-outcome`, body: '{"churned":0}', path: 'churned' },
    { name: 'churned: "false"', url: () => `/api/v1/customers/${c.id}/churn-outcome`, body: '{"churned":"false"}', path: 'churned' },
  ];

  it.each(cases.map((x) => [x.name, x] as const))('refuses %s with 400 naming the field, storing nothing', async (_name, x) => {
    const before = await stored();
    const res = await rest('POST', x.url(), x.body);
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('validation_failed');
    expect(res.json().errors.map((e: { path: string }) => e.path)).toContain(x.path);
    expect(await stored()).toEqual(before);
  });
});

describe('framework errors and /problems', () => {
  it.each(['__proto__', 'constructor', 'toString', 'hasOwnProperty'])('answers 404 for /problems/%s', async (code) => {
    const res = await t.app.inject({ method: 'GET', url: `/problems/${code}` });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  });

  it('still describes a real code', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/problems/validation_failed' });
    expect(res.json()).toEqual({ code: 'validation_failed', status: 400, title: 'Validation failed' });
  });

  it('answers a path parameter over the length limit with a 414 problem', async () => {
    const res = await rest('GET', `/api/v1/customers/${'a'.repeat(300)}`);
    expect(res.statusCode).toBe(414);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json().code).toBe('uri_too_long');
  });

  it('answers a URL with broken percent-encoding with a 400 problem', async () => {
    const res = await rest('GET', '/api/v1/customers/%E0%A4%A');
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json().code).toBe('bad_request');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  describe('over a real socket', () => {
    let port: number;
    let live: TestApp;
    beforeAll(async () => {
      live = await createTestApp();
      await live.app.listen({ host: '127.0.0.1', port: 0 });
      port = (live.app.server.address() as AddressInfo).port;
    });
    afterAll(() => live.close());

    const send = (raw: string) =>
      new Promise<string>((resolve) => {
        let data = '';
        const socket = net.connect(port, '127.0.0.1', () => socket.write(raw));
        socket.on('data', (d) => (data += d.toString()));
        socket.on('error', () => undefined);
        socket.on('close', () => resolve(data));
      });
    const parse = (answer: string) => {
      const [head, body] = answer.split('\r\n\r\n');
      return { head: head!.toLowerCase(), body: JSON.parse(body!) };
    };

    it('answers headers over the size limit with a 431 problem', async () => {
      const { head, body } = parse(await send(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: ${'a'.repeat(20_000)}\r\n\r\n`));
      expect(head).toMatch(/^http\/1\.1 431/);
      expect(head).toContain('content-type: application/problem+json');
      expect(head).toContain('x-content-type-options: nosniff');
      expect(body).toMatchObject({ status: 431, code: 'headers_too_large' });
    });

    it('answers a request line that is not HTTP with a 400 problem', async () => {
      const { head, body } = parse(await send('HELLO WORLD\r\n\r\n'));
      expect(head).toMatch(/^http\/1\.1 400/);
      expect(head).toContain('content-type: application/problem+json');
      expect(body).toMatchObject({ status: 400, code: 'bad_request' });
    });
  });
});

describe('security headers', () => {
  it.each([
    ['a REST answer', { method: 'GET', url: '/api/v1/customers', auth: true }],
    ['a REST error', { method: 'GET', url: '/api/v1/customers', auth: false }],
    ['a route that does not exist', { method: 'GET', url: '/nowhere', auth: false }],
    ['a GraphQL answer', { method: 'POST', url: '/graphql', auth: true, payload: '{"query":"{ viewer { kind } }"}' }],
    ['the login answer', { method: 'POST', url: '/api/v1/auth/login', auth: false, payload: '{"email":"a@b.c","password":"x"}' }],
  ] as const)('%s is not sniffed, cached or sent a referrer', async (_name, r) => {
    const res = await t.app.inject({
      method: r.method,
      url: r.url,
      headers: { ...(r.auth ? { 'x-api-key': k.apiKey } : {}), ...('payload' in r ? json : {}) },
      ...('payload' in r ? { payload: r.payload } : {}),
    });
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['content-security-policy']).toBe("default-src 'none'; frame-ancestors 'none'");
  });

  it('leaves the dashboard its own policy and caching', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/app/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-security-policy']).toMatch(/script-src 'self'/);
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });
});

describe('CORS on /graphql', () => {
  const preflight = (app: TestApp, origin: string) =>
    app.app.inject({
      method: 'OPTIONS',
      url: '/graphql',
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, authorization' },
    });
  const post = (app: TestApp, origin: string) =>
    app.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { origin, 'x-api-key': k.apiKey, ...json },
      payload: '{"query":"{ viewer { kind } }"}',
    });

  it('gives a foreign origin no CORS headers at all', async () => {
    for (const res of [await preflight(t, 'https://evil.example'), await post(t, 'https://evil.example')]) {
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
      expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    }
  });

  it('allows an origin listed in CORS_ORIGINS, without credentials, and no other', async () => {
    const app = await createTestApp({ env: { CORS_ORIGINS: 'https://app.example.com, https://admin.example.com' } });
    try {
      const pre = await preflight(app, 'https://admin.example.com');
      expect(pre.headers['access-control-allow-origin']).toBe('https://admin.example.com');
      expect(pre.headers['access-control-allow-headers']).toMatch(/authorization/);
      const res = await post(app, 'https://app.example.com');
      expect(res.headers['access-control-allow-origin']).toBe('https://app.example.com');
      expect(res.headers['access-control-allow-credentials']).toBeUndefined();
      expect((await post(app, 'https://evil.example')).headers['access-control-allow-origin']).toBeUndefined();
    } finally {
      await app.close();
    }
  });

  it('refuses a CORS origin with a path at start-up', () => {
    expect(() => testConfig('postgresql://x/y', { CORS_ORIGINS: 'https://app.example.com/path' })).toThrow(ConfigError);
  });
});

describe('error masking', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  // Development mode as many run it: NODE_ENV=development in the process and in the config.
  async function devApp(env: Record<string, string> = {}) {
    vi.stubEnv('NODE_ENV', 'development');
    const app = await createTestApp({ env: { NODE_ENV: 'development', ...env } });
    const key = await tenantWithKey(app.prisma);
    app.services.churn.startTraining = async () => {
      throw new Error('connect ECONNREFUSED 10.1.2.3:5432 (internal detail)');
    };
    return { app, key };
  }

  it('never sends the original error or its stack in development mode', async () => {
    const { app, key } = await devApp();
    try {
      const res = await app.app.inject({
        method: 'POST',
        url: '/graphql',
        headers: { 'x-api-key': key.apiKey, ...json },
        payload: '{"query":"mutation { startChurnTraining { id } }"}',
      });
      expect(res.json().errors[0].message).toBe('Unexpected error.');
      expect(res.body).not.toMatch(/ECONNREFUSED|originalError|stack|\.ts:\d+/);
      const r = await app.app.inject({ method: 'POST', url: '/api/v1/churn-model/train', headers: { 'x-api-key': key.apiKey } });
      expect(r.statusCode).toBe(500);
      expect(r.body).not.toMatch(/ECONNREFUSED|stack|\.ts:\d+/);
    } finally {
      await app.close();
    }
  });

  it('shows the original error only with GRAPHQL_DEBUG_ERRORS=true', async () => {
    const { app, key } = await devApp({ GRAPHQL_DEBUG_ERRORS: 'true' });
    try {
      const res = await app.app.inject({
        method: 'POST',
        url: '/graphql',
        headers: { 'x-api-key': key.apiKey, ...json },
        payload: '{"query":"mutation { startChurnTraining { id } }"}',
      });
      expect(res.json().errors[0].extensions.originalError.message).toMatch(/ECONNREFUSED/);
    } finally {
      await app.close();
    }
  });

  it('refuses GRAPHQL_DEBUG_ERRORS in production', () => {
    expect(() =>
      testConfig('postgresql://x/y', {
        NODE_ENV: 'production',
        ENCRYPTION_KEY: Buffer.alloc(32).toString('base64'),
        GRAPHQL_DEBUG_ERRORS: 'true',
      }),
    ).toThrow(/GRAPHQL_DEBUG_ERRORS/);
  });
});
