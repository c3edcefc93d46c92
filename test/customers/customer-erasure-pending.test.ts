import { expect } from 'vitest';
import { testWith } from '../support/fixtures.ts';
import { customer } from '../support/factories.ts';

// Erasure and inbound events not yet applied: those about the erased customer go with it; those that only
// share some text with it (its name, its domain in a URL, its external id in a date) belong to other
// customers and are applied as usual. No worker runs here, so the events stay pending throughout.

const test = testWith({ asAppRole: true });

const invoicePaid = (id: string, account: string) =>
  JSON.stringify({
    id,
    type: 'invoice.paid',
    created: '2024-06-20T10:00:00Z',
    data: { object: { object: 'invoice', customer: account, hosted_invoice_url: 'https://invoice.stripe.com/i/acct_1' } },
  });

test('keeps other customers’ events that only share text with the erased customer, and sets aside its own', async ({
  app,
  tenant,
  apiKey,
}) => {
  const erased = await customer(app.prisma, tenant.tenantId, { name: 'Invoice', externalId: '2024', domain: 'stripe.com' });
  await app.prisma.customerIdentity.create({
    data: { tenantId: tenant.tenantId, customerId: erased.id, provider: 'stripe', externalId: 'cus_Erased1' },
  });
  const pending = (id: string, account: string) =>
    app.prisma.inboxEvent.create({
      data: { tenantId: tenant.tenantId, provider: 'stripe', dedupKey: id, eventType: 'invoice.paid', body: invoicePaid(id, account) },
    });
  const others = await pending('evt_other', 'cus_Other22');
  const its = await pending('evt_its', 'cus_Erased1');
  const chargeBody = JSON.stringify({
    id: 'evt_done',
    created: '2024-06-20T10:00:00Z',
    data: { object: { object: 'charge', customer: 'cus_Other22', receipt_url: 'https://pay.stripe.com/receipts/acct_1' } },
  });
  const applied = await app.prisma.inboxEvent.create({
    data: {
      tenantId: tenant.tenantId,
      provider: 'stripe',
      dedupKey: 'evt_done',
      eventType: 'charge.succeeded',
      body: chargeBody,
      status: 'processed',
    },
  });

  const res = await app.app.inject({ method: 'DELETE', url: `/api/v1/customers/${erased.id}`, headers: { 'x-api-key': apiKey } });
  expect(res.statusCode).toBe(200);

  const after = async (id: string) => app.prisma.inboxEvent.findUniqueOrThrow({ where: { id } });
  expect(await after(others.id)).toMatchObject({ status: 'received', body: invoicePaid('evt_other', 'cus_Other22'), lastError: null });
  expect(await after(its.id)).toMatchObject({ status: 'ignored', body: '' });
  // An applied event keeps its body too when the external id is only part of a date in it, the domain of a URL.
  expect(await after(applied.id)).toMatchObject({ status: 'processed', body: chargeBody });
});

test('erases while a batch holds one of its pending events, and leaves that event to be applied after it', async ({
  app,
  tenant,
  apiKey,
}) => {
  const erased = await customer(app.prisma, tenant.tenantId, { name: 'Held Customer' });
  await app.prisma.customerIdentity.create({
    data: { tenantId: tenant.tenantId, customerId: erased.id, provider: 'stripe', externalId: 'cus_Held1' },
  });
  const held = await app.prisma.inboxEvent.create({
    data: {
      tenantId: tenant.tenantId,
      provider: 'stripe',
      dedupKey: 'evt_held',
      eventType: 'invoice.paid',
      body: invoicePaid('evt_held', 'cus_Held1'),
    },
  });
  // As a batch does: its rows locked first, then (not here) the tenant's attribution lock, which the erasure holds.
  const batch = await app.pool.connect();
  try {
    await batch.query('BEGIN');
    await batch.query('SELECT id FROM inbox_events WHERE id = $1 FOR UPDATE', [held.id]);
    const res = await app.app.inject({ method: 'DELETE', url: `/api/v1/customers/${erased.id}`, headers: { 'x-api-key': apiKey } });
    expect(res.statusCode).toBe(200);
  } finally {
    await batch.query('ROLLBACK');
    batch.release();
  }
  expect(await app.prisma.customer.count({ where: { id: erased.id } })).toBe(0);
  expect(await app.prisma.inboxEvent.findUniqueOrThrow({ where: { id: held.id } })).toMatchObject({ status: 'received' });
});
