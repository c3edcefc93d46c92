import { verifyAsync } from '@noble/ed25519';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { describe, expect, it } from 'vitest';
import { inTransaction } from '../../src/db/sql.ts';
import { enqueueEvents } from '../../src/outbox/events/enqueue.ts';
import { relayOutbox } from '../../src/outbox/events/relay.ts';
import { verifyWebhookSignature } from '../../src/outbox/sender/verify.ts';
import type { TestApp } from '../support/app.ts';
import { apiAs, type Receiver, withOutboundApp } from '../support/outbound.ts';
import { exampleEvent, tenantWithKey } from '../support/factories.ts';
import { type Hit } from '../support/receiver.ts';

// Deliveries in the Standard Webhooks scheme, checked only with verifiers written elsewhere: the
// specification's own library, Svix's, and an Ed25519 implementation that is not Node's.

withOutboundApp((app, receiver) => {
  t = app;
  rx = receiver;
});
let t: TestApp;
let rx: Receiver;

const api = (key: string) => apiAs(() => t, key);

interface Endpoint {
  id: string;
  secret: string;
  signature_scheme: string;
  public_key: string | null;
  previous_public_key: string | null;
}

async function endpointFor(body: object = { signature_scheme: 'standard' }) {
  const k = await tenantWithKey(t.prisma);
  const res = await api(k.apiKey).post('/api/v1/webhook-endpoints', { url: rx.url, events: ['invoice.created'], ...body });
  expect(res.statusCode, res.body).toBe(201);
  return { ...k, endpoint: res.json() as Endpoint };
}

async function emit(tenantId: string) {
  await inTransaction(t.pool, (sql) => enqueueEvents(sql, [exampleEvent(tenantId, 'invoice.created')]));
  await relayOutbox(t.pool, t.queue);
  const d = await t.prisma.webhookDelivery.findFirstOrThrow({ where: { tenantId, isTest: false }, orderBy: { createdAt: 'desc' } });
  return d.id;
}

const hitsFor = (id: string) => rx.hits.filter((h) => h.headers['webhook-id'] === id || h.headers['x-webhook-id'] === id);
const headersOf = (hit: Hit) => hit.headers as Record<string, string>;
const verifiesWithStandardWebhooks = (secret: string, hit: Hit) => {
  try {
    new StandardWebhook(secret).verify(hit.raw.toString('utf8'), headersOf(hit));
    return true;
  } catch {
    return false;
  }
};
const verifiesWithSvix = (secret: string, hit: Hit) => {
  try {
    new SvixWebhook(secret).verify(hit.raw.toString('utf8'), headersOf(hit));
    return true;
  } catch {
    return false;
  }
};
/** Each `v1a,` signature of the header, checked against the `whpk_` key with @noble/ed25519. */
const ed25519Verdicts = async (publicKey: string, hit: Hit) => {
  const signed = new TextEncoder().encode(`${hit.headers['webhook-id']}.${hit.headers['webhook-timestamp']}.${hit.raw.toString('utf8')}`);
  const key = Buffer.from(publicKey.replace(/^whpk_/, ''), 'base64');
  const sigs = String(hit.headers['webhook-signature'])
    .split(' ')
    .filter((s) => s.startsWith('v1a,'))
    .map((s) => Buffer.from(s.slice(4), 'base64'));
  return Promise.all(sigs.map((sig) => verifyAsync(sig, signed, key)));
};

