import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.ts';
import { launchBrowser, screenshot, watch } from '../support/browser.ts';
import { scoredCustomer, tenantWithKey, userWithSession } from '../support/factories.ts';

// The interactive reference at /docs as a user meets it: Swagger UI in Debian's Chromium, authorised and
// sending live requests to the service.
let t: TestApp;
let browser: Browser;
let base: string;
let apiKey: string;
let sessionToken: string;

beforeAll(async () => {
  t = await createTestApp();
  const k = await tenantWithKey(t.prisma);
  apiKey = k.apiKey;
  sessionToken = (await userWithSession(t.prisma, t.sessions, k.tenantId, 'admin')).token;
  await scoredCustomer(t.prisma, k.tenantId, { usage: 50, engagement: 50, support: 50, billing: 50, growth: 50 });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

/** Fills one scheme's form in the Authorize dialog and authorises it. */
async function authorise(page: Page, scheme: 'bearerAuth' | 'apiKeyAuth', value: string) {
  const form = page.locator('.auth-container').filter({ hasText: scheme });
  await form.locator('input').fill(value);
  await form.getByRole('button', { name: 'Apply credentials' }).click();
}

/** Runs "Try it out" on GET /api/v1/customers and returns the status the page shows, with what was sent. */
async function listCustomers(page: Page) {
  const op = page.locator('#operations-Customers-listCustomers');
  await op.locator('.opblock-summary').click();
  const tryIt = op.getByRole('button', { name: 'Try it out' });
  if (await tryIt.isVisible()) await tryIt.click();
  const answered = page.waitForResponse((r) => r.url().startsWith(`${base}/api/v1/customers`));
  await op.getByRole('button', { name: 'Execute' }).click();
  const response = await answered;
  const request = response.request();
  const status = await op.locator('.live-responses-table tbody .response-col_status').first().textContent();
  return { status: status?.trim(), headers: await request.allHeaders() };
}

describe('Swagger UI at /docs in a browser', () => {
  it('sends one credential when both schemes are authorised, and the live request succeeds', async () => {
    const context = await browser.newContext();
    context.setDefaultTimeout(10_000);
    const page = await context.newPage();
    const problems = watch(page, base);
    await page.goto(`${base}/docs/`);
    await page.locator('#operations-Customers-listCustomers').waitFor();
    await page.getByRole('button', { name: 'Authorize' }).first().click();
    // Two different credentials: sent together, the service would refuse them as conflicting.
    await authorise(page, 'bearerAuth', sessionToken);
    await authorise(page, 'apiKeyAuth', apiKey);
    await page.locator('.close-modal').click();
    const { status, headers } = await listCustomers(page);
    expect(status).toBe('200');
    expect(headers.authorization).toBe(`Bearer ${sessionToken}`);
    expect(headers['x-api-key']).toBeUndefined();
    await screenshot(page, 'docs-both-schemes');
    await context.close();
    expect(problems).toEqual([]);
  });

  it('sends the API key as X-API-Key when it is the only credential', async () => {
    const context = await browser.newContext();
    context.setDefaultTimeout(10_000);
    const page = await context.newPage();
    await page.goto(`${base}/docs/`);
    await page.locator('#operations-Customers-listCustomers').waitFor();
    await page.getByRole('button', { name: 'Authorize' }).first().click();
    await authorise(page, 'apiKeyAuth', apiKey);
    await page.locator('.close-modal').click();
    const { status, headers } = await listCustomers(page);
    expect(status).toBe('200');
    expect(headers['x-api-key']).toBe(apiKey);
    expect(headers.authorization).toBeUndefined();
    await context.close();
  });
});
