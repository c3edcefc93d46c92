import { randomBytes } from 'node:crypto';
import net, { type AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GRAPHQL_LIMITS } from '../../src/http/graphql-limits.ts';
import { createLogger } from '../../src/runtime/logger.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { customer, tenantWithKey, userWithSession } from '../support/factories.ts';
import * as p from '../support/providers.ts';

// Hostile input on every public entry point: each case is refused with a clear 4xx problem, never a
// 5xx, and changes nothing.
const logLines: string[] = [];
let t: TestApp;
let k: Awaited<ReturnType<typeof tenantWithKey>>;

beforeAll(async () => {
  // Everything the service logs at debug level, to search for secrets afterwards.
  const sink = new Writable({
    write(chunk, _enc, done) {
      logLines.push(chunk.toString());
      done();
    },
  });
  t = await createTestApp({
    env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' },
    logger: createLogger({ log: { level: 'debug' }, env: 'test' }, 'chs', sink),
  });
  k = await tenantWithKey(t.prisma);
});
afterAll(() => t.close());

type Method = 'GET' | 'POST' | 'PATCH' | 'PUT';
interface Case {
  name: string;
  method: Method;
  url: string | (() => string);
  body?: string | Buffer;
  headers?: Record<string, string>;
  auth?: boolean;
  status: number;
}

const json = { 'content-type': 'application/json' };
const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);
const big = (bytes: number) => JSON.stringify({ name: 'x'.repeat(bytes) });
const inbound = () => `/api/v1/webhooks/in/stripe/${k.tenantId}`;

