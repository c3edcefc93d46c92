import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { markOverdueInvoices } from '../../src/ingest/overdue.ts';
import { EVENT_NAMES, EVENTS, type EventName, payloadJsonSchema } from '../../src/outbox/events/registry.ts';
import { operator } from '../../src/services/audit.ts';
import { createInboundSecretStore } from '../../src/services/integrations.ts';
import { appWithWorker, testSecretBox } from '../support/app.ts';
import { invoice, signals, spread, tenantWithKey } from '../support/factories.ts';
import { fixtureNames, readFixture, replayHeaders } from '../support/provider-fixtures.ts';
import * as p from '../support/providers.ts';

// The registry's schemas are checked with an independent validator (Ajv, JSON Schema 2020-12): its
// examples must fit them, and so must the payloads the real code paths write to the outbox.

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);
const validatorOf = (name: EventName) => ajv.compile(payloadJsonSchema(name));

describe('the event registry', () => {
  it.each(EVENT_NAMES)('%s: the example fits the payload schema', (name) => {
    const validate = validatorOf(name);
    expect(validate(EVENTS[name].example), JSON.stringify(validate.errors)).toBe(true);
  });

  it('describes every property as required and refuses none of the example’s fields', () => {
    for (const name of EVENT_NAMES) {
      const schema = payloadJsonSchema(name) as { properties: object; required: string[] };
      expect(schema.required.sort(), name).toEqual(Object.keys(schema.properties).sort());
      expect(Object.keys(EVENTS[name].example as object).sort(), name).toEqual(schema.required.sort());
    }
  });

  it('lists every event type in the events table of docs/decisions.md §5, and no other', () => {
    const doc = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'decisions.md'), 'utf8');
    const lines = doc.slice(doc.indexOf('| event | payload |')).split('\n');
    const end = lines.findIndex((l) => !l.startsWith('|'));
    const documented = lines.slice(2, end).flatMap((row) => [...row.split('|')[1]!.matchAll(/`([a-z_.]+)`/g)].map((m) => m[1]));
    expect(documented.sort()).toEqual([...EVENT_NAMES].sort());
  });

  it('refuses a payload missing a field or with a wrong type', () => {
    const validate = validatorOf('invoice.paid');
    const { total: _, ...withoutTotal } = EVENTS['invoice.paid'].example;
    expect(validate(withoutTotal)).toBe(false);
    expect(validate({ ...EVENTS['invoice.paid'].example, total: 123.45 })).toBe(false);
  });
});

