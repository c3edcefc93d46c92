import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operator } from '../../src/services/audit.ts';
import { createInboundSecretStore } from '../../src/services/integrations.ts';
import { createTestApp, testSecretBox, type TestApp } from '../support/app.ts';
import { launchBrowser, screenshot, watch } from '../support/browser.ts';
import { tenantWithKey, userWithSession } from '../support/factories.ts';
import * as p from '../support/providers.ts';

// The dashboard in Debian's Chromium against one process that runs API and worker without Redis (as `npm
// start` does): a Stripe delivery, signed with Stripe's own library, changes a customer's row and health page
// while they are on screen, without a reload.
let t: TestApp;
let worker: { close(): Promise<void> };
let browser: Browser;
let base: string;

beforeAll(async () => {
  t = await createTestApp();
  worker = t.startWorker();
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await worker?.close();
  await t?.close();
});

describe('the dashboard, live', () => {
  it('changes a customer’s row and health page without a reload when a signed Stripe webhook changes its health', async () => {
    const { tenantId } = await tenantWithKey(t.prisma);
    const { email, password } = await userWithSession(t.prisma, t.sessions, tenantId, 'viewer');
    const { secret } = await createInboundSecretStore(t.prisma, testSecretBox(), { cacheMs: 0 }).put(
      { tenantId, provider: 'stripe' },
      operator(tenantId),
    );
    const customer = await t.prisma.customer.create({
      data: { tenantId, name: 'Livewire Ltd', identities: { create: { tenantId, provider: 'stripe', externalId: 'cus_live' } } },
    });

    const problems: string[] = [];
    // Two signed-in tabs (a session lives in its tab): the Customers screen, and the customer's page.
    const open = async (path: string) => {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      context.setDefaultTimeout(30_000);
      const tab = await context.newPage();
      watch(tab, base).forEach((x) => problems.push(x));
      await tab.goto(`${base}/app/`);
      await tab.getByLabel('Email').fill(email);
      await tab.getByLabel('Password').fill(password);
      await tab.getByRole('button', { name: 'Sign in' }).click();
      await tab.getByRole('heading', { name: 'Customers', level: 1 }).waitFor();
      if (path) await tab.getByRole('link', { name: 'Livewire Ltd' }).click();
      return { context, tab };
    };
    const { context: tableContext, tab: table } = await open('');
    const row = table.locator(`tr[data-customer-id="${customer.id}"]`);
    await row.waitFor();
    const before = await row.locator('td').first().textContent();
    const { context: pageContext, tab: page } = await open('customer');
    await page.getByRole('heading', { name: 'Livewire Ltd', level: 1 }).waitFor();
    const healthBefore = await page.locator('main').textContent();
    // A reload would drop this mark.
    for (const tab of [table, page]) await tab.evaluate(() => Object.assign(window, { notReloaded: true }));

    const signed = p.stripeSdkSigned(
      secret,
      JSON.stringify(p.stripeEvent('invoice.paid', p.stripeInvoice('in_live', 'cus_live', 4900, { status: 'paid', amount_paid: 4900 }))),
    );
    const res = await fetch(`${base}/api/v1/webhooks/in/stripe/${tenantId}`, {
      method: 'POST',
      headers: signed.headers,
      body: signed.body,
    });
    expect(res.status).toBe(202);

    await expect.poll(() => row.locator('td').first().textContent(), { timeout: 20_000 }).not.toBe(before);
    await expect.poll(() => page.locator('main').textContent(), { timeout: 20_000 }).not.toBe(healthBefore);
    for (const tab of [table, page]) expect(await tab.evaluate(() => (window as { notReloaded?: boolean }).notReloaded)).toBe(true);
    await screenshot(table, 'live-customers-row-changed');
    await screenshot(page, 'live-customer-page-changed');
    await tableContext.close();
    await pageContext.close();
    expect(problems).toEqual([]);
  });
});