const CASES: Case[] = [
  // The REST API
  {
    name: 'REST: __proto__ key in a body',
    method: 'POST',
    url: '/api/v1/customers',
    body: '{"name":"x","__proto__":{"polluted":true}}',
    status: 400,
  },
  {
    name: 'REST: constructor.prototype in a body',
    method: 'POST',
    url: '/api/v1/customers',
    body: '{"name":"x","constructor":{"prototype":{"polluted":true}}}',
    status: 400,
  },
  { name: 'REST: random bytes as JSON', method: 'POST', url: '/api/v1/customers', body: randomBytes(512), status: 400 },
  { name: 'REST: JSON nested 10,000 deep', method: 'POST', url: '/api/v1/events', body: deep(10_000), status: 400 },
  { name: 'REST: a body over the size limit', method: 'POST', url: '/api/v1/customers', body: big(1_100_000), status: 413 },
  {
    name: 'REST: a non-JSON content type',
    method: 'POST',
    url: '/api/v1/customers',
    body: 'name=x',
    headers: { 'content-type': 'text/plain' },
    status: 415,
  },
  {
    name: 'REST: a form content type',
    method: 'POST',
    url: '/api/v1/customers',
    body: 'name=x',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    status: 415,
  },
  { name: 'REST: a page size of 1e30', method: 'GET', url: '/api/v1/customers?limit=1e30', status: 400 },
  { name: 'REST: a negative page size', method: 'GET', url: '/api/v1/customers?limit=-1', status: 400 },
  {
    name: 'REST: a forged cursor',
    method: 'GET',
    url: `/api/v1/customers?cursor=${Buffer.from('["x","../../etc"]').toString('base64url')}`,
    status: 400,
  },
  { name: 'REST: a path id that is not a UUID', method: 'GET', url: "/api/v1/customers/1'%20OR%201=1--", status: 400 },
  {
    name: 'REST: a name of 100,000 characters',
    method: 'POST',
    url: '/api/v1/customers',
    body: JSON.stringify({ name: 'x'.repeat(100_000) }),
    status: 400,
  },
  { name: 'REST: a NUL byte in a name', method: 'POST', url: '/api/v1/customers', body: JSON.stringify({ name: 'a\u0000b' }), status: 400 },
  {
    name: 'REST: a huge number as an event timestamp',
    method: 'POST',
    url: '/api/v1/events',
    body: JSON.stringify({ events: [{ external_id: 'x', event: 'e', timestamp: 1e308 }] }),
    status: 400,
  },
  {
    name: 'REST: a year-275760 timestamp',
    method: 'POST',
    url: '/api/v1/events',
    body: JSON.stringify({ events: [{ external_id: 'x', event: 'e', timestamp: '+275760-09-13T00:00:00Z' }] }),
    status: 400,
  },
  {
    name: 'REST: 501 events in one batch',
    method: 'POST',
    url: '/api/v1/events',
    body: JSON.stringify({ events: Array.from({ length: 501 }, () => ({ external_id: 'x', event: 'e' })) }),
    status: 400,
  },
  { name: 'REST: an alert status outside the enum', method: 'GET', url: '/api/v1/alerts?status=open%27--', status: 400 },
  {
    name: 'REST: weights of NaN',
    method: 'PUT',
    url: '/api/v1/health-weights',
    body: '{"usage":NaN,"engagement":0,"support":0,"billing":0,"growth":0}',
    status: 400,
  },
  {
    name: 'REST: weights as strings',
    method: 'PUT',
    url: '/api/v1/health-weights',
    body: JSON.stringify({ usage: '1', engagement: {}, support: [], billing: null, growth: true }),
    status: 400,
  },
  {
    name: 'REST: an endpoint URL with credentials and a private address',
    method: 'POST',
    url: '/api/v1/webhook-endpoints',
    body: JSON.stringify({ url: 'http://user:pass@169.254.169.254/latest', events: ['alert.created'] }),
    status: 400,
  },
  {
    name: 'REST: an endpoint for an event that does not exist',
    method: 'POST',
    url: '/api/v1/webhook-endpoints',
    body: JSON.stringify({ url: 'https://127.0.0.1/h', events: ['__proto__'] }),
    status: 400,
  },
  {
    name: 'REST: login with an object as password',
    method: 'POST',
    url: '/api/v1/auth/login',
    body: JSON.stringify({ email: 'a@b.c', password: { $ne: '' } }),
    auth: false,
    status: 400,
  },
  {
    name: 'REST: a bearer token of 10,000 characters',
    method: 'GET',
    url: '/api/v1/customers',
    headers: { authorization: `Bearer ${'a'.repeat(10_000)}` },
    auth: false,
    status: 401,
  },
  {
    name: 'REST: an API key with a NUL byte',
    method: 'GET',
    url: '/api/v1/customers',
    headers: { 'x-api-key': 'sk_\u0000abc' },
    auth: false,
    status: 401,
  },
  // GraphQL
  { name: 'GraphQL: random bytes', method: 'POST', url: '/graphql', body: randomBytes(512), status: 400 },
  { name: 'GraphQL: a query that is a number', method: 'POST', url: '/graphql', body: '{"query":123}', status: 400 },
  { name: 'GraphQL: GET variables that are not JSON', method: 'GET', url: '/graphql?query=%7B__typename%7D&variables=%7B', status: 400 },
  { name: 'GraphQL: GET extensions that are not JSON', method: 'GET', url: '/graphql?query=%7B__typename%7D&extensions=%5B', status: 400 },
  {
    name: 'GraphQL: a batch of 100 operations',
    method: 'POST',
    url: '/graphql',
    body: JSON.stringify(Array.from({ length: 100 }, () => ({ query: '{ viewer { kind } }' }))),
    status: 400,
  },
  {
    name: 'GraphQL: a body over the size limit',
    method: 'POST',
    url: '/graphql',
    body: JSON.stringify({ query: `{ viewer { kind } } #${'x'.repeat(1_100_000)}` }),
    status: 413,
  },
  {
    name: 'GraphQL: a mutation over GET',
    method: 'GET',
    url: '/graphql?query=mutation%7BresetHealthWeights%7BisDefault%7D%7D',
    status: 405,
  },
  // Inbound webhooks
  {
    name: 'inbound: random bytes with a forged signature',
    method: 'POST',
    url: inbound,
    body: randomBytes(2048),
    headers: { 'stripe-signature': 't=1,v1=00' },
    auth: false,
    status: 401,
  },
  { name: 'inbound: no signature', method: 'POST', url: inbound, body: '{"id":"evt_1"}', auth: false, status: 401 },
  { name: 'inbound: a body over the size limit', method: 'POST', url: inbound, body: big(1_100_000), auth: false, status: 413 },
  {
    name: 'inbound: an unknown provider',
    method: 'POST',
    url: () => `/api/v1/webhooks/in/paypal/${k.tenantId}`,
    body: '{}',
    auth: false,
    status: 404,
  },
  {
    name: 'inbound: a tenant id that is not a UUID',
    method: 'POST',
    url: '/api/v1/webhooks/in/stripe/..%2F..%2Fadmin',
    body: '{}',
    auth: false,
    status: 404,
  },
  {
    name: 'inbound: a signature header of 100,000 characters',
    method: 'POST',
    url: inbound,
    body: '{}',
    headers: { 'stripe-signature': `t=1,v1=${'a'.repeat(100_000)}` },
    auth: false,
    status: 401,
  },
];

