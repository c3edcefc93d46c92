import { beforeAll, describe, expect, it, vi } from 'vitest';
import { operator } from '../../src/services/audit.ts';
import { createInboundSecretStore } from '../../src/services/integrations.ts';
import { appWithWorker, testSecretBox } from '../support/app.ts';
import { alert, tenantWithKey, userWithSession } from '../support/factories.ts';
import { readFixture, replayHeaders } from '../support/provider-fixtures.ts';
import * as p from '../support/providers.ts';

// One customer built the way a tenant builds one — Stripe's recorded deliveries signed with Stripe's own
// library, usage through the events API, a label and an alert — then erased. A second customer, built the
// same way, must come through untouched.

// As the application's database role: erasure needs no right the service does not have.
const t = appWithWorker({ asAppRole: true });
const STRIPE_SEQUENCE = [
  'customer.created',
  'customer.subscription.created',
  'invoice.created',
  'invoice.finalized',
  'invoice.payment_failed',
  'invoice.paid',
];
// What identifies Initech in the recorded deliveries.
const INITECH = { name: 'Initech', email: 'billing@initech.example', domain: 'initech.example', account: 'cus_Pb2024' };

let tenantId: string;
let apiKey: string;
let stripeSecret: string;

/** Sends a recorded delivery, signed now with Stripe's library; `asNewEvent` gives it a fresh event id. */
async function sendStripe(name: string, asNewEvent = false) {
  const r = readFixture('stripe', `2024-06-20.${String(STRIPE_SEQUENCE.indexOf(name) + 1).padStart(2, '0')}.${name}`);
  const body = asNewEvent ? r.body.toString('utf8').replace(/"evt_\w+"/, `"evt_again${Date.now()}"`) : r.body.toString('utf8');
  const signed = p.stripeSdkSigned(stripeSecret, body);
  const res = await t.app.inject({
    method: 'POST',
    url: `/api/v1/webhooks/in/stripe/${tenantId}`,
    headers: replayHeaders(r, { 'stripe-signature': signed.headers['stripe-signature']! }),
    payload: body,
  });
  expect(res.statusCode).toBe(202);
  await vi.waitFor(async () => expect(await t.prisma.inboxEvent.count({ where: { tenantId, status: 'received' } })).toBe(0), {
    timeout: 10_000,
    interval: 50,
  });
}

const api = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
  t.app.inject({ method, url, headers: { 'x-api-key': apiKey }, ...(payload ? { payload } : {}) });
const gql = async (query: string, variables: object = {}) =>
  (await t.app.inject({ method: 'POST', url: '/graphql', headers: { 'x-api-key': apiKey }, payload: { query, variables } })).json();

/** Every text and JSON column of every table, searched for each term; the hits as `table.column: term`. */
async function tracesOf(terms: string[]): Promise<string[]> {
  const { rows: columns } = await t.pool.query<{ table_name: string; column_name: string }>(
    `SELECT table_name, column_name FROM information_schema.columns
     WHERE table_schema = 'public' AND table_name <> '_prisma_migrations'
       AND data_type IN ('text', 'character varying', 'json', 'jsonb', 'ARRAY')`,
  );
  const hits: string[] = [];
  for (const { table_name, column_name } of columns) {
    for (const term of terms) {
      const { rows } = await t.pool.query(
        `SELECT 1 FROM "${table_name}" WHERE strpos(lower("${column_name}"::text), lower($1)) > 0 LIMIT 1`,
        [term],
      );
      if (rows.length) hits.push(`${table_name}.${column_name}: ${term}`);
    }
  }
  return hits;
}

/** The columns (uuid, text, JSON or arrays) of every table that hold an id. */
async function idsOf(id: string): Promise<string[]> {
  const { rows: columns } = await t.pool.query<{ table_name: string; column_name: string }>(
    `SELECT table_name, column_name FROM information_schema.columns
     WHERE table_schema = 'public' AND table_name <> '_prisma_migrations' AND data_type IN ('uuid', 'text', 'jsonb', 'json', 'ARRAY')
     ORDER BY table_name, column_name`,
  );
  const hits: string[] = [];
  for (const { table_name, column_name } of columns) {
    const { rows } = await t.pool.query(`SELECT 1 FROM "${table_name}" WHERE strpos("${column_name}"::text, $1) > 0 LIMIT 1`, [id]);
    if (rows.length) hits.push(`${table_name}.${column_name}`);
  }
  return hits;
}

