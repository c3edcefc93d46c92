import { operator } from '../../src/services/audit.ts';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInboundSecretStore } from '../../src/services/integrations.ts';
import { createTestApp, type TestApp, testSecretBox } from '../support/app.ts';
import { tenantWithKey } from '../support/factories.ts';
import * as p from '../support/providers.ts';
import { startReceiver, testCertificate, verifiesWithStripe } from '../support/receiver.ts';
import { freePort, ROOT } from '../support/spawn.ts';

const tls = testCertificate();
let t: TestApp;
let worker: { close(): Promise<void> };
let rx: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  t = await createTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' }, ca: tls.cert });
  worker = t.startWorker();
  rx = await startReceiver(tls);
});
afterAll(async () => {
  rx.close();
  await worker.close();
  await t.close();
});

describe('inbound to outbound', () => {
  it('a signed Stripe invoice.created becomes a signed invoice.created delivery with the invoice payload of docs/decisions.md §5', async () => {
    const { tenantId, apiKey } = await tenantWithKey(t.prisma);
    const { secret } = await createInboundSecretStore(t.prisma, testSecretBox(), { cacheMs: 0 }).put(
      { tenantId, provider: 'stripe' },
      operator(tenantId),
    );
    const ep = (
      await t.app.inject({
        method: 'POST',
        url: '/api/v1/webhook-endpoints',
        headers: { 'x-api-key': apiKey },
        payload: { url: rx.url, events: ['invoice.created', 'subscription.trial_extended'] },
      })
    ).json();
    const signed = p.signStripe(secret, p.stripeEvent('invoice.created', p.stripeInvoice('in_e2e', 'cus_e2e', 12345)));
    expect(
      (await t.app.inject({ method: 'POST', url: `/api/v1/webhooks/in/stripe/${tenantId}`, headers: signed.headers, payload: signed.body }))
        .statusCode,
    ).toBe(202);
    await expect.poll(() => rx.hits.find((h) => h.json?.tenant_id === tenantId), { timeout: 10_000 }).toBeTruthy();
    const hit = rx.hits.find((h) => h.json?.tenant_id === tenantId)!;
    expect(hit.headers['x-webhook-event']).toBe('invoice.created');
    expect(hit.json).toMatchObject({
      tenant_id: tenantId,
      status: 'draft',
      total: '123.45',
      currency: 'usd',
      invoice_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    const { verifyWebhookSignature } = await import('../../src/outbox/sender/verify.ts');
    expect(verifyWebhookSignature({ secret: ep.secret, headers: hit.headers, rawBody: hit.raw })).toBe(true);
    expect(verifiesWithStripe(ep.secret, hit)).toBe(true);
    expect(verifiesWithStripe(ep.secret, { ...hit, raw: Buffer.from(hit.raw.toString().replace('123.45', '123.46')) })).toBe(false);
  });

  it('a trial_end moved later becomes subscription.trial_extended, exactly once', async () => {
    const { tenantId, apiKey } = await tenantWithKey(t.prisma);
    const { secret } = await createInboundSecretStore(t.prisma, testSecretBox(), { cacheMs: 0 }).put(
      { tenantId, provider: 'stripe' },
      operator(tenantId),
    );
    await t.app.inject({
      method: 'POST',
      url: '/api/v1/webhook-endpoints',
      headers: { 'x-api-key': apiKey },
      payload: { url: rx.url, events: ['subscription.trial_extended'] },
    });
    const t1 = p.nowS() + 14 * 86400;
    const post = (end: number, created: number) => {
      const s = p.signStripe(
        secret,
        p.stripeEvent('customer.subscription.updated', p.stripeSubscription('sub_e2e', 'cus_e2e', end), created),
      );
      return t.app.inject({ method: 'POST', url: `/api/v1/webhooks/in/stripe/${tenantId}`, headers: s.headers, payload: s.body });
    };
    await post(t1, p.nowS() - 10);
    await new Promise((r) => setTimeout(r, 300));
    await post(t1 + 7 * 86400, p.nowS() - 5);
    await post(t1 + 7 * 86400, p.nowS());
    await expect.poll(() => rx.hits.filter((h) => h.json?.tenant_id === tenantId).length, { timeout: 10_000 }).toBe(1);
    await new Promise((r) => setTimeout(r, 1500));
    expect(rx.hits.filter((h) => h.json?.tenant_id === tenantId)).toHaveLength(1);
  });
});

describe('the example receiver in docs', () => {
  it('accepts our signed deliveries and refuses unsigned ones', async () => {
    const { tenantId, apiKey } = await tenantWithKey(t.prisma);
    const port = await freePort();
    const secret = 'whsec_example_receiver_secret';
    const child = spawn(process.execPath, [join(ROOT, 'examples', 'webhook-receiver.mjs')], {
      env: {
        ...process.env,
        SIGNING_SECRET: secret,
        PORT: String(port),
        TLS_KEY: join(ROOT, 'test-output', 'tls', 'key.pem'),
        TLS_CERT: join(ROOT, 'test-output', 'tls', 'cert.pem'),
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout!.on('data', (c) => (out += c));
    try {
      await expect.poll(() => out, { timeout: 10_000 }).toContain('listening');
      const ep = (
        await t.app.inject({
          method: 'POST',
          url: '/api/v1/webhook-endpoints',
          headers: { 'x-api-key': apiKey },
          payload: { url: `https://127.0.0.1:${port}/`, events: ['invoice.paid'] },
        })
      ).json();
      // The example was started with another secret: it must refuse.
      expect((await t.services.webhookDeliveries.sendTest(operator(tenantId), ep.id)).statusCode).toBe(401);
      await t.prisma.webhookEndpoint.update({ where: { id: ep.id }, data: { secret: testSecretBox().seal(secret) } });
      const ok = await t.services.webhookDeliveries.sendTest(operator(tenantId), ep.id);
      expect(ok.statusCode).toBe(204);
      await expect.poll(() => out, { timeout: 5000 }).toContain('"event":"invoice.paid"');
    } finally {
      child.kill();
    }
  });
});
