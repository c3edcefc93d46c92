import { operator } from '../../src/services/audit.ts';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInboundSecretStore } from '../../src/services/integrations.ts';
import { createTestApp, type TestApp, testSecretBox } from '../support/app.ts';
import { tenantWithKey } from '../support/factories.ts';
import * as p from '../support/providers.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const post = (provider: string, tenantId: string, s: { body: string; headers: Record<string, string> }) =>
  t.app.inject({ method: 'POST', url: `/api/v1/webhooks/in/${provider}/${tenantId}`, headers: s.headers, payload: s.body });
const stored = (tenantId: string) => t.prisma.inboxEvent.count({ where: { tenantId } });

async function tenantWith(
  provider: 'stripe' | 'github' | 'slack' | 'discord' | 'intercom' | 'meta_ads',
  secret?: string,
  verifyToken?: string,
) {
  const { tenantId } = await tenantWithKey(t.prisma, 'free');
  const store = createInboundSecretStore(t.prisma, testSecretBox(), { cacheMs: 0 });
  const r = await store.put({ tenantId, provider, secret, verifyToken }, operator(tenantId));
  return { tenantId, secret: r.secret, store };
}

function expectProblem(res: { statusCode: number; json: () => any; headers: Record<string, unknown> }, status: number, code: string) {
  expect(res.statusCode).toBe(status);
  expect(res.headers['content-type']).toMatch(/problem\+json/);
  expect(res.json().code).toBe(code);
}

describe('stripe', () => {
  it('accepts a signed event with 202 and stores it once; a replay answers 200 duplicate', async () => {
    const { tenantId, secret } = await tenantWith('stripe');
    const signed = p.signStripe(secret, p.stripeEvent('customer.created', p.stripeCustomer('cus_A1')));
    const first = await post('stripe', tenantId, signed);
    expect(first.statusCode).toBe(202);
    expect(first.json()).toEqual({ received: true, id: expect.stringMatching(/^[0-9a-f-]{36}$/), duplicate: false });
    const again = await post('stripe', tenantId, signed);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual({ received: true, id: first.json().id, duplicate: true });
    expect(await stored(tenantId)).toBe(1);
  });

  it('accepts when any one of several v1 signatures matches', async () => {
    const { tenantId, secret } = await tenantWith('stripe');
    const signed = p.signStripe(secret, p.stripeEvent('customer.updated', p.stripeCustomer('cus_A2')));
    const [tPart, v1] = signed.headers['stripe-signature'].split(',');
    signed.headers['stripe-signature'] = `${tPart},v1=${'0'.repeat(64)},${v1}`;
    expect((await post('stripe', tenantId, signed)).statusCode).toBe(202);
  });

  const event = () => p.stripeEvent('customer.created', p.stripeCustomer('cus_A3'));
  it.each([
    [
      'a tampered body',
      (secret: string) => {
        const s = p.signStripe(secret, event());
        return { ...s, body: s.body.replace('Initech', 'Initeck') };
      },
    ],
    ['a missing header', (secret: string) => ({ ...p.signStripe(secret, event()), headers: { 'content-type': 'application/json' } })],
    ['another secret', () => p.signStripe('whsec_other', event())],
    ['a timestamp 301 s old', (secret: string) => p.signStripe(secret, event(), p.nowS() - 301)],
    // 302, not 301: a second may tick between signing here and checking in the app.
    ['a timestamp 302 s ahead', (secret: string) => p.signStripe(secret, event(), p.nowS() + 302)],
    [
      'a v0 signature only',
      (secret: string) => {
        const s = p.signStripe(secret, event());
        return { ...s, headers: { ...s.headers, 'stripe-signature': s.headers['stripe-signature'].replace('v1=', 'v0=') } };
      },
    ],
  ])('refuses %s with 401 invalid_signature and stores nothing', async (_name, request) => {
    const { tenantId, secret } = await tenantWith('stripe');
    expectProblem(await post('stripe', tenantId, request(secret)), 401, 'invalid_signature');
    expect(await stored(tenantId)).toBe(0);
  });

  it('accepts a timestamp 298 s old (inside the window, with room for a clock tick)', async () => {
    const { tenantId, secret } = await tenantWith('stripe');
    expect(
      (await post('stripe', tenantId, p.signStripe(secret, p.stripeEvent('customer.created', p.stripeCustomer('cus_A4')), p.nowS() - 298)))
        .statusCode,
    ).toBe(202);
  });
});