let initechId: string;
let globexId: string;
const changesBeforeErasure = { rows: 0 };

beforeAll(async () => {
  ({ tenantId, apiKey } = await tenantWithKey(t.prisma));
  ({ secret: stripeSecret } = await createInboundSecretStore(t.prisma, testSecretBox(), { cacheMs: 0 }).put(
    { tenantId, provider: 'stripe' },
    operator(tenantId),
  ));
  for (const name of STRIPE_SEQUENCE) await sendStripe(name);
  initechId = (await t.prisma.customer.findFirstOrThrow({ where: { tenantId, name: INITECH.name } })).id;
  // A first score from the Stripe deliveries alone, so that what follows moves it and leaves explained changes.
  await vi.waitFor(async () => expect(await t.prisma.signal.count({ where: { customerId: initechId } })).toBeGreaterThan(0), {
    timeout: 10_000,
  });
  await t.score();
  const globex = await api('POST', '/api/v1/customers', {
    name: 'Globex',
    external_id: 'globex-1',
    email: 'ops@globex.example',
    domain: 'globex.example',
  });
  globexId = globex.json().id;
  await api('PATCH', `/api/v1/customers/${initechId}`, { external_id: 'crm-7781' });
  const events = await api('POST', '/api/v1/events', {
    events: [
      { external_id: 'crm-7781', event: 'report.exported', user_id: 'peter@initech.example' },
      { external_id: 'globex-1', event: 'report.exported', user_id: 'hank@globex.example' },
    ],
  });
  expect(events.statusCode).toBe(202);
  await alert(t.prisma, tenantId, initechId, { status: 'open', severity: 'high', alertType: 'payment_failed' });
  await gql('mutation($c: UUID!) { recordChurnOutcome(customerId: $c, churned: true) { id } }', { c: initechId });
  await vi.waitFor(async () => expect(await t.prisma.signal.count({ where: { customerId: initechId } })).toBeGreaterThan(1), {
    timeout: 10_000,
  });
});

