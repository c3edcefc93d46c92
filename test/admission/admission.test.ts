import { operator } from '../../src/services/audit.ts';
import net, { type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createInboundSecretStore } from '../../src/services/integrations.ts';
import { createTestApp, type TestApp, testSecretBox } from '../support/app.ts';
import { customer, tenantWithKey } from '../support/factories.ts';

// Separate budgets: traffic without a credential, and any one tenant, cannot take the capacity the
// other tenants' API calls need. Every connection here goes to 127.0.0.1 and is closed by the test.
const apps: TestApp[] = [];
const sockets: net.Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  for (const a of apps.splice(0)) await a.close();
});

async function listening(env: Record<string, string>): Promise<{ t: TestApp; port: number; base: string }> {
  const t = await createTestApp({ env });
  apps.push(t);
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  const port = (t.app.server.address() as AddressInfo).port;
  return { t, port, base: `http://127.0.0.1:${port}` };
}

/** Sends the headers and the first bytes of a body announced as 4 KB, then nothing more; resolves with whatever comes back. */
function slowBody(port: number, path: string, headers: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve) => {
    let data = '';
    const socket = net.connect(port, '127.0.0.1', () => {
      const lines = Object.entries({ host: '127.0.0.1', 'content-type': 'application/json', 'content-length': '4096', ...headers }).map(
        ([k, v]) => `${k}: ${v}`,
      );
      socket.write(`POST ${path} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n{"id":`);
    });
    sockets.push(socket);
    socket.on('data', (d) => (data += d.toString()));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(data));
  });
}

/** Checks out every connection of the pool, waiting for any in use (a connect may time out meanwhile). */
async function takeEveryConnection(t: TestApp) {
  const held = [];
  while (held.length < 8) {
    try {
      held.push(await t.pool.connect());
    } catch {
      // Busy for longer than the pool wait: ask again.
    }
  }
  return held;
}

