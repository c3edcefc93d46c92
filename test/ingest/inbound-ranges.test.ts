// A signed event whose numbers cannot be stored (an amount past a bigint, a time past year 9999) failed the
// transaction applying it, and every event of its batch was then applied one transaction each. Such an
// event is refused on acceptance, naming the field; the events beside it go through their batches.
import { createHmac, randomBytes, randomUUID, sign } from 'node:crypto';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { operator } from '../../src/services/audit.ts';
import { createInboundSecretStore } from '../../src/services/integrations.ts';
import { processInboxBatch, processInboxEvent } from '../../src/ingest/processor.ts';
import { createTestApp, type TestApp, testSecretBox } from '../support/app.ts';
import { tenantWithKey } from '../support/factories.ts';
import * as p from '../support/providers.ts';
import { storeGroup } from '../support/inbox.ts';

type Provider = 'stripe' | 'github' | 'slack' | 'discord' | 'intercom' | 'meta_ads';

let t: TestApp;
let worker: { close(): Promise<void> };
const logLines: string[] = [];
beforeAll(async () => {
  t = await createTestApp();
  worker = t.startWorker({ log: pino({ level: 'warn' }, { write: (line: string) => void logLines.push(line) }) });
});
afterAll(async () => {
  await worker?.close();
  await t?.close();
});

const discord = p.discordKeys();

async function tenantWith(provider: Provider) {
  const { tenantId } = await tenantWithKey(t.prisma, 'free');
  const store = createInboundSecretStore(t.prisma, testSecretBox(), { cacheMs: 0 });
  const r = await store.put({ tenantId, provider, secret: provider === 'discord' ? discord.publicHex : undefined }, operator(tenantId));
  return { tenantId, secret: r.secret };
}

/** The JSON of `payload` with each `"<name>"` placeholder written as the raw number or text given. */
const raw = (payload: object, values: Record<string, string>) =>
  Object.entries(values).reduce((json, [name, v]) => json.replace(`"<${name}>"`, v), JSON.stringify(payload));

const hmac = (alg: 'sha1' | 'sha256', key: string, data: string) => createHmac(alg, key).update(data).digest('hex');

/** The exact bytes, signed as the provider signs them: Stripe by Stripe's own library, the others by their documented schemes. */
function signed(provider: Provider, secret: string, body: string): p.Signed {
  const json = { 'content-type': 'application/json' };
  if (provider === 'stripe') return p.stripeSdkSigned(secret, body);
  if (provider === 'slack') {
    const ts = p.nowS();
    return {
      body,
      headers: {
        ...json,
        'x-slack-request-timestamp': String(ts),
        'x-slack-signature': `v0=${hmac('sha256', secret, `v0:${ts}:${body}`)}`,
      },
    };
  }
  if (provider === 'github') return { body, headers: p.githubHeaders(secret, 'push', body) };
  if (provider === 'intercom') return { body, headers: { ...json, 'x-hub-signature': `sha1=${hmac('sha1', secret, body)}` } };
  if (provider === 'meta_ads') return { body, headers: { ...json, 'x-hub-signature-256': `sha256=${hmac('sha256', secret, body)}` } };
  const ts = String(p.nowS());
  const signature = sign(null, Buffer.from(ts + body), discord.privateKey).toString('hex');
  return { body, headers: { ...json, 'x-signature-ed25519': signature, 'x-signature-timestamp': ts } };
}

const post = (provider: Provider, tenantId: string, s: p.Signed) =>
  t.app.inject({ method: 'POST', url: `/api/v1/webhooks/in/${provider}/${tenantId}`, headers: s.headers, payload: s.body });

const invoice = (type: string, extra: object) =>
  p.stripeEvent(type, p.stripeInvoice(`in_${randomUUID().slice(0, 8)}`, 'cus_R1', 4900, extra));
const subscription = (items: object[]) =>
  p.stripeEvent(
    'customer.subscription.updated',
    p.stripeSubscription(`sub_${randomUUID().slice(0, 8)}`, 'cus_R1', null, { items: { object: 'list', data: items } }),
  );
const item = (quantity: number | string, unitAmount: number | string = 5000) => ({
  id: 'si_1',
  quantity,
  price: { id: 'price_pro', unit_amount: unitAmount, currency: 'usd', recurring: { interval: 'month', interval_count: 1 } },
});

/** An id no index entry could hold, and no provider sends: random, so it does not compress. */
const longId = (prefix: string) => prefix + randomBytes(1100).toString('hex');