describe('erasing a customer', () => {
  it('leaves no trace of its name, email, domain or provider ids in any table', async () => {
    expect(await tracesOf(Object.values(INITECH))).not.toEqual([]);
    // Its score moved as the deliveries and the usage event came in: it has explained changes to lose.
    await t.score();
    changesBeforeErasure.rows = Number(
      (await t.pool.query('SELECT count(*) AS n FROM health_changes WHERE customer_id = $1', [initechId])).rows[0].n,
    );
    // Its PaymentIntent and Charge, remembered with its invoice from the deliveries.
    const payments = (await t.prisma.invoicePayment.findMany({ where: { tenantId } })).map((p) => p.paymentId);
    expect(payments.sort()).toEqual(['ch_3Pb2024', 'pi_3Pb2024']);
    const res = await api('DELETE', `/api/v1/customers/${initechId}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ id: initechId, external_id: 'crm-7781', deleted: true });
    expect(await tracesOf([...Object.values(INITECH), 'peter@initech.example', ...payments])).toEqual([]);
    // The tenant's own id for it stays only in the customer.deleted announcement, so its systems can match it.
    expect(await tracesOf(['crm-7781'])).toEqual(['outbox_events.payload: crm-7781']);
  });

  it('removes the explanations of its health changes', async () => {
    // Erased by the first test, which counted them before.
    expect(changesBeforeErasure.rows).toBeGreaterThan(0);
    expect((await t.pool.query('SELECT 1 FROM health_changes WHERE customer_id = $1', [initechId])).rowCount).toBe(0);
  });

  it('keeps the invoices and subscriptions as revenue facts, without their link', async () => {
    const invoices = await t.prisma.invoice.findMany({ where: { tenantId } });
    expect(invoices.length).toBeGreaterThan(0);
    expect(invoices.every((i) => i.customerId === null && i.accountId === null)).toBe(true);
    expect(await t.prisma.subscription.count({ where: { tenantId, customerId: null, accountId: null } })).toBeGreaterThan(0);
  });

  it('keeps the inbound events’ metadata, so a redelivery is still a duplicate', async () => {
    const inbox = await t.prisma.inboxEvent.findMany({ where: { tenantId, provider: 'stripe' } });
    expect(inbox).toHaveLength(STRIPE_SEQUENCE.length);
    expect(inbox.every((e) => e.body === '' && e.dedupKey.startsWith('evt_'))).toBe(true);
  });

  it('leaves the other customer whole', async () => {
    const globex = await api('GET', `/api/v1/customers/${globexId}`);
    expect(globex.json()).toMatchObject({ name: 'Globex', email: 'ops@globex.example' });
    expect(await t.prisma.signal.count({ where: { customerId: globexId } })).toBe(1);
  });

  it('is recorded in the audit log by id alone', async () => {
    const r = await gql('{ auditEvents(action: "customer.erased") { nodes { actorType targetId changes } } }');
    expect(r.data.auditEvents.nodes).toEqual([
      { actorType: 'api_key', targetId: initechId, changes: expect.objectContaining({ inbound_bodies: STRIPE_SEQUENCE.length }) },
    ]);
  });

  it('announces customer.deleted with the ids only', async () => {
    const [event] = await t.prisma.outboxEvent.findMany({ where: { tenantId, type: 'customer.deleted' } });
    expect(event!.payload).toEqual({ tenant_id: tenantId, id: initechId, external_id: 'crm-7781' });
  });

  it('answers 404 for the erased customer afterwards, and for a second erasure', async () => {
    expect((await api('GET', `/api/v1/customers/${initechId}`)).statusCode).toBe(404);
    const again = await api('DELETE', `/api/v1/customers/${initechId}`);
    expect(again.statusCode).toBe(404);
    expect(again.headers['content-type']).toMatch(/^application\/problem\+json/);
  });

  it('does not bring the erased data back when the provider announces the same account again', async () => {
    await sendStripe('customer.created', true);
    // Stripe customers become customers, so a new one is made from this event alone: a new id, and none
    // of the erased history, labels, alerts or invoices comes back to it.
    const again = await t.prisma.customer.findFirstOrThrow({ where: { tenantId, name: INITECH.name } });
    expect(again.id).not.toBe(initechId);
    expect(again.externalId).toBeNull();
    expect(await t.prisma.alert.count({ where: { customerId: again.id } })).toBe(0);
    expect(await t.prisma.churnOutcome.count({ where: { customerId: again.id } })).toBe(0);
    expect(await t.prisma.invoice.count({ where: { customerId: again.id } })).toBe(0);
    expect(await t.prisma.subscription.count({ where: { customerId: again.id } })).toBe(0);
  });

  it('does not attach a later payment event to anything erased', async () => {
    await sendStripe('invoice.paid', true);
    // The invoice was kept as a revenue fact; the new event links it to the customer that exists now.
    const again = await t.prisma.customer.findFirstOrThrow({ where: { tenantId, name: INITECH.name } });
    expect(await t.prisma.alert.count({ where: { customerId: again.id } })).toBe(0);
    expect(await t.prisma.churnOutcome.count({ where: { customerId: again.id } })).toBe(0);
    expect(await t.prisma.healthHistory.count({ where: { customerId: again.id, day: { lt: new Date(Date.now() - 86_400_000) } } })).toBe(0);
    // The erased id is nowhere but in the audit record and the announcement, once the requests to
    // recompute it still on their way have been collected and dropped by the scoring loop.
    await t.score();
    expect(await idsOf(initechId)).toEqual([
      'audit_events.target_id',
      'outbox_events.dedup_key',
      'outbox_events.payload',
      'outbox_events.sequence_subject',
      'outbox_events.subject',
    ]);
  });

  it('is refused to a member', async () => {
    const member = await userWithSession(t.prisma, t.sessions, tenantId, 'member');
    const res = await t.app.inject({
      method: 'DELETE',
      url: `/api/v1/customers/${globexId}`,
      headers: { authorization: `Bearer ${member.token}` },
    });
    expect(res.statusCode).toBe(403);
    expect(await t.prisma.customer.count({ where: { id: globexId } })).toBe(1);
  });
});