describe('choosing the signature scheme', () => {
  it('signs with v0 unless the endpoint opts in, and shows every endpoint its scheme and Ed25519 public key', async () => {
    const { apiKey, endpoint } = await endpointFor({});
    expect(endpoint).toMatchObject({ signature_scheme: 'v0', previous_public_key: null });
    expect(Buffer.from(endpoint.public_key!.replace(/^whpk_/, ''), 'base64')).toHaveLength(32);
    const read = (await api(apiKey).get(`/api/v1/webhook-endpoints/${endpoint.id}`)).json();
    expect(read).toMatchObject({ signature_scheme: 'v0', public_key: endpoint.public_key });
  });

  it('issues a secret in the specification’s whsec_ base64 form, of 32 random bytes', async () => {
    const { endpoint } = await endpointFor();
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(endpoint.secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
  });

  it('refuses an unknown scheme with 400 naming the field, and changes nothing', async () => {
    const { apiKey, endpoint } = await endpointFor({});
    const bad = await api(apiKey).patch(`/api/v1/webhook-endpoints/${endpoint.id}`, { signature_scheme: 'v2' });
    expect(bad.statusCode).toBe(400);
    expect(bad.headers['content-type']).toContain('application/problem+json');
    expect(bad.body).toContain('signature_scheme');
    expect((await api(apiKey).get(`/api/v1/webhook-endpoints/${endpoint.id}`)).json().signature_scheme).toBe('v0');
    const graphql = await t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'x-api-key': apiKey },
      payload: {
        query: `mutation($id: UUID!) { updateWebhookEndpoint(id: $id, input: { signatureScheme: "v2" }) { signatureScheme } }`,
        variables: { id: endpoint.id },
      },
    });
    expect(graphql.json().errors[0].extensions.code).toBe('validation_failed');
    expect((await t.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } })).signatureScheme).toBe('v0');
  });

  it('switches over GraphQL, which reads back the scheme and the public key', async () => {
    const { apiKey, endpoint } = await endpointFor({});
    const res = await t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'x-api-key': apiKey },
      payload: {
        query: `mutation($id: UUID!) { updateWebhookEndpoint(id: $id, input: { signatureScheme: "standard" }) { signatureScheme publicKey } }`,
        variables: { id: endpoint.id },
      },
    });
    expect(res.json().data.updateWebhookEndpoint).toEqual({ signatureScheme: 'standard', publicKey: endpoint.public_key });
  });

  it('gives an endpoint that has no key pair one when it switches to standard', async () => {
    const { apiKey, endpoint } = await endpointFor({});
    await t.prisma.webhookEndpoint.update({ where: { id: endpoint.id }, data: { signingKey: null, publicKey: null } });
    expect((await api(apiKey).get(`/api/v1/webhook-endpoints/${endpoint.id}`)).json().public_key).toBeNull();
    const switched = (await api(apiKey).patch(`/api/v1/webhook-endpoints/${endpoint.id}`, { signature_scheme: 'standard' })).json();
    expect(switched.public_key).toMatch(/^whpk_/);
    rx.set('ok');
    const test = (await api(apiKey).post(`/api/v1/webhook-endpoints/${endpoint.id}/test`, {})).json();
    const [hit] = hitsFor(test.delivery_id);
    expect(await ed25519Verdicts(switched.public_key, hit!)).toEqual([true]);
  });
});