describe('hostile input on every public entry point', () => {
  beforeAll(async () => {
    // Inbound cases need the tenant to have a Stripe secret, or they would stop at 403 before verifying.
    const { token } = await userWithSession(t.prisma, t.sessions, k.tenantId, 'admin');
    await t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { authorization: `Bearer ${token}` },
      payload: { query: 'mutation { setInboundSecret(provider: stripe) { secret } }' },
    });
  });

  it.each(CASES.map((c) => [c.name, c] as const))('%s is refused with a problem and a 4xx', async (_name, c) => {
    const before = await counts();
    const res = await t.app.inject({
      method: c.method,
      url: typeof c.url === 'function' ? c.url() : c.url,
      headers: { ...(c.body !== undefined ? json : {}), ...(c.auth === false ? {} : { 'x-api-key': k.apiKey }), ...c.headers },
      ...(c.body !== undefined ? { payload: c.body } : {}),
    });
    expect(res.statusCode).toBe(c.status);
    if (!c.url.toString().includes('/graphql') || c.status !== 400) {
      expect(res.headers['content-type']).toMatch(/json/);
    }
    expect(await counts()).toEqual(before);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it(`covers ${CASES.length} cases`, () => {
    expect(CASES.length).toBeGreaterThanOrEqual(35);
  });

  it('replaces a request id with characters outside its alphabet instead of echoing them', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': '<script>alert(1)</script>' } });
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  async function counts() {
    const [customers, signals, inbox, endpoints] = await Promise.all([
      t.prisma.customer.count({ where: { tenantId: k.tenantId } }),
      t.prisma.signal.count({ where: { tenantId: k.tenantId } }),
      t.prisma.inboxEvent.count({ where: { tenantId: k.tenantId } }),
      t.prisma.webhookEndpoint.count({ where: { tenantId: k.tenantId } }),
    ]);
    return { customers, signals, inbox, endpoints };
  }
});

describe('GraphQL document limits', () => {
  const gql = (query: string) =>
    t.app.inject({ method: 'POST', url: '/graphql', headers: { 'x-api-key': k.apiKey, ...json }, payload: JSON.stringify({ query }) });

  const refused = async (query: string, pattern: RegExp) => {
    const body = (await gql(query)).json();
    expect(body.data).toBeUndefined();
    expect(body.errors[0].extensions.code).toBe('validation_failed');
    expect(body.errors[0].message).toMatch(pattern);
  };

  it(`refuses a document nested deeper than ${GRAPHQL_LIMITS.maxDepth} levels`, async () => {
    const nest = (n: number): string => (n === 0 ? 'kind' : `... on Viewer { ${nest(n - 1)} }`);
    await refused(`{ viewer { ${nest(GRAPHQL_LIMITS.maxDepth + 1)} } }`, /depth/i);
    expect((await gql(`{ viewer { ${nest(2)} } }`)).json().data.viewer.kind).toBe('api_key');
  });

  it(`refuses more than ${GRAPHQL_LIMITS.maxAliases} aliases`, async () => {
    const aliases = (n: number) => Array.from({ length: n }, (_, i) => `a${i}: customers(first: 100) { totalCount }`).join(' ');
    await refused(`{ ${aliases(GRAPHQL_LIMITS.maxAliases + 1)} }`, /alias/i);
    expect((await gql(`{ ${aliases(GRAPHQL_LIMITS.maxAliases)} }`)).json().errors).toBeUndefined();
  });

  it(`refuses a document of more than ${GRAPHQL_LIMITS.maxTokens} tokens`, async () => {
    await refused(`{ viewer { ${'kind '.repeat(GRAPHQL_LIMITS.maxTokens)} } }`, /token/i);
  });

  it(`refuses a document longer than ${GRAPHQL_LIMITS.maxDocumentChars} characters, however few its tokens`, async () => {
    const padded = (n: number) => `{ viewer { kind } } #${'x'.repeat(n)}`;
    await refused(padded(GRAPHQL_LIMITS.maxDocumentChars), /longer than/);
    expect((await gql(padded(GRAPHQL_LIMITS.maxDocumentChars - 40))).json().data.viewer.kind).toBe('api_key');
  });

  it('refuses a document whose cost is over the limit', async () => {
    const wide =
      'nodes { id name health { dimensions { key score signals { key label value } } } churnPrediction { riskFactors { code description impact } } }';
    await refused(`{ ${Array.from({ length: 10 }, (_, i) => `a${i}: customers(first: 100) { ${wide} }`).join(' ')} }`, /cost/i);
  });

  const withVariables = (query: string, variables: Record<string, unknown>) =>
    t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'x-api-key': k.apiKey, ...json },
      payload: JSON.stringify({ query, variables }),
    });

  it('counts a page size given as a variable at the value the request sends', async () => {
    const query = 'query Q($a: Int, $b: Int) { customers(first: $a) { nodes { id recentEvents(first: $b) { attributes } } } }';
    const literal = await gql('{ customers(first: 100) { nodes { id recentEvents(first: 100) { attributes } } } }');
    const costly = await withVariables(query, { a: 100, b: 100 });
    expect(costly.statusCode).toBe(literal.statusCode);
    expect(costly.json().data).toBeUndefined();
    expect(costly.json().errors[0].extensions.code).toBe('validation_failed');
    expect(costly.json().errors[0].message).toMatch(/cost/i);
    // The same document with small pages runs.
    const cheap = (await withVariables(query, { a: 5, b: 5 })).json();
    expect(cheap.errors).toBeUndefined();
    expect(cheap.data.customers.nodes).toBeInstanceOf(Array);
  });

  it('counts a page size left out at the default page size', async () => {
    await refused('{ customers { nodes { id recentEvents { attributes } } } }', /cost/i);
    await refused('query Q($a: Int) { customers(first: $a) { nodes { id recentEvents { attributes } } } }', /cost/i);
    expect((await gql('{ customers { nodes { id name } } }')).json().errors).toBeUndefined();
  });

  it('does not suggest field names to someone guessing them', async () => {
    const body = (await gql('{ custmers { nodes { id } } }')).json();
    expect(body.errors[0].message).not.toMatch(/did you mean/i);
    expect(body.errors[0].extensions.code).toBe('validation_failed');
  });

  it('exposes no private field through introspection', async () => {
    const body = (await gql('{ __schema { types { name fields { name } inputFields { name } } } }')).json();
    const fields = body.data.__schema.types.flatMap(
      (ty: { name: string; fields: { name: string }[] | null; inputFields: { name: string }[] | null }) =>
        [...(ty.fields ?? []), ...(ty.inputFields ?? [])].map((f) => `${ty.name}.${f.name}`),
    );
    expect(fields.length).toBeGreaterThan(100);
    expect(fields.filter((f: string) => /hash|encrypted|sealed|previousSecret$|passwordHash|keyHash|tenantId/i.test(f))).toEqual([]);
    // A secret in clear exists only on the types that show one once, at creation or rotation.
    const secretHolders = new Set(fields.filter((f: string) => /\.secret$/.test(f)).map((f: string) => f.split('.')[0]));
    expect([...secretHolders].sort()).toEqual(['ApiKeyWithSecret', 'InboundSecret', 'WebhookEndpointWithSecret']);
  });
});