describe('addresses and preconditions', () => {
  it('answers 404 for an unknown provider', async () => {
    const { tenantId, secret } = await tenantWith('stripe');
    expectProblem(await post('paypal', tenantId, p.signStripe(secret, { id: 'x' })), 404, 'not_found');
  });

  it('answers 404 for an unknown tenant, and for a tenant id that is not a UUID', async () => {
    const { secret } = await tenantWith('stripe');
    expectProblem(await post('stripe', randomUUID(), p.signStripe(secret, { id: 'x' })), 404, 'not_found');
    expectProblem(await post('stripe', 'acme', p.signStripe(secret, { id: 'x' })), 404, 'not_found');
  });

  it('answers 403 inbound_secret_not_set when the tenant generated no secret for the provider', async () => {
    const { tenantId } = await tenantWith('stripe');
    const res = await post('github', tenantId, p.signGithub('whatever', 'push', p.githubPush('octo')));
    expectProblem(res, 403, 'inbound_secret_not_set');
    expect(await stored(tenantId)).toBe(0);
  });

  it('answers 413 for a body over 1 MiB', async () => {
    const { tenantId, secret } = await tenantWith('stripe');
    const res = await post(
      'stripe',
      tenantId,
      p.signStripe(secret, p.stripeEvent('customer.updated', { id: 'cus_big', pad: 'x'.repeat(1024 * 1024) })),
    );
    expectProblem(res, 413, 'payload_too_large');
    expect(await stored(tenantId)).toBe(0);
  });

  it('lets a client still uploading a 2 MiB body read the 413, over a real connection', async () => {
    const { tenantId, secret } = await tenantWith('stripe');
    const signed = p.signStripe(secret, p.stripeEvent('customer.updated', { id: 'cus_big', pad: 'x'.repeat(2 * 1024 * 1024) }));
    const url = `${await t.app.listen({ host: '127.0.0.1', port: 0 })}/api/v1/webhooks/in/stripe/${tenantId}`;
    for (let i = 0; i < 5; i++) {
      const res = await fetch(url, { method: 'POST', headers: signed.headers, body: signed.body });
      expect(res.status).toBe(413);
      // A closed connection races the upload: the client may see a reset instead of this answer.
      expect(res.headers.get('connection')).not.toBe('close');
      expect((await res.json()).code).toBe('payload_too_large');
    }
    expect(await stored(tenantId)).toBe(0);
  });

  it('answers 415 for a body that is not JSON', async () => {
    const { tenantId, secret } = await tenantWith('stripe');
    const s = p.signStripe(secret, p.stripeEvent('customer.updated', p.stripeCustomer('cus_t')));
    expectProblem(
      await post('stripe', tenantId, { ...s, headers: { ...s.headers, 'content-type': 'text/plain' } }),
      415,
      'unsupported_media_type',
    );
    expect(await stored(tenantId)).toBe(0);
  });

  it('answers 400 for malformed JSON behind a valid signature, and stores nothing', async () => {
    const { tenantId, secret } = await tenantWith('github');
    const body = '{"ref": "refs/heads/main",';
    const s = p.signGithub(secret, 'push', {});
    const sig = `sha256=${(await import('node:crypto')).createHmac('sha256', secret).update(body).digest('hex')}`;
    const res = await post('github', tenantId, { body, headers: { ...s.headers, 'x-hub-signature-256': sig } });
    expectProblem(res, 400, 'validation_failed');
    expect(await stored(tenantId)).toBe(0);
  });

  it('is not limited by the API rate limit and works on the free plan', async () => {
    const { tenantId, secret } = await tenantWith('github');
    for (let i = 0; i < 40; i++) {
      expect((await post('github', tenantId, p.signGithub(secret, 'push', p.githubPush('octo')))).statusCode).toBe(202);
    }
  });
});

