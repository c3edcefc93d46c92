import { operator } from '../../src/services/audit.ts';
import { describe, expect, it } from 'vitest';
import { markOverdueInvoices } from '../../src/ingest/overdue.ts';
import { createInboundSecretStore } from '../../src/services/integrations.ts';
import { appWithWorker, testSecretBox } from '../support/app.ts';
import { tenantWithKey } from '../support/factories.ts';
import * as p from '../support/providers.ts';

const t = appWithWorker();

type Provider = 'stripe' | 'github' | 'slack' | 'discord' | 'intercom' | 'meta_ads';
async function setup(provider: Provider, secret?: string) {
  const k = await tenantWithKey(t.prisma);
  const s = await createInboundSecretStore(t.prisma, testSecretBox(), { cacheMs: 0 }).put(
    { tenantId: k.tenantId, provider, secret },
    operator(k.tenantId),
  );
  return { ...k, secret: s.secret };
}
async function send(provider: Provider, tenantId: string, s: p.Signed) {
  const res = await t.app.inject({
    method: 'POST',
    url: `/api/v1/webhooks/in/${provider}/${tenantId}`,
    headers: s.headers,
    payload: s.body,
  });
  expect([200, 202]).toContain(res.statusCode);
  return res.json();
}
/** Waits until the worker has taken every stored event of the tenant. */
async function settled(tenantId: string) {
  await expect
    .poll(() => t.prisma.inboxEvent.count({ where: { tenantId, status: 'received' } }), { timeout: 10_000, interval: 50 })
    .toBe(0);
}
const outbox = (tenantId: string, type?: string) =>
  t.prisma.outboxEvent.findMany({ where: { tenantId, ...(type ? { type } : {}) }, orderBy: { createdAt: 'asc' } });