describe('secrets in logs', () => {
  it('never logs a password, session token, API key or signing secret, even at debug level', async () => {
    const password = 'log-test-password-9f2c';
    const admin = await userWithSession(t.prisma, t.sessions, k.tenantId, 'admin', password);
    const gql = async (headers: Record<string, string>, query: string, variables: object = {}) =>
      (
        await t.app.inject({
          method: 'POST',
          url: '/graphql',
          headers: { ...json, ...headers },
          payload: JSON.stringify({ query, variables }),
        })
      ).json();

    const login = await gql({}, 'mutation($e: String!, $p: String!) { login(email: $e, password: $p) { token } }', {
      e: admin.email,
      p: password,
    });
    const session = login.data.login.token as string;
    const auth = { authorization: `Bearer ${session}` };
    const apiKey = (await gql(auth, 'mutation { createApiKey(name: "log test") { secret } }')).data.createApiKey.secret as string;
    const endpointSecret = (
      await gql(auth, 'mutation { createWebhookEndpoint(input: { url: "https://127.0.0.1:9/h", events: ["alert.created"] }) { secret } }')
    ).data.createWebhookEndpoint.secret as string;
    const inboundSecret = (await gql(auth, 'mutation { setInboundSecret(provider: github) { secret } }')).data.setInboundSecret
      .secret as string;
    const c = await customer(t.prisma, k.tenantId);
    await t.app.inject({ method: 'GET', url: `/api/v1/customers/${c.id}`, headers: { 'x-api-key': apiKey } });
    await t.app.inject({ method: 'GET', url: '/api/v1/customers', headers: { authorization: `Bearer ${apiKey}` } });
    await t.app.inject({
      method: 'POST',
      url: '/api/v1/auth/login',
      headers: json,
      payload: JSON.stringify({ email: admin.email, password }),
    });
    const signed = p.signGithub(inboundSecret, 'ping', { zen: 'Keep it logically awesome.' });
    await t.app.inject({ method: 'POST', url: `/api/v1/webhooks/in/github/${k.tenantId}`, headers: signed.headers, payload: signed.body });
    // A failed attempt logs its error: the signing secret must not be in it.
    await gql(auth, 'mutation($id: UUID!) { testWebhookEndpoint(id: $id) { success } }', {
      id: (await t.prisma.webhookEndpoint.findFirstOrThrow({ where: { tenantId: k.tenantId } })).id,
    });

    const log = logLines.join('');
    expect(log.length).toBeGreaterThan(1000);
    for (const secret of [password, session, apiKey, endpointSecret, inboundSecret, signed.headers['x-hub-signature-256']]) {
      expect(log).not.toContain(secret);
    }
  });
});

