// Requests whose signature does not verify at the inbound address of a tenant that exists are counted per
// sender (a client address at one inbound address), per client address and per inbound address, and
// refused with 429 once a budget is spent; what cannot verify, or is larger than the provider sends, is
// refused before its body is read. Genuine deliveries are signed by Stripe's own library.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operator } from '../../src/services/audit.ts';
import { createInboundSecretStore } from '../../src/services/integrations.ts';
import { createTestApp, type TestApp, testSecretBox } from '../support/app.ts';
import { tenantWithKey } from '../support/factories.ts';
import * as p from '../support/providers.ts';

const PER_SENDER = 3;
const PER_CLIENT = 6;
const PER_ADDRESS = 10;

let t: TestApp;
let base: string;
beforeAll(async () => {
  t = await createTestApp({
    env: {
      INBOUND_FAILURES_PER_SENDER: String(PER_SENDER),
      INBOUND_FAILURES_PER_CLIENT: String(PER_CLIENT),
      INBOUND_FAILURES_PER_INBOUND_ADDRESS: String(PER_ADDRESS),
    },
  });
  base = await t.app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(() => t.close());

async function stripeTenant() {
  const { tenantId } = await tenantWithKey(t.prisma, 'free');
  const store = createInboundSecretStore(t.prisma, testSecretBox(), { cacheMs: 0 });
  const { secret } = await store.put({ tenantId, provider: 'stripe' }, operator(tenantId));
  return { tenantId, secret };
}

const event = () => JSON.stringify(p.stripeEvent('customer.updated', p.stripeCustomer(`cus_${Math.random().toString(36).slice(2, 10)}`)));
/** A delivery signed by Stripe's library with the tenant's secret, or with one that is not the tenant's. */
const genuine = (secret: string, body = event()) => p.stripeSdkSigned(secret, body);
const forged = (body = event()) => p.stripeSdkSigned('whsec_not_the_tenants', body);

const post = (tenantId: string, s: p.Signed, from: string) =>
  t.app.inject({
    method: 'POST',
    url: `/api/v1/webhooks/in/stripe/${tenantId}`,
    headers: s.headers,
    payload: s.body,
    remoteAddress: from,
  });

function expectRateLimited(res: Awaited<ReturnType<typeof post>>) {
  expect(res.statusCode).toBe(429);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
  expect(res.json().code).toBe('rate_limited');
}

/** Sends headers alone over a real connection and waits for the answer, the body never sent (or sent in part). */
function answerBeforeBody(path: string, headers: Record<string, string>, partialBody?: Buffer) {
  return new Promise<{ status: number; body: any }>((resolve, reject) => {
    const req = request(`${base}${path}`, { method: 'POST', headers });
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error('no answer while the body was still to come'));
    }, 5000);
    req.on('response', (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => {
        clearTimeout(timer);
        req.destroy();
        resolve({ status: res.statusCode!, body: JSON.parse(text) });
      });
    });
    req.on('error', () => {});
    req.flushHeaders();
    if (partialBody) req.write(partialBody);
  });
}

describe('failed signatures at a known tenant’s address', () => {
  it('answers 429 problem+json with Retry-After to a client whose signatures keep failing there, and stores nothing', async () => {
    const { tenantId } = await stripeTenant();
    for (let i = 0; i < PER_SENDER; i++) expect((await post(tenantId, forged(), '203.0.113.7')).statusCode).toBe(401);
    expectRateLimited(await post(tenantId, forged(), '203.0.113.7'));
    expect(await t.prisma.inboxEvent.count({ where: { tenantId } })).toBe(0);
  });

  it('goes on receiving the genuine provider from its own address while a client failing there is refused', async () => {
    const { tenantId, secret } = await stripeTenant();
    for (let i = 0; i <= PER_SENDER; i++) await post(tenantId, forged(), '203.0.113.8');
    expectRateLimited(await post(tenantId, genuine(secret), '203.0.113.8'));
    expect((await post(tenantId, genuine(secret), '198.51.100.1')).statusCode).toBe(202);
  });

  it('refuses a client failing at many addresses at every address once its budget is spent', async () => {
    const tenants = await Promise.all(Array.from({ length: PER_CLIENT + 1 }, () => stripeTenant()));
    for (const { tenantId } of tenants.slice(0, PER_CLIENT)) expect((await post(tenantId, forged(), '203.0.113.9')).statusCode).toBe(401);
    expectRateLimited(await post(tenants[PER_CLIENT]!.tenantId, forged(), '203.0.113.9'));
  });

  it('still receives a provider at an address it verified at, whatever failures others make it send elsewhere', async () => {
    const provider = '192.0.2.50';
    const home = await stripeTenant();
    expect((await post(home.tenantId, genuine(home.secret), provider)).statusCode).toBe(202);
    // Someone points the provider at addresses whose secrets their own account does not have.
    const elsewhere = await Promise.all(Array.from({ length: PER_CLIENT }, () => stripeTenant()));
    for (const { tenantId } of elsewhere) await post(tenantId, forged(), provider);
    expectRateLimited(await post((await stripeTenant()).tenantId, forged(), provider));
    expect((await post(home.tenantId, genuine(home.secret), provider)).statusCode).toBe(202);
  });

  it('refuses new senders at an address failing from many clients, and still receives the sender verified there', async () => {
    const { tenantId, secret } = await stripeTenant();
    expect((await post(tenantId, genuine(secret), '192.0.2.60')).statusCode).toBe(202);
    for (let i = 0; i < PER_ADDRESS; i++) expect((await post(tenantId, forged(), `203.0.113.${100 + i}`)).statusCode).toBe(401);
    expectRateLimited(await post(tenantId, forged(), '203.0.113.200'));
    expect((await post(tenantId, genuine(secret), '192.0.2.60')).statusCode).toBe(202);
  });
});