describe('Standard Webhooks deliveries', () => {
  it('sends webhook-id, webhook-timestamp and webhook-signature, which both libraries verify, and no v0 signature', async () => {
    rx.set('ok');
    const { tenantId, endpoint } = await endpointFor();
    const id = await emit(tenantId);
    expect((await t.outbound.deliverer.attempt(id)).status).toBe('succeeded');
    const [hit] = hitsFor(id);
    expect(hit!.headers).toMatchObject({ 'webhook-id': id, 'x-webhook-event': 'invoice.created' });
    expect(Math.abs(Number(hit!.headers['webhook-timestamp']) - hit!.at / 1000)).toBeLessThan(5);
    expect(hit!.headers['x-webhook-signature']).toBeUndefined();
    expect(hit!.headers['x-webhook-id']).toBeUndefined();
    expect(String(hit!.headers['webhook-signature'])).toMatch(/^v1,[A-Za-z0-9+/]{43}= v1a,[A-Za-z0-9+/]{86}==$/);
    expect([verifiesWithStandardWebhooks(endpoint.secret, hit!), verifiesWithSvix(endpoint.secret, hit!)]).toEqual([true, true]);
  });

  it('is refused by both libraries when a byte of the body changes or the secret is another', async () => {
    rx.set('ok');
    const { tenantId, endpoint } = await endpointFor();
    const id = await emit(tenantId);
    await t.outbound.deliverer.attempt(id);
    const [hit] = hitsFor(id);
    const tampered = { ...hit!, raw: Buffer.concat([hit!.raw, Buffer.from(' ')]) };
    const other = `whsec_${Buffer.alloc(32, 1).toString('base64')}`;
    expect([
      verifiesWithStandardWebhooks(endpoint.secret, tampered),
      verifiesWithSvix(endpoint.secret, tampered),
      verifiesWithStandardWebhooks(other, hit!),
      verifiesWithSvix(other, hit!),
    ]).toEqual([false, false, false, false]);
  });

  it('carries a v1a Ed25519 signature that verifies with the public key the API shows, and not with another key', async () => {
    rx.set('ok');
    const { tenantId, endpoint } = await endpointFor();
    const other = await endpointFor();
    const id = await emit(tenantId);
    await t.outbound.deliverer.attempt(id);
    const [hit] = hitsFor(id);
    expect(await ed25519Verdicts(endpoint.public_key!, hit!)).toEqual([true]);
    expect(await ed25519Verdicts(other.endpoint.public_key!, hit!)).toEqual([false]);
  });

  it('signs a Test delivery in the endpoint’s scheme', async () => {
    rx.set('ok');
    const { apiKey, endpoint } = await endpointFor();
    const test = (await api(apiKey).post(`/api/v1/webhook-endpoints/${endpoint.id}/test`, {})).json();
    expect(test).toMatchObject({ success: true });
    const [hit] = hitsFor(test.delivery_id);
    expect(hit!.headers['webhook-id']).toBe(test.delivery_id);
    expect([verifiesWithStandardWebhooks(endpoint.secret, hit!), verifiesWithSvix(endpoint.secret, hit!)]).toEqual([true, true]);
    expect(await ed25519Verdicts(endpoint.public_key!, hit!)).toEqual([true]);
  });

  it('signs a resent and a replayed delivery in the endpoint’s scheme', async () => {
    const { tenantId, apiKey, endpoint } = await endpointFor();
    const [resent, replayed] = [await emit(tenantId), await emit(tenantId)];
    await t.prisma.webhookDelivery.updateMany({
      where: { id: { in: [resent, replayed] } },
      data: { status: 'failed', nextAttemptAt: null },
    });
    rx.set('ok');
    expect((await api(apiKey).post(`/api/v1/webhook-deliveries/${resent}/resend`)).statusCode).toBe(202);
    await expect.poll(async () => (await t.prisma.webhookDelivery.findUniqueOrThrow({ where: { id: resent } })).status).toBe('pending');
    const replay = await api(apiKey).post(`/api/v1/webhook-endpoints/${endpoint.id}/replay`, {
      since: new Date(Date.now() - 60_000).toISOString(),
    });
    expect(replay.json()).toEqual({ replayed: 1 });
    for (const id of [resent, replayed]) {
      await t.outbound.deliverer.attempt(id);
      const [hit] = hitsFor(id);
      expect([verifiesWithStandardWebhooks(endpoint.secret, hit!), verifiesWithSvix(endpoint.secret, hit!)]).toEqual([true, true]);
      expect(await ed25519Verdicts(endpoint.public_key!, hit!)).toEqual([true]);
    }
  });

  it('signs with both secrets and both key pairs during a rotation, the new ones first', async () => {
    rx.set('ok');
    const { apiKey, endpoint } = await endpointFor();
    const rotated = (await api(apiKey).post(`/api/v1/webhook-endpoints/${endpoint.id}/rotate-secret`)).json() as Endpoint;
    expect(rotated.secret).not.toBe(endpoint.secret);
    expect(rotated.public_key).not.toBe(endpoint.public_key);
    expect(rotated.previous_public_key).toBe(endpoint.public_key);
    const test = (await api(apiKey).post(`/api/v1/webhook-endpoints/${endpoint.id}/test`, {})).json();
    const [hit] = hitsFor(test.delivery_id);
    const sigs = String(hit!.headers['webhook-signature']).split(' ');
    expect(sigs.map((s) => s.split(',')[0])).toEqual(['v1', 'v1a', 'v1', 'v1a']);
    const only = (i: number): Hit => ({ ...hit!, headers: { ...hit!.headers, 'webhook-signature': sigs[i] } });
    // The first v1 is the new secret's, the second the old one's; a third secret matches neither.
    expect([verifiesWithStandardWebhooks(rotated.secret, only(0)), verifiesWithSvix(endpoint.secret, only(2))]).toEqual([true, true]);
    expect([
      verifiesWithStandardWebhooks(rotated.secret, hit!),
      verifiesWithStandardWebhooks(endpoint.secret, hit!),
      verifiesWithSvix(rotated.secret, hit!),
      verifiesWithSvix(endpoint.secret, hit!),
      verifiesWithSvix(`whsec_${Buffer.alloc(32, 2).toString('base64')}`, hit!),
    ]).toEqual([true, true, true, true, false]);
    expect(await ed25519Verdicts(rotated.public_key!, hit!)).toEqual([true, false]);
    expect(await ed25519Verdicts(endpoint.public_key!, hit!)).toEqual([false, true]);
  });

  it('signs with v0 again once the endpoint switches back', async () => {
    rx.set('ok');
    const { apiKey, endpoint } = await endpointFor();
    expect((await api(apiKey).patch(`/api/v1/webhook-endpoints/${endpoint.id}`, { signature_scheme: 'v0' })).statusCode).toBe(200);
    const test = (await api(apiKey).post(`/api/v1/webhook-endpoints/${endpoint.id}/test`, {})).json();
    const [hit] = hitsFor(test.delivery_id);
    expect(hit!.headers['webhook-signature']).toBeUndefined();
    expect(verifyWebhookSignature({ secret: endpoint.secret, headers: hit!.headers, rawBody: hit!.raw })).toBe(true);
  });
});