describe('secrets in request URLs', () => {
  it("never logs Meta's hub.verify_token, or other secret-looking query parameters", async () => {
    const verifyToken = `meta-verify-${randomBytes(8).toString('hex')}`;
    const { token } = await userWithSession(t.prisma, t.sessions, k.tenantId, 'admin');
    const set = await t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { authorization: `Bearer ${token}` },
      payload: {
        query: 'mutation($v: String!) { setInboundSecret(provider: meta_ads, verifyToken: $v) { secret } }',
        variables: { v: verifyToken },
      },
    });
    expect(set.json().errors).toBeUndefined();
    const from = logLines.length;
    const ok = await t.app.inject({
      method: 'GET',
      url: `/api/v1/webhooks/in/meta_ads/${k.tenantId}?hub.mode=subscribe&hub.verify_token=${verifyToken}&hub.challenge=4711`,
    });
    expect(ok.body).toBe('4711');
    const other = `other-${randomBytes(8).toString('hex')}`;
    await t.app.inject({ method: 'GET', url: `/api/v1/customers?access_token=${other}&api_key=${other}x&secret=${other}y` });
    const log = logLines.slice(from).join('');
    expect(log).toContain('hub.verify_token=[redacted]');
    expect(log).toContain('hub.challenge=4711');
    expect(log).not.toContain(verifyToken);
    expect(log).not.toContain(other);
  });
});

describe('slow requests', () => {
  it('cuts off a body trickled a byte at a time once the request deadline passes, with 408, storing nothing', async () => {
    const slow = await createTestApp({ env: { REQUEST_TIMEOUT_MS: '1000' } });
    try {
      const { apiKey, tenantId } = await tenantWithKey(slow.prisma);
      await slow.app.listen({ host: '127.0.0.1', port: 0 });
      const port = (slow.app.server.address() as AddressInfo).port;
      const started = Date.now();
      const answer = await new Promise<string>((resolve) => {
        let data = '';
        let drip: NodeJS.Timeout | undefined;
        const socket = net.connect(port, '127.0.0.1', () => {
          socket.write(
            `POST /api/v1/customers HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${apiKey}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"na`,
          );
          // Often enough that the socket is never idle, never enough to finish.
          drip = setInterval(() => socket.write(' '), 200);
        });
        socket.on('data', (d) => (data += d.toString()));
        socket.on('error', () => undefined);
        socket.on('close', () => {
          clearInterval(drip);
          resolve(data);
        });
      });
      expect(Date.now() - started).toBeLessThan(5000);
      expect(answer).toMatch(/^HTTP\/1\.1 408/);
      expect(answer).toContain('"code":"request_timeout"');
      expect(await slow.prisma.customer.count({ where: { tenantId } })).toBe(0);
    } finally {
      await slow.close();
    }
  });
});