/** A create whose body stops after a few bytes, so the request runs until `finish` sends the rest. */
function slowCreate(port: number, apiKey: string) {
  const body = JSON.stringify({ name: 'Slow Co' });
  const socket = net.connect(port, '127.0.0.1');
  sockets.push(socket);
  const answer = new Promise<string>((resolve) => {
    let data = '';
    socket.on('data', (d) => {
      data += d.toString();
      if (data.includes('\r\n\r\n')) resolve(data);
    });
    socket.on('error', () => undefined);
  });
  socket.write(
    `POST /api/v1/customers HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
  );
  return { answer, finish: () => socket.write(body.slice(5)) };
}

/** Lets the server read the headers of the connections just opened. */
const settle = () => new Promise((r) => setTimeout(r, 400));

async function stripeAddress(t: TestApp) {
  const { tenantId } = await tenantWithKey(t.prisma, 'free');
  const { secret } = await createInboundSecretStore(t.prisma, testSecretBox(), { cacheMs: 0 }).put(
    { tenantId, provider: 'stripe' },
    operator(tenantId),
  );
  return { tenantId, secret, path: `/api/v1/webhooks/in/stripe/${tenantId}` };
}

/** A signature header that is well formed and fresh but matches no secret: the body is read before it fails (one that could not verify is refused before). */
const unverifiedSignature = () => ({ 'stripe-signature': `t=${Math.floor(Date.now() / 1000)},v1=00` });

describe('traffic without credentials', () => {
  it('cannot starve authenticated API calls by trickling inbound webhook bodies', async () => {
    const { t, port, base } = await listening({ MAX_IN_FLIGHT: '8' });
    const { path } = await stripeAddress(t);
    const { apiKey } = await tenantWithKey(t.prisma);
    const held = Array.from({ length: 40 }, () => slowBody(port, path, unverifiedSignature()));
    await settle();

    for (let i = 0; i < 10; i++) {
      const res = await fetch(`${base}/api/v1/customers`, { headers: { 'x-api-key': apiKey } });
      expect(res.status).toBe(200);
    }
    for (const s of sockets) s.destroy();
    await Promise.all(held);
  });

  it('cannot starve authenticated API calls by trickling sign-in and anonymous GraphQL bodies', async () => {
    const { t, port, base } = await listening({ MAX_IN_FLIGHT: '4' });
    const { apiKey } = await tenantWithKey(t.prisma);
    const held = [
      ...Array.from({ length: 10 }, () => slowBody(port, '/api/v1/auth/login')),
      ...Array.from({ length: 10 }, () => slowBody(port, '/graphql')),
    ];
    await settle();

    for (let i = 0; i < 6; i++) {
      const res = await fetch(`${base}/graphql`, {
        method: 'POST',
        headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ customers(first: 1) { nodes { id } } }' }),
      });
      expect(res.status).toBe(200);
    }
    for (const s of sockets) s.destroy();
    await Promise.all(held);
  });

  it('caps the requests one address has in flight without a credential, with 503 and Retry-After', async () => {
    const { t, port, base } = await listening({ MAX_UNAUTHENTICATED_PER_ADDRESS: '4' });
    const { path } = await stripeAddress(t);
    const { apiKey } = await tenantWithKey(t.prisma);
    const held = Array.from({ length: 4 }, () => slowBody(port, path, unverifiedSignature()));
    await settle();

    const refused = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(((await refused.json()) as { code: string }).code).toBe('service_unavailable');
    // The same address with a credential is a tenant, counted on the tenant's budget.
    expect((await fetch(`${base}/api/v1/customers`, { headers: { 'x-api-key': apiKey } })).status).toBe(200);
    for (const s of sockets) s.destroy();
    await Promise.all(held);
  });

  it('cuts off an inbound webhook body at the short deadline for requests without credentials, storing nothing', async () => {
    const { t, port } = await listening({ UNAUTHENTICATED_BODY_TIMEOUT_MS: '300' });
    const { tenantId, path } = await stripeAddress(t);
    const answer = await slowBody(port, path, unverifiedSignature());
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expect(answer).toContain('"code":"request_timeout"');
    expect(await t.prisma.inboxEvent.count({ where: { tenantId } })).toBe(0);
  });
});

describe('slow headers', () => {
  it('closes a connection whose headers do not arrive within the headers timeout', async () => {
    const { port } = await listening({ HEADERS_TIMEOUT_MS: '500' });
    const answer = await new Promise<string>((resolve) => {
      let data = '';
      let drip: NodeJS.Timeout | undefined;
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n');
        // A header line now and then keeps the socket busy, never finishing the headers.
        drip = setInterval(() => socket.write('X-Slow: 1\r\n'), 200);
      });
      sockets.push(socket);
      socket.on('data', (d) => (data += d.toString()));
      socket.on('error', () => undefined);
      socket.on('close', () => {
        clearInterval(drip);
        resolve(data);
      });
    });
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
  });
});

describe('fair sharing between tenants', () => {
  it("keeps another tenant's PATCHes succeeding while one tenant holds more requests than its share", async () => {
    const { t, port, base } = await listening({});
    const a = await tenantWithKey(t.prisma, 'scale');
    const b = await tenantWithKey(t.prisma, 'growth');
    const held = Array.from({ length: 250 }, () => slowBody(port, '/api/v1/customers', { 'x-api-key': a.apiKey }));
    await settle();

    const c = await customer(t.prisma, b.tenantId);
    const patches = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        fetch(`${base}/api/v1/customers/${c.id}`, {
          method: 'PATCH',
          headers: { 'x-api-key': b.apiKey, 'content-type': 'application/json' },
          body: JSON.stringify({ name: `Renamed ${i}` }),
        }),
      ),
    );
    expect(patches.map((r) => r.status)).toEqual(Array(20).fill(200));

    // Tenant A's own excess was refused at once, each with Retry-After.
    for (const s of sockets) s.destroy();
    const answers = await Promise.all(held);
    const refused = answers.filter((x) => x.startsWith('HTTP/1.1 503'));
    expect(refused.length).toBeGreaterThanOrEqual(250 - t.config.overload.maxInFlightPerTenant);
    for (const r of refused) expect(r).toMatch(/retry-after: 1/i);
  });

  it("lets a tenant's requests beyond its running share wait their turn instead of refusing them", async () => {
    // One request may run in all, so nothing is left to lend.
    const { t, port, base } = await listening({ MAX_ACTIVE_PER_TENANT: '1', MAX_ACTIVE: '1' });
    const a = await tenantWithKey(t.prisma, 'scale');
    const order: string[] = [];
    // The tenant's one running request is a create whose body has not finished arriving.
    const create = slowCreate(port, a.apiKey);
    await settle();
    const waiting = fetch(`${base}/api/v1/customers`, { headers: { 'x-api-key': a.apiKey } }).then((r) => {
      order.push('list answered');
      return r.status;
    });
    await settle();
    order.push('create finished');
    create.finish();
    expect(await create.answer).toMatch(/^HTTP\/1\.1 201/);
    expect(await waiting).toBe(200);
    expect(order).toEqual(['create finished', 'list answered']);
  });

  it('lends capacity nobody else uses: a tenant alone runs beyond its share instead of waiting', async () => {
    const { t, port, base } = await listening({ MAX_ACTIVE_PER_TENANT: '1', MAX_ACTIVE: '4' });
    const a = await tenantWithKey(t.prisma, 'scale');
    const create = slowCreate(port, a.apiKey);
    await settle();
    // The create holds the tenant's share; the list borrows an idle place and is answered meanwhile.
    const list = await fetch(`${base}/api/v1/customers`, { headers: { 'x-api-key': a.apiKey } });
    expect(list.status).toBe(200);
    create.finish();
    expect(await create.answer).toMatch(/^HTTP\/1\.1 201/);
  });

  it("runs another tenant's request within its share at once while one tenant has borrowed all the capacity", async () => {
    const { t, port, base } = await listening({ MAX_ACTIVE_PER_TENANT: '1', MAX_ACTIVE: '2' });
    const a = await tenantWithKey(t.prisma, 'scale');
    const b = await tenantWithKey(t.prisma, 'scale');
    // Tenant A runs its share and the one place it could borrow; its third request must wait.
    const creates = [slowCreate(port, a.apiKey), slowCreate(port, a.apiKey)];
    await settle();
    const order: string[] = [];
    const third = fetch(`${base}/api/v1/customers`, { headers: { 'x-api-key': a.apiKey } }).then((r) => {
      order.push('A answered');
      return r.status;
    });
    await settle();
    const bList = await fetch(`${base}/api/v1/customers`, { headers: { 'x-api-key': b.apiKey } });
    order.push('B answered');
    expect(bList.status).toBe(200);
    for (const c of creates) c.finish();
    for (const c of creates) expect(await c.answer).toMatch(/^HTTP\/1\.1 201/);
    expect(await third).toBe(200);
    expect(order).toEqual(['B answered', 'A answered']);
  });

  it("answers one tenant's burst of writes within its plan with 2xx or 503 and Retry-After, while another tenant's PATCHes succeed", async () => {
    // Admission is what is measured: on a busy machine the event-loop delay alone would shed anyone's request.
    const { t, base } = await listening({ MAX_EVENT_LOOP_DELAY_MS: '0' });
    const a = await tenantWithKey(t.prisma, 'scale');
    const b = await tenantWithKey(t.prisma, 'growth');
    const c = await customer(t.prisma, b.tenantId);
    const burst = Array.from({ length: 250 }, (_, i) =>
      fetch(`${base}/api/v1/customers`, {
        method: 'POST',
        headers: { 'x-api-key': a.apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `Burst ${i}` }),
      }),
    );
    const patches = Array.from({ length: 20 }, (_, i) =>
      fetch(`${base}/api/v1/customers/${c.id}`, {
        method: 'PATCH',
        headers: { 'x-api-key': b.apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `Renamed ${i}` }),
      }),
    );
    const [burstAnswers, patchAnswers] = await Promise.all([Promise.all(burst), Promise.all(patches)]);

    const refused = await Promise.all(patchAnswers.filter((r) => r.status !== 200).map((r) => r.text()));
    expect(refused).toEqual([]);
    expect(patchAnswers.map((r) => r.status)).toEqual(Array(20).fill(200));
    for (const r of burstAnswers) {
      expect([201, 503]).toContain(r.status);
      if (r.status === 503) expect(r.headers.get('retry-after')).toBe('1');
    }
    expect(burstAnswers.some((r) => r.status === 201)).toBe(true);
  });
});

describe('a burst with one API key', () => {
  it('looks the key up once for requests that arrive together, not once per request', async () => {
    const { t, base } = await listening({});
    const { apiKey } = await tenantWithKey(t.prisma);
    t.queries.length = 0;
    const answers = await Promise.all(
      Array.from({ length: 30 }, () => fetch(`${base}/api/v1/customers`, { headers: { 'x-api-key': apiKey } }).then((r) => r.status)),
    );
    expect(answers).toEqual(Array(30).fill(200));
    const lookups = t.queries.filter((q) => /FROM "public"\."api_keys"/.test(q) && /SELECT/.test(q));
    expect(lookups.length).toBeGreaterThan(0);
    expect(lookups.length).toBeLessThan(30);
  });
});

describe('database pool exhaustion', () => {
  it('answers 503 service_unavailable with Retry-After, not 500, when no connection is free in time', async () => {
    const { t, base } = await listening({ DATABASE_POOL_WAIT_MS: '200' });
    const { apiKey } = await tenantWithKey(t.prisma);
    // Every connection of the pool taken, as a burst would.
    const held = await takeEveryConnection(t);
    try {
      const res = await fetch(`${base}/api/v1/customers`, {
        method: 'POST',
        headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Waiting Co' }),
      });
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('1');
      expect(((await res.json()) as { code: string }).code).toBe('service_unavailable');
    } finally {
      for (const c of held) c.release();
    }
  });

  it('answers 503 with Retry-After when an interactive transaction cannot start in time', async () => {
    const { t, base } = await listening({ DATABASE_POOL_WAIT_MS: '200', API_KEY_CACHE_MS: '5000' });
    const { apiKey } = await tenantWithKey(t.prisma);
    // Authenticate once so the next request only needs the pool for its transaction.
    expect((await fetch(`${base}/api/v1/customers`, { headers: { 'x-api-key': apiKey } })).status).toBe(200);
    const held = await takeEveryConnection(t);
    try {
      const res = await fetch(`${base}/graphql`, {
        method: 'POST',
        headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'mutation { createCustomer(input: { name: "Waiting Co" }) { id } }' }),
      });
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('1');
    } finally {
      for (const c of held) c.release();
    }
  });
});

describe('a client that leaves while its credential is looked up', () => {
  it("gives back the tenant's slot, so the tenant's next request is served", async () => {
    const { t, port, base } = await listening({ MAX_IN_FLIGHT_PER_TENANT: '1', MAX_ACTIVE_PER_TENANT: '1' });
    const a = await tenantWithKey(t.prisma, 'scale');
    // The key lookup waits on a lock, so the client is gone before the request is counted.
    const lock = await t.pool.connect();
    await lock.query('BEGIN');
    await lock.query('LOCK TABLE api_keys IN ACCESS EXCLUSIVE MODE');
    const socket = net.connect(port, '127.0.0.1', () =>
      socket.write(`GET /api/v1/customers HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${a.apiKey}\r\n\r\n`),
    );
    socket.on('error', () => undefined);
    await settle();
    socket.destroy();
    await settle();
    await lock.query('COMMIT');
    lock.release();
    await settle();

    const res = await fetch(`${base}/api/v1/customers`, { headers: { 'x-api-key': a.apiKey } });
    expect(res.status).toBe(200);
  });
});

describe('requests with invalid credentials', () => {
  it("count against their address's cap while the credential is looked up, so they cannot take the pool", async () => {
    const { t, base } = await listening({ MAX_UNAUTHENTICATED_PER_ADDRESS: '2' });
    const lock = await t.pool.connect();
    await lock.query('BEGIN');
    await lock.query('LOCK TABLE api_keys IN ACCESS EXCLUSIVE MODE');
    const answers = Array.from({ length: 5 }, (_, i) =>
      fetch(`${base}/api/v1/customers`, { headers: { 'x-api-key': `sk_guess_${i}` } }).then((r) => r.status),
    );
    await settle();
    await lock.query('COMMIT');
    lock.release();
    const statuses = await Promise.all(answers);
    expect(statuses.filter((s) => s === 503)).toHaveLength(3);
    expect(statuses.filter((s) => s === 401)).toHaveLength(2);
  });
});