/** Each provider's numbers and ids a normalizer writes, one past what can be stored, with the path refused. */
const CASES: { name: string; provider: Provider; body: () => string; path: string }[] = [
  {
    name: 'a customer id longer than an index entry holds',
    provider: 'stripe',
    body: () => JSON.stringify(p.stripeEvent('customer.created', p.stripeCustomer(longId('cus_')))),
    path: 'data.object.id',
  },
  {
    name: 'an organisation login longer than an index entry holds',
    provider: 'github',
    body: () => JSON.stringify({ ...p.githubPush('acme'), organization: { login: longId('org-') } }),
    path: 'organization.login',
  },
  {
    name: 'a team id longer than an index entry holds',
    provider: 'slack',
    body: () => JSON.stringify(p.slackMessage(longId('T'), 'C1', 'hi')),
    path: 'team_id',
  },
  {
    name: 'an invoice total past a bigint',
    provider: 'stripe',
    body: () => raw(invoice('invoice.created', { total: '<n>' }), { n: '99999999999999999999' }),
    path: 'data.object.total',
  },
  {
    name: 'an amount due that is not a number',
    provider: 'stripe',
    body: () => raw(invoice('invoice.payment_failed', { amount_due: '<n>' }), { n: '"lots"' }),
    path: 'data.object.amount_due',
  },
  {
    name: 'a due date past year 9999',
    provider: 'stripe',
    body: () => raw(invoice('invoice.finalized', { due_date: '<n>' }), { n: '99999999999999' }),
    path: 'data.object.due_date',
  },
  {
    name: 'an invoice currency that is no code',
    provider: 'stripe',
    body: () => JSON.stringify(invoice('invoice.paid', { currency: 'dollars' })),
    path: 'data.object.currency',
  },
  {
    name: 'an event time past year 9999',
    provider: 'stripe',
    body: () => JSON.stringify(p.stripeEvent('invoice.sent', p.stripeInvoice('in_T1', 'cus_R1', 100), 99_999_999_999_999)),
    path: 'created',
  },
  {
    name: 'a refunded amount past a bigint',
    provider: 'stripe',
    body: () =>
      raw(
        p.stripeEvent('charge.refunded', {
          id: 'ch_R1',
          object: 'charge',
          customer: 'cus_R1',
          currency: 'usd',
          amount: 100,
          amount_refunded: '<n>',
        }),
        {
          n: '1e20',
        },
      ),
    path: 'data.object.amount_refunded',
  },
  {
    name: 'a quantity of seats past an integer',
    provider: 'stripe',
    body: () => JSON.stringify(subscription([item(3_000_000_000)])),
    path: 'data.object.items.data.0.quantity',
  },
  {
    name: 'seats that together pass an integer',
    provider: 'stripe',
    body: () => JSON.stringify(subscription([item(2_000_000_000), item(2_000_000_000)])),
    path: 'data.object.items',
  },
  {
    name: 'prices that come to a monthly amount past a bigint',
    provider: 'stripe',
    body: () => JSON.stringify(subscription([item(2_000_000_000, Number.MAX_SAFE_INTEGER)])),
    path: 'data.object.items',
  },
  {
    name: 'a trial end past year 9999',
    provider: 'stripe',
    body: () =>
      JSON.stringify(p.stripeEvent('customer.subscription.created', p.stripeSubscription('sub_T1', 'cus_R1', 99_999_999_999_999))),
    path: 'data.object.trial_end',
  },
  {
    name: 'a message time past year 9999',
    provider: 'slack',
    body: () => {
      const m = p.slackMessage('T1', 'C1', 'hi');
      return JSON.stringify({ ...m, event: { ...m.event, event_ts: '99999999999999.000100' } });
    },
    path: 'event.event_ts',
  },
  {
    name: 'a message time before year 1',
    provider: 'discord',
    body: () => {
      const m = p.discordMessage('G1', 'hi');
      return JSON.stringify({ ...m, d: { ...m.d, timestamp: '-010000-01-01T00:00:00.000Z' } });
    },
    path: 'd.timestamp',
  },
  {
    name: 'a notification time past year 9999',
    provider: 'intercom',
    body: () =>
      JSON.stringify({ ...p.intercomConversation('conversation.user.created', 'a@initech.example'), created_at: 99_999_999_999_999 }),
    path: 'created_at',
  },
  {
    name: 'a lead time past year 9999',
    provider: 'meta_ads',
    body: () => {
      const lead = p.metaLead('P1', 'L1');
      lead.entry[0]!.changes[0]!.value.created_time = 99_999_999_999_999;
      return JSON.stringify(lead);
    },
    path: 'entry.0.changes.0.value.created_time',
  },
];