describe('other providers', () => {
  it('github: verifies X-Hub-Signature-256, answers ping, dedups on X-GitHub-Delivery', async () => {
    const { tenantId, secret } = await tenantWith('github');
    expect((await post('github', tenantId, p.signGithub(secret, 'ping', { zen: 'hi', hook_id: 1 }))).statusCode).toBe(200);
    const delivery = randomUUID();
    expect((await post('github', tenantId, p.signGithub(secret, 'push', p.githubPush('octo'), delivery))).statusCode).toBe(202);
    expect((await post('github', tenantId, p.signGithub(secret, 'push', p.githubPush('octo'), delivery))).json().duplicate).toBe(true);
    expectProblem(await post('github', tenantId, p.signGithub(`${secret}x`, 'push', p.githubPush('octo'))), 401, 'invalid_signature');
    expect(await stored(tenantId)).toBe(1);
  });

  it('slack: answers url_verification with the challenge, refuses stale or wrong signatures', async () => {
    const { tenantId, secret } = await tenantWith('slack');
    const res = await post('slack', tenantId, p.signSlack(secret, { type: 'url_verification', challenge: 'abc123', token: 't' }));
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ challenge: 'abc123' });
    expectProblem(
      await post('slack', tenantId, p.signSlack(secret, p.slackMessage('T1', 'C1', 'hi'), p.nowS() - 400)),
      401,
      'invalid_signature',
    );
    expectProblem(await post('slack', tenantId, p.signSlack('wrong', p.slackMessage('T1', 'C1', 'hi'))), 401, 'invalid_signature');
    expect((await post('slack', tenantId, p.signSlack(secret, p.slackMessage('T1', 'C1', 'hi')))).statusCode).toBe(202);
    expect(await stored(tenantId)).toBe(1);
  });

  it('discord: verifies Ed25519 with the application public key and answers PING with {"type":1}', async () => {
    const keys = p.discordKeys();
    const { tenantId } = await tenantWith('discord', keys.publicHex);
    const ping = await post(
      'discord',
      tenantId,
      p.signDiscord(keys.privateKey, { id: '1', type: 1, application_id: '2', token: 'x', version: 1 }),
    );
    expect(ping.statusCode).toBe(200);
    expect(ping.json()).toEqual({ type: 1 });
    expectProblem(
      await post('discord', tenantId, p.signDiscord(p.discordKeys().privateKey, { id: '1', type: 1 })),
      401,
      'invalid_signature',
    );
    expect((await post('discord', tenantId, p.signDiscord(keys.privateKey, p.discordMessage('G1', 'hello')))).statusCode).toBe(202);
  });

  it('discord: refuses a secret that is not a public key', async () => {
    const { tenantId } = await tenantWithKey(t.prisma);
    const store = createInboundSecretStore(t.prisma, testSecretBox(), { cacheMs: 0 });
    await expect(store.put({ tenantId, provider: 'discord', secret: 'not-a-key' }, operator(tenantId))).rejects.toMatchObject({ code: 'validation_failed' });
    await expect(store.put({ tenantId, provider: 'discord' }, operator(tenantId))).rejects.toMatchObject({ code: 'validation_failed' });
  });

  it('intercom: verifies X-Hub-Signature sha1 and answers ping', async () => {
    const { tenantId, secret } = await tenantWith('intercom');
    expect(
      (await post('intercom', tenantId, p.signIntercom(secret, { type: 'notification_event', id: 'n1', topic: 'ping', data: {} })))
        .statusCode,
    ).toBe(200);
    expectProblem(
      await post('intercom', tenantId, p.signIntercom('nope', p.intercomConversation('conversation.user.created', 'a@b.example'))),
      401,
      'invalid_signature',
    );
    expect(await stored(tenantId)).toBe(0);
  });

  it('meta_ads: echoes hub.challenge only for the tenant’s verify token, and verifies X-Hub-Signature-256', async () => {
    const { tenantId, secret } = await tenantWith('meta_ads', undefined, 'my-verify-token');
    const ok = await t.app.inject({
      method: 'GET',
      url: `/api/v1/webhooks/in/meta_ads/${tenantId}?hub.mode=subscribe&hub.verify_token=my-verify-token&hub.challenge=987`,
    });
    expect(ok.statusCode).toBe(200);
    expect(ok.body).toBe('987');
    const wrong = await t.app.inject({
      method: 'GET',
      url: `/api/v1/webhooks/in/meta_ads/${tenantId}?hub.mode=subscribe&hub.verify_token=nope&hub.challenge=987`,
    });
    expect(wrong.statusCode).toBe(403);
    const repeated = await t.app.inject({
      method: 'GET',
      url: `/api/v1/webhooks/in/meta_ads/${tenantId}?hub.mode=subscribe&hub.verify_token=my-verify-token&hub.verify_token=my-verify-token&hub.challenge=987`,
    });
    expect(repeated.statusCode).toBe(403);
    expect((await post('meta_ads', tenantId, p.signMeta(secret, p.metaLead('PAGE1', 'L1')))).statusCode).toBe(202);
    expectProblem(await post('meta_ads', tenantId, p.signMeta('x', p.metaLead('PAGE1', 'L2'))), 401, 'invalid_signature');
  });
});

describe('secret rotation', () => {
  it('keeps the previous secret verifying for 24 hours after a rotation, then only the new one', async () => {
    const { tenantId, secret: old, store } = await tenantWith('github');
    const { secret: fresh, rotated } = await store.put({ tenantId, provider: 'github' }, operator(tenantId));
    expect(rotated).toBe(true);
    expect(fresh).not.toBe(old);
    expect((await post('github', tenantId, p.signGithub(old, 'push', p.githubPush('o')))).statusCode).toBe(202);
    expect((await post('github', tenantId, p.signGithub(fresh, 'push', p.githubPush('o')))).statusCode).toBe(202);
    await t.prisma.inboundSecret.update({
      where: { tenantId_provider: { tenantId, provider: 'github' } },
      data: { previousExpiresAt: new Date(Date.now() - 1000) },
    });
    expectProblem(await post('github', tenantId, p.signGithub(old, 'push', p.githubPush('o'))), 401, 'invalid_signature');
  });

  it('stores secrets encrypted, never in clear', async () => {
    const { tenantId, secret } = await tenantWith('intercom', 'intercom-clear-secret-123');
    const row = await t.prisma.inboundSecret.findFirstOrThrow({ where: { tenantId } });
    expect(JSON.stringify(row)).not.toContain(secret);
    expect(row.secret).toMatch(/^v1\./);
  });
});