describe('wrong verify tokens at Meta’s subscription check', () => {
  it('counts them as failed verifications at the address: 429 once over the sender’s budget, the right token still served elsewhere', async () => {
    const { tenantId } = await tenantWithKey(t.prisma, 'free');
    const store = createInboundSecretStore(t.prisma, testSecretBox(), { cacheMs: 0 });
    await store.put({ tenantId, provider: 'meta_ads', verifyToken: 'the-right-token-1234' }, operator(tenantId));
    const check = (token: string, from: string) =>
      t.app.inject({
        method: 'GET',
        url: `/api/v1/webhooks/in/meta_ads/${tenantId}?hub.mode=subscribe&hub.challenge=c42&hub.verify_token=${token}`,
        remoteAddress: from,
      });
    for (let i = 0; i < PER_SENDER; i++) expect((await check(`guess-${i}`, '203.0.113.30')).statusCode).toBe(403);
    expectRateLimited(await check('the-right-token-1234', '203.0.113.30'));
    const right = await check('the-right-token-1234', '192.0.2.70');
    expect(right.statusCode).toBe(200);
    expect(right.body).toBe('c42');
  });
});

describe('reading no more of a body than the provider sends', () => {
  it('refuses a declared length over the provider’s limit with 413 before any of the body arrives', async () => {
    const { tenantId, secret } = await stripeTenant();
    const signed = genuine(secret);
    const answer = await answerBeforeBody(`/api/v1/webhooks/in/stripe/${tenantId}`, {
      ...signed.headers,
      'content-length': String(900 * 1024),
    });
    expect(answer.status).toBe(413);
    expect(answer.body).toMatchObject({ code: 'payload_too_large', detail: expect.stringContaining(String(512 * 1024)) });
  });

  it('refuses a body sent without a length with 413 once it passes the provider’s limit, before it ends', async () => {
    const { tenantId, secret } = await stripeTenant();
    const signed = genuine(secret);
    const answer = await answerBeforeBody(
      `/api/v1/webhooks/in/stripe/${tenantId}`,
      { ...signed.headers, 'transfer-encoding': 'chunked' },
      Buffer.alloc(600 * 1024, 0x20),
    );
    expect(answer.status).toBe(413);
    expect(answer.body.code).toBe('payload_too_large');
  });

  it('refuses a request without a signature with 401 before its body arrives', async () => {
    const { tenantId } = await stripeTenant();
    const answer = await answerBeforeBody(`/api/v1/webhooks/in/stripe/${tenantId}`, {
      'content-type': 'application/json',
      'content-length': '1000',
    });
    expect(answer.status).toBe(401);
    expect(answer.body.code).toBe('invalid_signature');
  });

  it('refuses a Stripe signature older than five minutes before its body arrives', async () => {
    const { tenantId, secret } = await stripeTenant();
    const stale = p.stripeSdkSigned(secret, event(), p.nowS() - 600);
    const answer = await answerBeforeBody(`/api/v1/webhooks/in/stripe/${tenantId}`, { ...stale.headers, 'content-length': '1000' });
    expect(answer.status).toBe(401);
  });

  it('accepts a genuine delivery just inside the provider’s limit', async () => {
    const { tenantId, secret } = await stripeTenant();
    const object = { ...p.stripeCustomer('cus_large'), metadata: { notes: 'x'.repeat(500 * 1024) } };
    const res = await post(tenantId, genuine(secret, JSON.stringify(p.stripeEvent('customer.updated', object))), '198.51.100.2');
    expect(res.statusCode).toBe(202);
  });
});