describe('numbers an event’s normalizer cannot store', () => {
  it.each(CASES)('refuses $name with 400, naming the field, and stores nothing', async ({ provider, body, path }) => {
    const { tenantId, secret } = await tenantWith(provider);
    const res = await post(provider, tenantId, signed(provider, secret, body()));
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({ code: 'validation_failed', errors: [{ path, message: expect.any(String) }] });
    expect(await t.prisma.inboxEvent.count({ where: { tenantId } })).toBe(0);
  });

  it('accepts the largest amount, count and time within range', async () => {
    const { tenantId, secret } = await tenantWith('stripe');
    const body = JSON.stringify(
      p.stripeEvent('invoice.created', p.stripeInvoice('in_MAX', 'cus_R1', Number.MAX_SAFE_INTEGER, { due_date: 253_402_300_799 })),
    );
    expect((await post('stripe', tenantId, signed('stripe', secret, body))).statusCode).toBe(202);
    await vi.waitFor(async () => expect(await t.prisma.invoice.count({ where: { tenantId, externalId: 'in_MAX' } })).toBe(1), {
      timeout: 10_000,
    });
    const stored = await t.prisma.invoice.findFirstOrThrow({ where: { tenantId, externalId: 'in_MAX' } });
    expect(stored.totalMinor).toBe(BigInt(Number.MAX_SAFE_INTEGER));
    expect(stored.dueAt!.toISOString()).toBe('9999-12-31T23:59:59.000Z');
  });

  it('applies the events sent beside a refused one in their batches, none of which fails', async () => {
    const bad = await tenantWith('stripe');
    const good = await tenantWith('stripe');
    const before = logLines.length;
    const sends = [];
    for (let i = 0; i < 20; i++) {
      const invoiceOf = (tenant: string) =>
        JSON.stringify(p.stripeEvent('invoice.created', p.stripeInvoice(`in_${tenant.slice(0, 4)}${i}`, 'cus_R1', 100 + i)));
      sends.push(post('stripe', good.tenantId, signed('stripe', good.secret, invoiceOf(good.tenantId))));
      sends.push(post('stripe', bad.tenantId, signed('stripe', bad.secret, invoiceOf(bad.tenantId))));
      if (i % 5 === 0) {
        const overflow = raw(invoice('invoice.created', { total: '<n>' }), { n: '99999999999999999999' });
        sends.push(post('stripe', bad.tenantId, signed('stripe', bad.secret, overflow)));
      }
    }
    const answers = (await Promise.all(sends)).map((r) => r.statusCode);
    expect(answers.filter((s) => s === 202)).toHaveLength(40);
    expect(answers.filter((s) => s === 400)).toHaveLength(4);
    await vi.waitFor(
      async () => {
        for (const { tenantId } of [good, bad]) expect(await t.prisma.invoice.count({ where: { tenantId } })).toBe(20);
      },
      { timeout: 20_000, interval: 100 },
    );
    expect(
      await t.prisma.inboxEvent.count({ where: { tenantId: { in: [good.tenantId, bad.tenantId] }, status: { not: 'processed' } } }),
    ).toBe(0);
    expect(logLines.slice(before).filter((l) => l.includes('a batch of inbound events failed'))).toEqual([]);
  });

  it('refuses, with the field named and nothing written, an event stored before acceptance checked its numbers', async () => {
    const { tenantId } = await tenantWith('stripe');
    const body = raw(invoice('invoice.created', { id: 'in_OLD', total: '<n>' }), { n: '99999999999999999999' });
    const { id } = await t.inbox.accept({
      tenantId,
      provider: 'stripe',
      dedupKey: `evt_${randomUUID()}`,
      eventType: 'invoice.created',
      rawBody: Buffer.from(body),
      hashBody: false,
      orderKey: null,
    });
    await expect(processInboxEvent(t.pool, id)).rejects.toMatchObject({
      code: 'validation_failed',
      fieldErrors: [{ path: 'data.object.total', message: expect.any(String) }],
    });
    expect(await t.prisma.invoice.count({ where: { tenantId } })).toBe(0);
  });

  it('leaves such an event out of the batch it comes in, which applies the others, and holds its invoice’s later events', async () => {
    const { tenantId } = await tenantWith('stripe');
    // Stored as before acceptance checked numbers, and published to no worker: only this batch applies them.
    const [good, bad, later] = await storeGroup(t.pool, tenantId, [
      p.stripeEvent('invoice.created', p.stripeInvoice('in_GOOD', 'cus_R1', 100)),
      p.stripeEvent('invoice.created', { ...p.stripeInvoice('in_BAD', 'cus_R1', 100), total: 1e20 }),
      p.stripeEvent('invoice.paid', p.stripeInvoice('in_BAD', 'cus_R1', 100, { status: 'paid' })),
    ]);
    const results = await processInboxBatch(
      t.pool,
      [good!, bad!, later!].map((id) => ({ id })),
    );
    expect([good, bad, later].map((id) => results.get(id!))).toEqual(['processed', 'alone', 'behind']);
    expect(await t.prisma.invoice.findMany({ where: { tenantId }, select: { externalId: true } })).toEqual([{ externalId: 'in_GOOD' }]);
  });
});
