// The fair share of the process between tenants (src/runtime/cpu-share.ts): costly GraphQL operations are
// heavy work like exports, metered by their static cost before they run; and what runs per tenant, webhooks
// being accepted included, is one count that admission keeps and the share reads. GraphQL goes through a
// published client (urql) to a listening app; webhooks through a raw socket that sends part of a body.
import net, { type AddressInfo } from 'node:net';
import { Client, fetchExchange, gql } from '@urql/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPILE_AFTER_RUNS } from '../../src/http/graphql-jit.ts';
import { HEAVY_STATEMENTS_AT_ONCE } from '../../src/runtime/cpu-share.ts';
import { operator } from '../../src/services/audit.ts';
import { createInboundSecretStore } from '../../src/services/integrations.ts';
import { createTestApp, testSecretBox, type TestApp } from '../support/app.ts';
import { customer, tenantWithKey } from '../support/factories.ts';

let t: TestApp;
let base: string;
let port: number;
let a: Awaited<ReturnType<typeof tenantWithKey>>;
let b: Awaited<ReturnType<typeof tenantWithKey>>;
beforeAll(async () => {
  t = await createTestApp({ env: { RATE_LIMIT_SCALE: '100000' } });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  port = (t.app.server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
  a = await tenantWithKey(t.prisma);
  b = await tenantWithKey(t.prisma);
  for (const tenant of [a, b]) for (let i = 0; i < 3; i++) await customer(t.prisma, tenant.tenantId, { name: `Searched ${i}` });
  // B is connected to Stripe: its webhook waits for its body to be verified, rather than being refused at once.
  await createInboundSecretStore(t.prisma, testSecretBox(), { cacheMs: 0 }).put(
    { tenantId: b.tenantId, provider: 'stripe' },
    operator(b.tenantId),
  );
});
afterAll(async () => {
  await t?.close();
});

const clientOf = (apiKey: string) =>
  new Client({
    url: `${base}/graphql`,
    exchanges: [fetchExchange],
    requestPolicy: 'network-only',
    fetchOptions: { headers: { authorization: `Bearer ${apiKey}` } },
  });

// Ten aliased searches of 50 customers each: well past the cost at which an operation is heavy work.
const SEARCHES = gql(
  `query Searches { ${Array.from({ length: 10 }, (_, i) => `s${i}: customers(search: "searched", first: 50) { totalCount nodes { id name email healthScore } }`).join(' ')} }`,
);
// One small page: light.
const PAGE = gql('query Page { customers(first: 5) { nodes { id name } } }');

/** Whether the promise settles within a few turns of the event loop and a short wait. */
const settles = async (p: Promise<unknown>, ms = 300) => {
  let settled = false;
  void p.then(
    () => (settled = true),
    () => (settled = true),
  );
  await new Promise((r) => setTimeout(r, ms));
  return settled;
};

/**
 * A's costly operation, sent while `take` holds what it needs, waits for it, while A's light operation and B's
 * costly one go at once; once `take`'s release ran, it answers in full. For the fast path the document is made
 * hot first, so that it runs there rather than on Yoga.
 */
async function waitsForWhatIsHeld(path: string, take: () => Promise<() => Promise<void>>) {
  const clientA = clientOf(a.apiKey);
  if (path !== 'Yoga') {
    for (let i = 0; i <= COMPILE_AFTER_RUNS; i++) expect((await clientA.query(SEARCHES, {}).toPromise()).error).toBeUndefined();
  }
  const release = await take();
  const heavy = clientA.query(SEARCHES, {}).toPromise();
  try {
    expect((await clientA.query(PAGE, {}).toPromise()).data.customers.nodes).toHaveLength(3);
    expect((await clientOf(b.apiKey).query(SEARCHES, {}).toPromise()).data.s9.totalCount).toBe(3);
    expect(await settles(heavy)).toBe(false);
  } finally {
    await release();
  }
  const answer = await heavy;
  expect(answer.error).toBeUndefined();
  expect(answer.data.s0.totalCount).toBe(3);
}

const PATHS = ['Yoga', 'the fast path for hot documents'];

describe('costly GraphQL operations as heavy work', () => {
  for (const path of PATHS) {
    it(`makes a costly operation wait for its tenant’s heavy places, while a light one and another tenant’s go at once (${path})`, () =>
      waitsForWhatIsHeld(path, async () => {
        // Both of A's places for heavy work taken, as by two exports.
        const held = [await t.composition.cpuShare.hold(a.tenantId), await t.composition.cpuShare.hold(a.tenantId)];
        return async () => held.forEach((release) => release());
      }));
  }
});

describe('costly GraphQL operations’ share of the database pool', () => {
  for (const path of PATHS) {
    it(`runs a costly operation’s statements within its tenant’s share of the pool, while a light one and another tenant’s go at once (${path})`, () =>
      waitsForWhatIsHeld(path, async () => {
        // Every statement place of A's heavy work taken, as by its other costly operations' statements.
        let open = () => {};
        const busy = new Promise<void>((r) => (open = r));
        const holders = Array.from({ length: HEAVY_STATEMENTS_AT_ONCE }, () => t.composition.cpuShare.statement(a.tenantId, () => busy));
        return async () => {
          open();
          await Promise.all(holders);
        };
      }));
  }
});

/** Sends the headers and the first bytes of a Stripe webhook for `tenantId` (connected to Stripe), then nothing more until `end`. */
function webhookArriving(tenantId: string) {
  const socket = net.connect(port, '127.0.0.1', () => {
    socket.write(
      `POST /api/v1/webhooks/in/stripe/${tenantId} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n` +
        // A signature of the right form: only the whole body can tell whether it matches.
        `stripe-signature: t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}\r\ncontent-length: 4096\r\n\r\n{"id":`,
    );
  });
  const closed = new Promise((r) => socket.once('close', r));
  return {
    end: async () => {
      socket.destroy();
      await closed;
    },
  };
}

// Up to ten seconds: on a loaded machine the request's first bytes may take a while to be parsed.
const until = async (check: () => boolean) => {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 20));
  return check();
};

describe('one count of what runs per tenant', () => {
  it('counts a webhook being accepted for a tenant as that tenant’s work, until a while after its connection ends', async () => {
    const { load } = t.composition;
    const webhook = webhookArriving(b.tenantId);
    expect(await until(() => load.othersBusy(a.tenantId))).toBe(true);
    // Its own webhook is not another's work: b is alone once the earlier tests' requests are a while past.
    expect(await until(() => !load.othersBusy(b.tenantId))).toBe(true);
    expect(load.othersBusy(a.tenantId)).toBe(true);
    await webhook.end();
    expect(await until(() => !load.othersBusy(a.tenantId))).toBe(true);
  });

  it('counts a tenant’s API request running, as admission runs it, where the share reads it', async () => {
    const { load } = t.composition;
    const held = [await t.composition.cpuShare.hold(b.tenantId), await t.composition.cpuShare.hold(b.tenantId)];
    const waiting = clientOf(b.apiKey).query(SEARCHES, {}).toPromise();
    try {
      expect(await until(() => load.running(b.tenantId) === 1)).toBe(true);
      expect(load.othersBusy(a.tenantId)).toBe(true);
    } finally {
      for (const release of held) release();
    }
    await waiting;
    expect(await until(() => load.running(b.tenantId) === 0)).toBe(true);
  });
});