describe('payloads written by the real code paths', () => {
  const t = appWithWorker();
  let tenantId: string;
  let apiKey: string;

  beforeAll(async () => {
    ({ tenantId, apiKey } = await tenantWithKey(t.prisma));
    const { secret } = await createInboundSecretStore(t.prisma, testSecretBox(), { cacheMs: 0 }).put(
      { tenantId, provider: 'stripe' },
      operator(tenantId),
    );
    // Stripe's recorded deliveries (customers, subscriptions, invoices, failed payments, refunds), signed by Stripe's library.
    for (const name of fixtureNames('stripe', '2024-06-20')) {
      const r = readFixture('stripe', name);
      const signed = p.stripeSdkSigned(secret, r.body.toString('utf8'));
      const accepted = await t.app.inject({
        method: 'POST',
        url: `/api/v1/webhooks/in/stripe/${tenantId}`,
        headers: replayHeaders(r, { 'stripe-signature': signed.headers['stripe-signature']! }),
        payload: r.body,
      });
      // Applied before the next is sent, as Stripe sends them one after the other: events of separate
      // deliveries may be applied side by side, and an invoice.created applied after its invoice.finalized
      // is out of order and ignored (docs/inbound-webhooks.md).
      const id = accepted.json().id as string;
      for (let waited = 0; waited < 10_000; waited += 20) {
        if ((await t.prisma.inboxEvent.findUniqueOrThrow({ where: { id } })).status !== 'received') break;
        await new Promise((r) => setTimeout(r, 20));
      }
    }
    // A customer through the API, then scored with a failing, silent record: health, churn and alerts events.
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/v1/customers',
      headers: { 'x-api-key': apiKey },
      payload: { name: 'Hooli', email: 'ops@hooli.example', domain: 'hooli.example' },
    });
    const customerId = created.json().id as string;
    await signals(t.prisma, tenantId, customerId, [...spread('billing.payment_failed', 3, 20), ...spread('support.ticket_opened', 12, 10)]);
    await t.score();
    // An open invoice past its due date: invoice.overdue from the worker's pass.
    await invoice(t.prisma, tenantId, customerId, { status: 'open', dueDaysAgo: 3 });
    await markOverdueInvoices(t.pool);
    // Another customer, erased: customer.deleted.
    const doomed = await t.app.inject({
      method: 'POST',
      url: '/api/v1/customers',
      headers: { 'x-api-key': apiKey },
      payload: { name: 'Pied Piper' },
    });
    await t.app.inject({ method: 'DELETE', url: `/api/v1/customers/${doomed.json().id}`, headers: { 'x-api-key': apiKey } });
  }, 60_000);

  it('fit the registry’s schema, for every event the paths produced', async () => {
    const rows = await t.prisma.outboxEvent.findMany({ where: { tenantId } });
    const seen = new Set<string>();
    for (const row of rows) {
      const validate = validatorOf(row.type as EventName);
      expect(validate(row.payload), `${row.type}: ${JSON.stringify(validate.errors)}`).toBe(true);
      seen.add(row.type);
    }
    // The paths above produce at least these; the others are built by the same typed builders.
    expect([...seen].sort()).toEqual(
      expect.arrayContaining([
        'alert.created',
        'churn_prediction.updated',
        'customer.created',
        'customer.deleted',
        'customer.health_changed',
        'invoice.created',
        'invoice.overdue',
        'invoice.paid',
        'payment.failed',
        'payment.refunded',
        'subscription.trial_extended',
      ]),
    );
  });

  it('have the very shape of the registry’s example, nested alike, so an example is what receivers get', async () => {
    // Field names and JSON types down every object and array; free-form objects (an alert's details) are the rule's own.
    const mismatches = (sent: any, example: any, at: string): string[] => {
      if (at.endsWith('details')) return [];
      if (Array.isArray(sent) && Array.isArray(example)) return sent.length ? mismatches(sent[0], example[0], `${at}[]`) : [];
      if (sent && example && typeof sent === 'object' && typeof example === 'object') {
        const [ks, ke] = [Object.keys(sent).sort(), Object.keys(example).sort()];
        if (ks.join() !== ke.join()) return [`${at || 'payload'}: sent ${ks.join(',')}, example ${ke.join(',')}`];
        return ks.flatMap((k) => mismatches(sent[k], example[k], at ? `${at}.${k}` : k));
      }
      return sent !== null && example !== null && typeof sent !== typeof example ? [`${at}: ${typeof sent} ≠ ${typeof example}`] : [];
    };
    const rows = await t.prisma.outboxEvent.findMany({ where: { tenantId } });
    expect(rows.length).toBeGreaterThan(10);
    for (const row of rows) expect(mismatches(row.payload, EVENTS[row.type as EventName].example, ''), row.type).toEqual([]);
  });
});

describe('the webhooks section of /openapi.json', () => {
  const t = appWithWorker();

  it('describes a delivery of every event type, whose body schema takes the registry’s example', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(Object.keys(doc.webhooks).sort()).toEqual([...EVENT_NAMES].sort());
    for (const name of EVENT_NAMES) {
      const op = doc.webhooks[name].post;
      expect(op.parameters.map((h: { name: string }) => h.name)).toEqual([
        'X-Webhook-Id',
        'X-Webhook-Event',
        'X-Webhook-Timestamp',
        'X-Webhook-Signature',
        'webhook-id',
        'webhook-timestamp',
        'webhook-signature',
        'X-Webhook-Sequence',
        'X-Webhook-Sequence-Subject',
      ]);
      // Each scheme sends its own three headers, so none of them is required.
      const required = op.parameters.filter((h: { required: boolean }) => h.required).map((h: { name: string }) => h.name);
      expect(required).toEqual(['X-Webhook-Event']);
      const validate = ajv.compile(op.requestBody.content['application/json'].schema);
      expect(validate(EVENTS[name].example), `${name}: ${JSON.stringify(validate.errors)}`).toBe(true);
      expect(validate({}), name).toBe(false);
    }
  });
});