describe('stripe invoices', () => {
  it('creates a draft invoice and writes invoice.created with the contract’s invoice payload', async () => {
    const { tenantId, secret } = await setup('stripe');
    await send('stripe', tenantId, p.signStripe(secret, p.stripeEvent('invoice.created', p.stripeInvoice('in_1', 'cus_1', 12345))));
    await settled(tenantId);
    const invoice = await t.prisma.invoice.findFirstOrThrow({ where: { tenantId } });
    expect(invoice).toMatchObject({ status: 'draft', totalMinor: 12345n, currency: 'usd', externalId: 'in_1' });
    const [event] = await outbox(tenantId, 'invoice.created');
    expect(event!.payload).toMatchObject({
      tenant_id: tenantId,
      invoice_id: invoice.id,
      status: 'draft',
      total: '123.45',
      currency: 'usd',
    });
  });

  it('walks draft → open → sent → paid, announcing sent and paid once each', async () => {
    const { tenantId, secret } = await setup('stripe');
    const inv = p.stripeInvoice('in_2', 'cus_2', 5000);
    for (const type of ['invoice.created', 'invoice.finalized', 'invoice.sent', 'invoice.paid']) {
      await send('stripe', tenantId, p.signStripe(secret, p.stripeEvent(type, inv)));
      await settled(tenantId);
    }
    expect((await t.prisma.invoice.findFirstOrThrow({ where: { tenantId } })).status).toBe('paid');
    expect((await outbox(tenantId)).map((e) => e.type)).toEqual(['invoice.created', 'invoice.sent', 'invoice.paid']);
  });

  it('never moves an invoice backwards when the provider sends its events out of order, and announces it created once', async () => {
    const { tenantId, secret } = await setup('stripe');
    const inv = p.stripeInvoice('in_3', 'cus_3', 990);
    await send('stripe', tenantId, p.signStripe(secret, p.stripeEvent('invoice.paid', inv)));
    await settled(tenantId);
    await send('stripe', tenantId, p.signStripe(secret, p.stripeEvent('invoice.created', inv)));
    await send('stripe', tenantId, p.signStripe(secret, p.stripeEvent('invoice.sent', inv)));
    await settled(tenantId);
    expect((await t.prisma.invoice.findFirstOrThrow({ where: { tenantId } })).status).toBe('paid');
    // First heard of as paid: announced created (as it then was) and paid; the late created and sent announce nothing.
    const events = (await outbox(tenantId)).sort((a, b) => a.sequence! - b.sequence!);
    expect(events.map((e) => [e.type, e.sequence])).toEqual([
      ['invoice.created', 1],
      ['invoice.paid', 2],
    ]);
    expect(events.find((e) => e.type === 'invoice.created')!.payload).toMatchObject({ status: 'paid' });
    const statuses = await t.prisma.inboxEvent.findMany({ where: { tenantId }, select: { eventType: true, status: true } });
    expect(statuses.filter((e) => e.eventType !== 'invoice.paid').map((e) => e.status)).toEqual(['ignored', 'ignored']);
  });

  it('marks an invoice overdue once when its due date passes', async () => {
    const { tenantId, secret } = await setup('stripe');
    const inv = p.stripeInvoice('in_4', 'cus_4', 100, { due_date: p.nowS() + 3600 });
    await send('stripe', tenantId, p.signStripe(secret, p.stripeEvent('invoice.finalized', inv)));
    await settled(tenantId);
    const later = new Date(Date.now() + 2 * 3600_000);
    await markOverdueInvoices(t.pool, later);
    await markOverdueInvoices(t.pool, later);
    await send('stripe', tenantId, p.signStripe(secret, p.stripeEvent('invoice.overdue', inv)));
    await settled(tenantId);
    expect((await t.prisma.invoice.findFirstOrThrow({ where: { tenantId } })).status).toBe('overdue');
    expect((await outbox(tenantId, 'invoice.overdue')).length).toBe(1);
  });

  // Signed by Stripe's own library, as Stripe signs them.
  it('refuses an invoice whose currency is no currency code, and another tenant’s invoices still go overdue', async () => {
    const hostile = await setup('stripe');
    const other = await setup('stripe');
    const longAgo = 100_000; // 1970: the first invoice any overdue pass would take
    const bad = { ...p.stripeInvoice('in_bad', 'cus_bad', 1000, { due_date: longAgo }), currency: 'constructor', status: 'open' };
    const signed = p.stripeSdkSigned(hostile.secret, JSON.stringify(p.stripeEvent('invoice.finalized', bad)));
    const refused = await t.app.inject({
      method: 'POST',
      url: `/api/v1/webhooks/in/stripe/${hostile.tenantId}`,
      headers: signed.headers,
      payload: signed.body,
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({ code: 'validation_failed', errors: [{ path: 'data.object.currency' }] });
    const inv = p.stripeInvoice('in_ok', 'cus_ok', 2500, { due_date: p.nowS() + 60 });
    await send('stripe', other.tenantId, p.stripeSdkSigned(other.secret, JSON.stringify(p.stripeEvent('invoice.finalized', inv))));
    await settled(other.tenantId);
    expect(await t.prisma.inboxEvent.count({ where: { tenantId: hostile.tenantId } })).toBe(0);
    expect(await t.prisma.invoice.count({ where: { tenantId: hostile.tenantId } })).toBe(0);
    await markOverdueInvoices(t.pool, new Date(Date.now() + 3600_000));
    expect((await t.prisma.invoice.findFirstOrThrow({ where: { tenantId: other.tenantId } })).status).toBe('overdue');
    expect(await outbox(other.tenantId, 'invoice.overdue')).toHaveLength(1);
  });

  it('ignores event types named like members of Object.prototype, from Stripe and from Intercom', async () => {
    const stripe = await setup('stripe');
    for (const type of ['constructor', 'toString', '__proto__']) {
      await send(
        'stripe',
        stripe.tenantId,
        p.stripeSdkSigned(stripe.secret, JSON.stringify(p.stripeEvent(type, p.stripeInvoice(`in_${type}`, 'cus_x', 100)))),
      );
    }
    const intercom = await setup('intercom');
    await send('intercom', intercom.tenantId, p.signIntercom(intercom.secret, p.intercomConversation('constructor', 'jo@proto.example')));
    for (const tenantId of [stripe.tenantId, intercom.tenantId]) {
      await settled(tenantId);
      const events = await t.prisma.inboxEvent.findMany({ where: { tenantId } });
      expect(events.map((e) => [e.status, e.lastError])).toEqual(events.map(() => ['ignored', null]));
    }
    expect(await t.prisma.invoice.count({ where: { tenantId: stripe.tenantId } })).toBe(0);
    expect(await t.prisma.signal.count({ where: { tenantId: intercom.tenantId } })).toBe(0);
  });

  it('formats amounts with the currency’s exponent', async () => {
    const { tenantId, secret } = await setup('stripe');
    await send(
      'stripe',
      tenantId,
      p.signStripe(secret, p.stripeEvent('invoice.created', { ...p.stripeInvoice('in_j', 'cus_j', 1500), currency: 'jpy' })),
    );
    await send(
      'stripe',
      tenantId,
      p.signStripe(secret, p.stripeEvent('invoice.created', { ...p.stripeInvoice('in_k', 'cus_k', 12345), currency: 'kwd' })),
    );
    await settled(tenantId);
    const totals = (await outbox(tenantId, 'invoice.created'))
      .map((e) => e.payload as { total: string; currency: string })
      .sort((a, b) => a.currency.localeCompare(b.currency));
    expect(totals.map((x) => [x.currency, x.total])).toEqual([
      ['jpy', '1500.00'],
      ['kwd', '12.35'],
    ]);
  });

  it('turns invoice.payment_failed into payment.failed without changing the status, and a billing signal', async () => {
    const { tenantId, secret } = await setup('stripe');
    await send(
      'stripe',
      tenantId,
      p.signStripe(secret, p.stripeEvent('customer.created', p.stripeCustomer('cus_pf', 'ap@globex.example', 'Globex'))),
    );
    await settled(tenantId);
    const inv = p.stripeInvoice('in_5', 'cus_pf', 4200, { status: 'open', payment_intent: 'pi_123' });
    await send('stripe', tenantId, p.signStripe(secret, p.stripeEvent('invoice.finalized', inv)));
    await send('stripe', tenantId, p.signStripe(secret, p.stripeEvent('invoice.payment_failed', inv)));
    await settled(tenantId);
    const invoice = await t.prisma.invoice.findFirstOrThrow({ where: { tenantId } });
    expect(invoice.status).toBe('open');
    const [failed] = await outbox(tenantId, 'payment.failed');
    expect(failed!.payload).toMatchObject({
      payment_id: 'pi_123',
      invoice_id: invoice.id,
      customer_id: invoice.customerId,
      amount: '42.00',
      currency: 'usd',
    });
    expect(await t.prisma.signal.count({ where: { tenantId, kind: 'billing.payment_failed', customerId: invoice.customerId } })).toBe(1);
  });

  it('turns charge.refunded into payment.refunded', async () => {
    const { tenantId, secret } = await setup('stripe');
    const charge = {
      id: 'ch_1',
      object: 'charge',
      customer: 'cus_r',
      amount: 3000,
      amount_refunded: 1000,
      currency: 'eur',
      refunds: { data: [{ reason: 'requested_by_customer' }] },
    };
    await send('stripe', tenantId, p.signStripe(secret, p.stripeEvent('charge.refunded', charge)));
    await settled(tenantId);
    expect((await outbox(tenantId, 'payment.refunded'))[0]!.payload).toMatchObject({
      payment_id: 'ch_1',
      amount: '10.00',
      currency: 'eur',
      reason: 'requested_by_customer',
    });
  });
});

describe('stripe subscriptions: the trial rule', () => {
  const day = 86_400;
  async function trial(ends: (number | null)[]) {
    const { tenantId, secret } = await setup('stripe');
    let created = p.nowS() - 1000;
    for (const end of ends) {
      await send(
        'stripe',
        tenantId,
        p.signStripe(secret, p.stripeEvent('customer.subscription.updated', p.stripeSubscription('sub_1', 'cus_t', end), created++)),
      );
      await settled(tenantId);
    }
    return { tenantId, events: await outbox(tenantId, 'subscription.trial_extended') };
  }

  it('emits nothing when trial_end is first set', async () => {
    expect((await trial([null, p.nowS() + 7 * day])).events).toHaveLength(0);
  });

  it('emits subscription.trial_extended when trial_end moves later on an existing trial', async () => {
    const first = p.nowS() + 7 * day;
    const { tenantId, events } = await trial([first, first + 7 * day]);
    expect(events).toHaveLength(1);
    const sub = await t.prisma.subscription.findFirstOrThrow({ where: { tenantId } });
    expect(events[0]!.payload).toEqual({
      tenant_id: tenantId,
      subscription_id: sub.id,
      customer_id: sub.customerId,
      previous_trial_end: new Date(first * 1000).toISOString(),
      trial_end: new Date((first + 7 * day) * 1000).toISOString(),
    });
  });

  it('emits one subscription.trial_extended for each move later, a date it had before included', async () => {
    const first = p.nowS() + 10 * day;
    const { tenantId, events } = await trial([first, first + 10 * day, first, first + 10 * day]);
    expect(events.map((e) => (e.payload as { trial_end: string }).trial_end)).toEqual([
      new Date((first + 10 * day) * 1000).toISOString(),
      new Date((first + 10 * day) * 1000).toISOString(),
    ]);
    expect(await t.prisma.signal.count({ where: { tenantId, kind: 'billing.trial_extended' } })).toBe(2);
  });

  it('keeps an update over a creation of the same second, and a deletion over an update', async () => {
    const { tenantId, secret } = await setup('stripe');
    const at = p.nowS() - 100;
    const price = { id: 'price_pro', unit_amount: 5000, currency: 'usd', recurring: { interval: 'month', interval_count: 1 } };
    const sub = (seats: number, extra: object = {}) =>
      p.stripeSubscription('sub_tie', 'cus_tie', null, {
        items: { object: 'list', data: [{ id: 'si_tie', quantity: seats, price }] },
        ...extra,
      });
    for (const [type, object] of [
      ['customer.subscription.updated', sub(10)],
      ['customer.subscription.created', sub(5)],
    ] as const) {
      await send('stripe', tenantId, p.signStripe(secret, p.stripeEvent(type, object, at)));
      await settled(tenantId);
    }
    expect((await t.prisma.subscription.findFirstOrThrow({ where: { tenantId } })).seats).toBe(10);
    for (const [type, object] of [
      ['customer.subscription.deleted', sub(10, { status: 'canceled', canceled_at: at + 1 })],
      ['customer.subscription.updated', sub(12)],
    ] as const) {
      await send('stripe', tenantId, p.signStripe(secret, p.stripeEvent(type, object, at + 1)));
      await settled(tenantId);
    }
    expect(await t.prisma.subscription.findFirstOrThrow({ where: { tenantId } })).toMatchObject({ status: 'canceled', seats: 10 });
  });

  it('emits nothing when trial_end moves earlier or stays the same', async () => {
    const first = p.nowS() + 14 * day;
    expect((await trial([first, first - day, first - day])).events).toHaveLength(0);
  });

  it('ignores an older event arriving after a newer one', async () => {
    const { tenantId, secret } = await setup('stripe');
    const end = p.nowS() + 7 * day;
    await send(
      'stripe',
      tenantId,
      p.signStripe(secret, p.stripeEvent('customer.subscription.updated', p.stripeSubscription('sub_o', 'cus_o', end + day), p.nowS())),
    );
    await send(
      'stripe',
      tenantId,
      p.signStripe(secret, p.stripeEvent('customer.subscription.updated', p.stripeSubscription('sub_o', 'cus_o', end), p.nowS() - 60)),
    );
    await settled(tenantId);
    expect((await t.prisma.subscription.findFirstOrThrow({ where: { tenantId } })).trialEnd).toEqual(new Date((end + day) * 1000));
  });

  it('records a churn outcome when a subscription is cancelled', async () => {
    const { tenantId, secret } = await setup('stripe');
    await send(
      'stripe',
      tenantId,
      p.signStripe(secret, p.stripeEvent('customer.created', p.stripeCustomer('cus_c', 'x@hooli.example', 'Hooli'))),
    );
    await settled(tenantId);
    await send(
      'stripe',
      tenantId,
      p.signStripe(
        secret,
        p.stripeEvent('customer.subscription.deleted', p.stripeSubscription('sub_c', 'cus_c', null, { canceled_at: p.nowS() })),
      ),
    );
    await settled(tenantId);
    expect(await t.prisma.churnOutcome.count({ where: { tenantId, churned: true, source: 'stripe' } })).toBe(1);
  });
});

describe('customers and attribution', () => {
  it('creates a customer with a stripe identity from customer.created, matched next time by identity', async () => {
    const { tenantId, secret } = await setup('stripe');
    await send(
      'stripe',
      tenantId,
      p.signStripe(secret, p.stripeEvent('customer.created', p.stripeCustomer('cus_new', 'billing@initech.example'))),
    );
    await send(
      'stripe',
      tenantId,
      p.signStripe(secret, p.stripeEvent('customer.updated', p.stripeCustomer('cus_new', 'billing@initech.example'))),
    );
    await settled(tenantId);
    const customers = await t.prisma.customer.findMany({ where: { tenantId }, include: { identities: true } });
    expect(customers).toHaveLength(1);
    expect(customers[0]).toMatchObject({
      name: 'Initech',
      domain: 'initech.example',
      identities: [{ provider: 'stripe', externalId: 'cus_new' }],
    });
    expect((await outbox(tenantId, 'customer.created')).length).toBe(1);
  });

  it('matches a stripe customer to an existing customer by email domain', async () => {
    const { tenantId, secret, apiKey } = await setup('stripe');
    const made = await t.app.inject({
      method: 'POST',
      url: '/api/v1/customers',
      headers: { 'x-api-key': apiKey },
      payload: { name: 'Umbrella', domain: 'umbrella.example' },
    });
    await send(
      'stripe',
      tenantId,
      p.signStripe(secret, p.stripeEvent('customer.created', p.stripeCustomer('cus_u', 'pay@umbrella.example'))),
    );
    await settled(tenantId);
    const identities = await t.prisma.customerIdentity.findMany({ where: { tenantId } });
    expect(identities).toEqual([expect.objectContaining({ customerId: made.json().id, externalId: 'cus_u' })]);
  });

  it('keeps events that match no customer, and attributes them when the identity is added', async () => {
    const { tenantId, secret, apiKey } = await setup('github');
    await send('github', tenantId, p.signGithub(secret, 'push', p.githubPush('wayne-labs', 4)));
    await settled(tenantId);
    const pending = await t.prisma.signal.findFirstOrThrow({ where: { tenantId } });
    expect(pending).toMatchObject({ customerId: null, kind: 'code.push', value: 4, accountId: 'wayne-labs' });
    const made = await t.app.inject({
      method: 'POST',
      url: '/api/v1/customers',
      headers: { 'x-api-key': apiKey },
      payload: { name: 'Wayne', identities: [{ provider: 'github', external_id: 'wayne-labs' }] },
    });
    expect((await t.prisma.signal.findUniqueOrThrow({ where: { id: pending.id } })).customerId).toBe(made.json().id);
    // New events now find the customer straight away.
    await send(
      'github',
      tenantId,
      p.signGithub(secret, 'issues', { action: 'opened', organization: { login: 'wayne-labs' }, sender: { login: 'bruce' } }),
    );
    await settled(tenantId);
    expect(await t.prisma.signal.count({ where: { tenantId, customerId: made.json().id } })).toBe(2);
  });
});

describe('chat, support and ads', () => {
  it('slack: records messages with a sentiment score, by team or channel identity', async () => {
    const { tenantId, secret, apiKey } = await setup('slack');
    const made = await t.app.inject({
      method: 'POST',
      url: '/api/v1/customers',
      headers: { 'x-api-key': apiKey },
      payload: { name: 'Acme', identities: [{ provider: 'slack', external_id: 'C_SHARED' }] },
    });
    await send('slack', tenantId, p.signSlack(secret, p.slackMessage('T_OTHER', 'C_SHARED', 'This is great, thank you so much!')));
    await send(
      'slack',
      tenantId,
      p.signSlack(secret, p.slackMessage('T_OTHER', 'C_SHARED', 'This is terrible and broken, awful experience')),
    );
    await settled(tenantId);
    const signals = await t.prisma.signal.findMany({ where: { tenantId }, orderBy: { sentiment: 'desc' } });
    expect(signals.map((s) => [s.kind, s.customerId])).toEqual([
      ['chat.message', made.json().id],
      ['chat.message', made.json().id],
    ]);
    expect(signals[0]!.sentiment).toBeGreaterThan(0);
    expect(signals[1]!.sentiment).toBeLessThan(0);
  });

  it('discord: records guild messages relayed by the bot', async () => {
    const keys = p.discordKeys();
    const { tenantId } = await setup('discord', keys.publicHex);
    await send('discord', tenantId, p.signDiscord(keys.privateKey, p.discordMessage('G42', 'love the new dashboard')));
    await send(
      'discord',
      tenantId,
      p.signDiscord(keys.privateKey, { op: 0, t: 'GUILD_MEMBER_REMOVE', d: { guild_id: 'G42', user: { id: '9' } } }),
    );
    await settled(tenantId);
    const kinds = (await t.prisma.signal.findMany({ where: { tenantId, accountId: 'G42' } })).map((s) => s.kind).sort();
    expect(kinds).toEqual(['chat.member_left', 'chat.message']);
  });

  it('intercom: records conversations attributed by the author’s email domain, with sentiment', async () => {
    const { tenantId, secret, apiKey } = await setup('intercom');
    const made = await t.app.inject({
      method: 'POST',
      url: '/api/v1/customers',
      headers: { 'x-api-key': apiKey },
      payload: { name: 'Soylent', domain: 'soylent.example' },
    });
    await send('intercom', tenantId, p.signIntercom(secret, p.intercomConversation('conversation.user.created', 'jo@soylent.example')));
    await send(
      'intercom',
      tenantId,
      p.signIntercom(
        secret,
        p.intercomConversation('conversation.rating.added', 'jo@soylent.example', { conversation_rating: { rating: 2 } }),
      ),
    );
    await settled(tenantId);
    const signals = await t.prisma.signal.findMany({ where: { tenantId }, orderBy: { kind: 'asc' } });
    expect(signals.map((s) => [s.kind, s.customerId, s.value])).toEqual([
      ['support.conversation_opened', made.json().id, 1],
      ['support.rating', made.json().id, 2],
    ]);
    expect(signals[0]!.sentiment).toBeLessThan(0);
  });

  it('meta_ads: attributes leads by the lead’s email domain', async () => {
    const { tenantId, secret, apiKey } = await setup('meta_ads');
    const made = await t.app.inject({
      method: 'POST',
      url: '/api/v1/customers',
      headers: { 'x-api-key': apiKey },
      payload: { name: 'Tyrell', domain: 'tyrell.example' },
    });
    await send('meta_ads', tenantId, p.signMeta(secret, p.metaLead('PAGE9', 'lead-1', 'r.deckard@tyrell.example')));
    await send('meta_ads', tenantId, p.signMeta(secret, p.metaLead('PAGE9', 'lead-2', 'someone@gmail.com')));
    await settled(tenantId);
    const leads = await t.prisma.signal.findMany({ where: { tenantId, kind: 'ads.lead' }, orderBy: { createdAt: 'asc' } });
    expect(leads.map((l) => l.customerId).sort()).toEqual([made.json().id, null].sort());
  });

  it('stores and acknowledges an event of a type we do not use, marking it ignored', async () => {
    const { tenantId, secret } = await setup('stripe');
    const res = await send('stripe', tenantId, p.signStripe(secret, p.stripeEvent('balance.available', { object: 'balance' })));
    await settled(tenantId);
    expect((await t.prisma.inboxEvent.findUniqueOrThrow({ where: { id: res.id } })).status).toBe('ignored');
  });
});

describe('exactly once', () => {
  it('a replayed delivery changes nothing a second time', async () => {
    const { tenantId, secret } = await setup('stripe');
    const signed = p.signStripe(secret, p.stripeEvent('invoice.created', p.stripeInvoice('in_r', 'cus_r', 100)));
    await send('stripe', tenantId, signed);
    await settled(tenantId);
    expect((await send('stripe', tenantId, signed)).duplicate).toBe(true);
    await settled(tenantId);
    expect(await t.prisma.invoice.count({ where: { tenantId } })).toBe(1);
    expect((await outbox(tenantId)).length).toBe(1);
  });

  it('a message delivered twice is applied once', async () => {
    const { tenantId, secret } = await setup('github');
    const res = await send('github', tenantId, p.signGithub(secret, 'push', p.githubPush('dup-org')));
    await settled(tenantId);
    await t.queue.publish('inbound.events', { id: res.id });
    await t.queue.publish('inbound.events', { id: res.id });
    await new Promise((r) => setTimeout(r, 300));
    expect(await t.prisma.signal.count({ where: { tenantId } })).toBe(1);
  });
});
