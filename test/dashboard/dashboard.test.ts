import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhookSignature } from '../../src/outbox/sender/verify.ts';
import { seedDemoTenant } from '../../src/seed/demo.ts';
import { checkFreshness } from '../../src/scoring/freshness.ts';
import { createTestApp, testSecretBox, type TestApp } from '../support/app.ts';
import { launchBrowser, screenshot, watch } from '../support/browser.ts';
import { inactivityLabelledCustomers, scoredCustomer, tenantHearingStripe, tenantWithKey, userWithSession } from '../support/factories.ts';
import * as p from '../support/providers.ts';
import { startReceiver, testCertificate, type Hit } from '../support/receiver.ts';

// The dashboard as a user meets it: the bundle `npm start` serves, in Debian's Chromium, against the
// real service on 127.0.0.1 with a demo workspace scored over 30 days.
const tls = testCertificate();
const PASSWORD = 'dashboard-test-password';
let t: TestApp;
let worker: { close(): Promise<void> };
let browser: Browser;
let base: string;
let tenantId: string;
let endpointSecret = '';
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  t = await createTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' }, ca: tls.cert });
  worker = t.startWorker();
  tenantId = (await seedDemoTenant(t.prisma, t.pool, PASSWORD)).tenantId;
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  receiver = await startReceiver(tls, {
    accept: (hit: Hit) =>
      verifyWebhookSignature({ secret: endpointSecret, headers: hit.headers, rawBody: hit.raw }) || verifiesStandard(hit),
  });
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  receiver?.close();
  await worker?.close();
  await t?.close();
});

/** A delivery signed in the Standard Webhooks scheme, checked with that specification's library. */
function verifiesStandard(hit: Hit): boolean {
  try {
    new StandardWebhook(endpointSecret).verify(hit.raw.toString('utf8'), hit.headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
}

interface Session {
  context: BrowserContext;
  page: Page;
  problems: string[];
}

async function signIn(email = 'demo@example.com', password = PASSWORD, viewport = { width: 1280, height: 900 }): Promise<Session> {
  const context = await browser.newContext({ viewport, permissions: ['clipboard-read', 'clipboard-write'] });
  // Well inside the test's own timeout, so a missing element fails with its locator named.
  context.setDefaultTimeout(10_000);
  const page = await context.newPage();
  const problems = watch(page, base);
  await page.goto(`${base}/app/`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Customers', level: 1 }).waitFor();
  return { context, page, problems };
}

const EDIT_ENDPOINT = 'Edit URL, description, events, filters, signature headers and rate limit';

async function done(s: Session) {
  await s.context.close();
  expect(s.problems).toEqual([]);
}

describe('the dashboard', () => {
  it('signs in and shows the portfolio with customers worst score first', async () => {
    const s = await signIn();
    const rows = s.page.locator('table tbody tr');
    await rows.first().waitFor();
    expect(await rows.count()).toBe(12);
    const scores = (await s.page.locator('table tbody tr td:nth-child(2) strong').allTextContents()).map(Number);
    expect(scores).toEqual([...scores].sort((a, b) => a - b));
    await expect(s.page.getByRole('region', { name: 'Portfolio' }).textContent()).resolves.toContain('Customers12');
    await screenshot(s.page, 'customers');
    await done(s);
  });

  it('filters customers by churn risk and search, keeping the filter in the address', async () => {
    const s = await signIn();
    await s.page.getByLabel('Churn risk').selectOption('critical');
    await s.page.waitForURL(/risk=critical/);
    // Soylent (stopped, failing payments), Wayne (silent for 24 days), Hooli (five unanswered, angry conversations), Tyrell (usage down to a quarter, seats cut, past due).
    await expect.poll(() => s.page.locator('table tbody tr').count()).toBe(4);
    await s.page.getByLabel('Churn risk').selectOption('');
    await s.page.getByLabel('Search').fill('globex');
    await s.page.waitForURL(/q=globex/);
    await expect.poll(() => s.page.locator('table tbody th a').allTextContents()).toEqual(['Globex']);
    await s.page.getByLabel('Search').fill('no such customer');
    await s.page.getByText('No customers match these filters').waitFor();
    await done(s);
  });

  it('creates an API key whose secret, shown once, reads /api/v1/customers', async () => {
    const s = await signIn();
    await s.page.getByRole('link', { name: 'API keys' }).click();
    await s.page
      .getByText('API access needs the Growth or Scale plan', { exact: false })
      .or(s.page.getByText('Scale', { exact: true }))
      .first()
      .waitFor();
    await s.page.getByRole('button', { name: 'Create API key' }).click();
    await s.page.getByLabel('Name').fill('Warehouse sync');
    await s.page.getByRole('button', { name: 'Create key' }).click();
    const secret = await s.page.getByTestId('secret-value').inputValue();
    expect(secret).toMatch(/^sk_[A-Za-z0-9]{40}$/);
    await expect(s.page.getByText('It is shown only this once', { exact: false }).count()).resolves.toBe(1);
    await s.page.getByRole('button', { name: 'Copy' }).click();
    await s.page.getByText('Copied to the clipboard.').waitFor();
    await screenshot(s.page, 'api-keys-secret-once');

    const res = await fetch(`${base}/api/v1/customers?limit=100`, { headers: { authorization: `Bearer ${secret}` } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { data: unknown[] }).data).toHaveLength(12);

    await s.page.getByRole('button', { name: 'I have stored it' }).click();
    expect(await s.page.content()).not.toContain(secret);
    // The list shows the key by its prefix, and the use just made.
    await s.page.reload();
    const row = s.page.getByRole('row', { name: /Warehouse sync/ });
    await expect(row.textContent()).resolves.toContain(secret.slice(0, 8));
    await expect.poll(async () => (await s.page.reload(), await row.textContent()), { timeout: 10_000 }).not.toContain('never');
    await screenshot(s.page, 'api-keys');
    await done(s);
  });

  it('revokes an API key from the list, after which the key is refused', async () => {
    const s = await signIn();
    await s.page.goto(`${base}/app/settings/api-keys`);
    await s.page.getByRole('button', { name: 'Create API key' }).click();
    await s.page.getByLabel('Name').fill('Short-lived');
    await s.page.getByRole('button', { name: 'Create key' }).click();
    const secret = await s.page.getByTestId('secret-value').inputValue();
    await s.page.getByRole('button', { name: 'I have stored it' }).click();
    await s.page
      .getByRole('row', { name: /Short-lived/ })
      .getByRole('button', { name: 'Revoke' })
      .click();
    await s.page.getByRole('dialog').getByRole('button', { name: 'Revoke key' }).click();
    await s.page
      .getByRole('row', { name: /Short-lived/ })
      .getByText('Revoked')
      .waitFor();
    const res = await fetch(`${base}/api/v1/customers`, { headers: { 'x-api-key': secret } });
    expect(res.status).toBe(401);
    await done(s);
  });

  it('creates a webhook endpoint from the live event picker and its Test passes a receiver that checks the signature', async () => {
    const s = await signIn();
    await s.page.getByRole('link', { name: 'Webhooks' }).click();
    await s.page.getByRole('button', { name: 'Add endpoint' }).click();
    const dialog = s.page.getByRole('dialog');
    await dialog.getByLabel('Endpoint URL (HTTPS)').fill(receiver.url);
    // The picker lists what the API says can be sent, not a list baked into the page; it fills in
    // once that answer arrives, so wait for it before reading the list.
    await dialog.getByRole('checkbox', { name: /churn_prediction\.updated/ }).waitFor();
    const offered = await dialog.locator('input[name="events"]').evaluateAll((els) => els.map((e) => (e as HTMLInputElement).value));
    expect(offered).toEqual(expect.arrayContaining(['alert.created', 'customer.health_changed', 'churn_prediction.updated']));
    await dialog.getByRole('checkbox', { name: /alert\.created/ }).check();
    await dialog.getByRole('checkbox', { name: /customer\.health_changed/ }).check();
    await dialog.getByRole('button', { name: 'Add endpoint' }).click();
    endpointSecret = await s.page.getByTestId('secret-value').inputValue();
    expect(endpointSecret.length).toBeGreaterThan(20);
    await screenshot(s.page, 'webhooks-secret-once');
    await s.page.getByRole('link', { name: 'open the endpoint' }).click();

    await s.page.getByRole('combobox', { name: /^Event/ }).selectOption('customer.health_changed');
    await s.page.getByRole('button', { name: 'Send test' }).click();
    const result = s.page.getByTestId('test-result');
    await expect(result.textContent()).resolves.toMatch(/Delivered.*customer\.health_changed.*HTTP 200/);
    const hit = receiver.hits.at(-1)!;
    expect(hit.headers['x-webhook-event']).toBe('customer.health_changed');
    expect(verifyWebhookSignature({ secret: endpointSecret, headers: hit.headers, rawBody: hit.raw })).toBe(true);
    await expect(s.page.getByTestId('delivery-log').locator('summary').first().textContent()).resolves.toMatch(
      /Succeeded.*customer\.health_changed.*test.*1 attempt.*HTTP 200/,
    );
    await screenshot(s.page, 'webhook-endpoint');
    await done(s);
  });

  it('shows a Test the receiver refuses as failed, and Resend from the log tries again', async () => {
    const s = await signIn();
    const endpoint = await t.prisma.webhookEndpoint.findFirstOrThrow({ where: { tenantId } });
    await s.page.goto(`${base}/app/settings/webhooks/${endpoint.id}`);
    receiver.set('fail');
    await s.page.getByRole('button', { name: 'Send test' }).click();
    await expect(s.page.getByTestId('test-result').textContent()).resolves.toMatch(/Failed.*HTTP 500/);
    receiver.set('ok');
    const before = receiver.hits.length;
    // The log has reloaded with the refused Test on top before it is resent.
    const log = s.page.getByTestId('delivery-log');
    await expect.poll(() => log.locator('summary').first().textContent()).toMatch(/Failed.*HTTP 500/);
    await log.locator('summary').first().click();
    await s.page.getByRole('button', { name: 'Resend', exact: true }).click();
    await s.page.getByText('Queued for another attempt').waitFor();
    // The worker makes the attempt: one more request reaches the receiver, and the log shows it succeeded.
    await expect.poll(() => receiver.hits.length, { timeout: 10_000 }).toBe(before + 1);
    // The attempt is recorded just after the receiver answers: refresh until the log shows it.
    const refreshed = async () => {
      await s.page.getByRole('button', { name: 'Refresh' }).click();
      return log.locator('summary').first().textContent();
    };
    await expect.poll(refreshed, { timeout: 10_000 }).toMatch(/Succeeded.*2 attempts.*HTTP 200/);
    await done(s);
  });

  it('switches an endpoint to Standard Webhooks on its page, shows its public key, and its Test verifies with that library', async () => {
    const s = await signIn();
    const endpoint = await t.prisma.webhookEndpoint.findFirstOrThrow({ where: { tenantId } });
    await s.page.goto(`${base}/app/settings/webhooks/${endpoint.id}`);
    await s.page.getByText(EDIT_ENDPOINT).click();
    await s.page.getByRole('combobox', { name: 'Signature headers' }).selectOption('standard');
    await s.page.getByRole('button', { name: 'Save changes' }).click();
    await s.page.getByText('Saved.').waitFor();
    const { publicKey } = await t.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } });
    await s.page.getByText(publicKey!).waitFor();
    await s.page.getByRole('button', { name: 'Send test' }).click();
    await expect(s.page.getByTestId('test-result').textContent()).resolves.toMatch(/Delivered.*HTTP 200/);
    const hit = receiver.hits.at(-1)!;
    expect(hit.headers['x-webhook-signature']).toBeUndefined();
    expect(verifiesStandard(hit)).toBe(true);
    await done(s);
  });

  it('adds a payload filter with the condition builder, says it on the endpoint, and shows why a filter is refused', async () => {
    const s = await signIn();
    const endpoint = await t.prisma.webhookEndpoint.findFirstOrThrow({ where: { tenantId } });
    await t.prisma.webhookEndpoint.update({
      where: { id: endpoint.id },
      data: { events: [...new Set([...endpoint.events, 'alert.created'])] },
    });
    const stored = async () => (await t.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } })).filters;
    await s.page.goto(`${base}/app/settings/webhooks/${endpoint.id}`);
    await s.page.getByText(EDIT_ENDPOINT).click();
    const save = () => s.page.getByRole('button', { name: 'Save changes' }).click();
    await s.page.getByRole('combobox', { name: 'Filter event type' }).selectOption('alert.created');
    await s.page.getByRole('combobox', { name: 'Filter field' }).selectOption('severity');
    await s.page.getByRole('combobox', { name: 'Filter operator' }).selectOption('in');
    await s.page.getByRole('combobox', { name: 'Filter value' }).fill('high, critical');
    await s.page.getByRole('button', { name: 'Add condition' }).click();
    await save();
    await expect.poll(() => s.page.getByTestId('filters').textContent()).toBe('Sends alert.created when severity is one of high, critical');
    expect(await stored()).toEqual({ 'alert.created': { severity: { in: ['high', 'critical'] } } });
    await screenshot(s.page, 'webhook-endpoint-filters');

    const json = s.page.getByRole('textbox', { name: /Filters \(JSON/ });
    await json.fill('{ "alert.created": { "severity": { "in": ["urgent"] } } }');
    await save();
    await expect(s.page.getByRole('alert').first().textContent()).resolves.toMatch(/filters\.alert\.created\.severity\.in/);
    expect(await stored()).toEqual({ 'alert.created': { severity: { in: ['high', 'critical'] } } });
    await json.fill('');
    await save();
    await expect.poll(() => s.page.getByTestId('filters').textContent()).toMatch(/^No filters/);
    expect(await stored()).toBeNull();
    await t.prisma.webhookEndpoint.update({ where: { id: endpoint.id }, data: { events: endpoint.events } });
    await done(s);
  });

  it('sets an endpoint’s rate limit on its page, and shows why a limit out of bounds is refused', async () => {
    const s = await signIn();
    const endpoint = await t.prisma.webhookEndpoint.findFirstOrThrow({ where: { tenantId } });
    const stored = async () => (await t.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } })).rateLimitPerSecond;
    await s.page.goto(`${base}/app/settings/webhooks/${endpoint.id}`);
    await s.page.getByText(EDIT_ENDPOINT).click();
    const field = s.page.getByRole('textbox', { name: /Rate limit/ });
    const save = () => s.page.getByRole('button', { name: 'Save changes' }).click();
    await field.fill('5000');
    await save();
    await expect(s.page.getByRole('alert').first().textContent()).resolves.toMatch(/rate_limit_per_second.*1000/);
    expect(await stored()).toBeNull();
    await field.fill('2.5');
    await save();
    await s.page.getByText('At most 2.5 deliveries a second').waitFor();
    expect(await stored()).toBe(2.5);
    await screenshot(s.page, 'webhook-endpoint-rate-limit');
    await field.fill('');
    await save();
    await s.page.getByText('No rate limit').waitFor();
    expect(await stored()).toBeNull();
    await done(s);
  });

  it('shows an endpoint’s open circuit breaker with its next probe, its delivery figures as a chart, and Resume now closes it', async () => {
    const s = await signIn();
    const endpoint = await t.prisma.webhookEndpoint.findFirstOrThrow({ where: { tenantId } });
    // As the deliverer leaves it when most recent attempts failed: open, its first probe in five minutes.
    await t.pool.query(
      `UPDATE webhook_endpoint_circuits SET state = 'open', opened_at = now(), openings = 1, next_probe_at = now() + interval '5 minutes',
         window_started_at = now(), window_attempts = 12, window_failures = 11 WHERE endpoint_id = $1`,
      [endpoint.id],
    );
    // And its figures: 20 attempts delivered in about 10 ms half an hour ago, 11 of 12 failed in about 1 s just now.
    const histogram = (bucket: number, n: number) => Array.from({ length: 88 }, (_, i) => (i === bucket ? n : 0));
    await t.pool.query(
      `INSERT INTO webhook_endpoint_stats (endpoint_id, minute, attempts, failures, latency)
       VALUES ($1, date_trunc('minute', now() - interval '30 minutes'), 20, 0, $2), ($1, date_trunc('minute', now() - interval '1 minute'), 12, 11, $3)`,
      [endpoint.id, histogram(21, 20), histogram(61, 12)],
    );
    await s.page.goto(`${base}/app/settings/webhooks/${endpoint.id}`);
    const badge = s.page.getByTestId('circuit');
    await expect(badge.textContent()).resolves.toMatch(/Circuit: Paused · next probe in 5 minutes/);
    await expect(s.page.getByTestId('circuit-notice').textContent()).resolves.toMatch(
      /Deliveries are paused: 92% of the 12 most recent attempts failed/,
    );
    // The figures: every point of the day, in a chart that says what it shows.
    const chart = s.page.getByTestId('delivery-chart');
    await expect(chart.getAttribute('aria-label')).resolves.toMatch(/over 24 points/);
    await expect(chart.getAttribute('aria-label')).resolves.toMatch(/^32 attempts over 24 points, 65\.6% delivered/);
    await s.page.getByRole('combobox', { name: 'Window' }).selectOption('hour');
    await expect.poll(() => chart.getAttribute('aria-label')).toMatch(/^32 attempts over 12 points/);
    await expect(s.page.getByTestId('success-rate').textContent()).resolves.toBe('65.6%');
    await screenshot(s.page, 'webhook-endpoint-circuit');
    await s.page.getByRole('button', { name: 'Resume now' }).click();
    await expect.poll(() => badge.textContent()).toBe('Circuit: Sending');
    expect((await t.pool.query(`SELECT state FROM webhook_endpoint_circuits WHERE endpoint_id = $1`, [endpoint.id])).rows[0].state).toBe(
      'closed',
    );
    // Recorded as the user's change: the breaker closed by hand.
    const audit = await t.pool.query(
      `SELECT changes FROM audit_events WHERE target_id = $1 AND action = 'webhook_endpoint.updated' ORDER BY occurred_at DESC LIMIT 1`,
      [endpoint.id],
    );
    expect(audit.rows[0].changes.circuit).toEqual({ from: 'open', to: 'closed' });
    await expect(s.page.getByTestId('circuit-notice').count()).resolves.toBe(0);
    await done(s);
  });

  it('generates a Stripe signing secret on its card, and a signed event then shows as the last one', async () => {
    const s = await signIn();
    await s.page.getByRole('link', { name: 'Integrations' }).click();
    const card = s.page.locator('article[data-provider="stripe"]');
    await card.getByText('none received yet').waitFor();
    await card.getByRole('button', { name: 'Generate secret' }).click();
    const secret = await card.getByTestId('secret-value').inputValue();
    expect(secret).toMatch(/^whsec_/);
    await screenshot(s.page, 'integrations-secret-once');
    await card.getByRole('button', { name: 'I have stored it' }).click();
    const url = await card.getByTestId('inbound-url').inputValue();
    expect(url).toBe(`${base}/api/v1/webhooks/in/stripe/${tenantId}`);

    const signed = p.signStripe(secret, p.stripeEvent('customer.created', p.stripeCustomer('cus_dash', 'ops@newco.example', 'NewCo')));
    const res = await fetch(url, { method: 'POST', headers: signed.headers, body: signed.body });
    expect(res.status).toBe(202);
    await expect
      .poll(async () => (await t.prisma.inboxEvent.findFirst({ where: { tenantId, provider: 'stripe' } }))?.status, { timeout: 10_000 })
      .toBe('processed');
    await s.page.getByRole('button', { name: 'Refresh' }).click();
    await expect.poll(() => card.getByTestId('last-event').textContent()).toMatch(/customer\.created.*Processed/);
    await expect(card.textContent()).resolves.toContain('Connected');
    await screenshot(s.page, 'integrations');
    await done(s);
  });

  it('opens a customer page with the dimension chart, the score history chart, churn factors and events', async () => {
    const s = await signIn();
    await s.page.getByRole('link', { name: 'Soylent Foods' }).click();
    await s.page.getByRole('heading', { name: 'Soylent Foods', level: 1 }).waitFor();
    const dimensions = s.page.getByTestId('dimension-chart');
    await dimensions.locator('.recharts-bar-rectangle').first().waitFor();
    await expect(dimensions.getAttribute('aria-label')).resolves.toMatch(/Usage \d+/);
    const history = s.page.getByTestId('history-chart');
    await history.locator('.recharts-line path').first().waitFor();
    expect(await history.locator('.recharts-line').count()).toBe(1);
    await s.page.getByRole('checkbox', { name: 'Billing' }).check();
    await expect.poll(() => history.locator('.recharts-line').count()).toBe(2);
    await s.page.getByRole('heading', { name: 'Risk factors' }).waitFor();
    expect(await s.page.locator('.factors li').count()).toBeGreaterThan(0);
    expect(await s.page.locator('.interventions li').count()).toBeGreaterThan(0);
    await s.page.getByRole('heading', { name: 'Recent events' }).waitFor();
    expect(await s.page.locator('.events li').count()).toBeGreaterThan(0);
    await screenshot(s.page, 'customer');
    await done(s);
  });

  it('opens a day of the score history on the inputs that moved it, each with its values and its shares', async () => {
    const s = await signIn();
    await s.page.getByRole('link', { name: 'Soylent Foods' }).click();
    await s.page.getByRole('heading', { name: 'Soylent Foods', level: 1 }).waitFor();
    const days = s.page.getByRole('navigation', { name: 'Days of the score history' });
    // The newest day that moved: the demo's history was computed day by day.
    await days
      .getByRole('button')
      .filter({ hasText: /\([+−]\d+\)/ })
      .first()
      .click();
    const drivers = s.page.getByTestId('day-drivers');
    await drivers.getByRole('heading', { name: /What moved the score on/ }).waitFor();
    const rows = drivers.locator('table.drivers tbody tr');
    await rows.first().waitFor();
    expect(await rows.count()).toBeGreaterThan(0);
    // Each row: the input, its values before and after, and its shares of the score and the probability.
    expect(await rows.first().locator('td').nth(0).innerText()).toMatch(/→/);
    await drivers.scrollIntoViewIfNeeded();
    await screenshot(s.page, 'customer-drivers');
    await done(s);
  });

  it('acknowledges, snoozes and resolves alerts from the inbox, filtered by severity', async () => {
    const s = await signIn();
    await s.page.getByRole('link', { name: 'Alerts' }).click();
    await s.page.locator('.alert').first().waitFor();
    await s.page.getByLabel('Severity').selectOption('critical');
    await s.page.waitForURL(/severity=critical/);
    await expect.poll(async () => (await s.page.locator('.alert .badge').allTextContents()).every((x) => x === 'Critical')).toBe(true);
    await s.page.getByLabel('Severity').selectOption('');
    await screenshot(s.page, 'alerts');

    const first = s.page.locator('.alert').first();
    const id = (await first.getAttribute('data-alert-id'))!;
    const card = s.page.locator(`[data-alert-id="${id}"]`);
    await first.getByRole('button', { name: 'Acknowledge' }).click();
    await s.page.getByText('Alert acknowledged.').waitFor();
    const alert = await t.prisma.alert.findUniqueOrThrow({ where: { id } });
    expect(alert.status).toBe('acknowledged');

    await s.page.getByLabel('Status').selectOption('acknowledged');
    await card.getByLabel('Snooze for').selectOption({ label: '1 day' });
    await s.page.getByText('Alert snoozed.').waitFor();
    const snoozed = await t.prisma.alert.findUniqueOrThrow({ where: { id: alert.id } });
    expect(snoozed.status).toBe('snoozed');
    expect(snoozed.snoozedUntil!.getTime()).toBeGreaterThan(Date.now() + 23 * 3600_000);

    await s.page.getByLabel('Status').selectOption('snoozed');
    await card.getByRole('button', { name: 'Resolve' }).click();
    await s.page.getByText('Alert resolved.').waitFor();
    expect((await t.prisma.alert.findUniqueOrThrow({ where: { id: alert.id } })).status).toBe('resolved');
    await done(s);
  });

  it('trains a churn model on the outcomes, shows it beside the default, and uses it only when asked', async () => {
    // A workspace of its own, whose outcomes follow inactivity: a model worth using.
    const w = await tenantWithKey(t.prisma, 'scale');
    await inactivityLabelledCustomers(t.prisma, w.tenantId);
    const owner = await userWithSession(t.prisma, t.sessions, w.tenantId, 'owner');
    const s = await signIn(owner.email, owner.password);
    await s.page.getByRole('link', { name: 'Scoring' }).click();
    const card = s.page.getByRole('region', { name: 'Churn model' });
    await card.getByText('In use: default-v2').waitFor();
    await card.getByRole('button', { name: 'Train on my outcomes' }).click();
    await card.getByText('trained-v1 is ready: compare, then switch').waitFor();
    // The comparison is on screen and nothing has switched yet.
    const rows = card.getByRole('table').getByRole('row');
    expect(await rows.filter({ hasText: 'trained-v1' }).count()).toBe(1);
    expect(await rows.filter({ hasText: 'default-v2' }).count()).toBe(1);
    expect((await t.prisma.tenant.findUniqueOrThrow({ where: { id: w.tenantId } })).activeChurnModelId).toBeNull();
    await screenshot(s.page, 'churn-model-trained');
    await card.getByRole('button', { name: 'Use trained-v1' }).click();
    await card.getByText('In use: trained-v1').waitFor();
    expect(
      await t.prisma.auditEvent.count({ where: { tenantId: w.tenantId, action: 'churn_model.activated', targetId: 'trained-v1' } }),
    ).toBe(1);
    await done(s);
  });

  it('follows a training that outlives its request, on opening the page too, until it ends', async () => {
    const w = await tenantWithKey(t.prisma, 'scale');
    // A training another process runs, as the page finds it when opened.
    const { rows } = await t.pool.query<{ id: string }>(
      `INSERT INTO churn_trainings (id, tenant_id, activate) VALUES (gen_random_uuid(), $1, false) RETURNING id`,
      [w.tenantId],
    );
    const owner = await userWithSession(t.prisma, t.sessions, w.tenantId, 'owner');
    const s = await signIn(owner.email, owner.password);
    await s.page.getByRole('link', { name: 'Scoring' }).click();
    const card = s.page.getByRole('region', { name: 'Churn model' });
    await card.getByText('Training on many labelled customers takes a few minutes', { exact: false }).waitFor();
    expect(await card.getByRole('button', { name: 'Training…' }).isDisabled()).toBe(true);
    await t.pool.query(
      `UPDATE churn_trainings SET status = 'failed', finished_at = now(), error_code = 'service_unavailable',
         error_message = 'The training was interrupted: the process running it stopped. Start it again.' WHERE id = $1`,
      [rows[0]!.id],
    );
    // Read again every few seconds: the failure comes on screen, and training may be started again.
    await card.getByText('Training failed: The training was interrupted', { exact: false }).waitFor({ timeout: 15_000 });
    expect(await card.getByRole('button', { name: 'Train on my outcomes' }).isDisabled()).toBe(false);
    await done(s);
  });

  it('sets health weights that must add up to 100 %', async () => {
    const s = await signIn();
    await s.page.getByRole('link', { name: 'Scoring' }).click();
    await s.page.getByLabel('Usage (%)').fill('50');
    await s.page.getByText('the weights must add up to 100%', { exact: false }).waitFor();
    expect(await s.page.getByRole('button', { name: 'Save weights' }).isDisabled()).toBe(true);
    await s.page.getByLabel('Growth (%)').fill('0');
    await s.page.getByLabel('Usage (%)').fill('40');
    await s.page.getByRole('button', { name: 'Save weights' }).click();
    await s.page.getByText('Saved. Every customer is being rescored', { exact: false }).waitFor();
    const tenant = await t.prisma.tenant.findUniqueOrThrow({ where: { id: tenantId } });
    expect(tenant.scoringWeights).toMatchObject({ usage: 0.4, growth: 0 });
    await screenshot(s.page, 'scoring');
    await s.page.getByRole('button', { name: 'Reset to defaults' }).click();
    await s.page.getByText('Back to the default weights', { exact: false }).waitFor();
    await done(s);
  });

  it('lets a viewer read every screen but offers no action that changes anything', async () => {
    const viewer = await userWithSession(t.prisma, t.sessions, tenantId, 'viewer', 'viewer-password-123');
    const s = await signIn(viewer.email, viewer.password);
    await s.page.goto(`${base}/app/alerts`);
    await s.page.locator('.alert').first().waitFor();
    expect(await s.page.getByRole('button', { name: 'Acknowledge' }).count()).toBe(0);
    await s.page.goto(`${base}/app/settings/api-keys`);
    await s.page.getByText('Only owners and admins manage API keys').waitFor();
    expect(await s.page.getByRole('button', { name: 'Create API key' }).count()).toBe(0);
    await s.page.goto(`${base}/app/settings/integrations`);
    await s.page.locator('article[data-provider="github"]').waitFor();
    expect(await s.page.getByRole('button', { name: /Generate secret|Rotate secret/ }).count()).toBe(0);
    await s.page.goto(`${base}/app/settings/webhooks`);
    await s.page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
    expect(await s.page.getByRole('button', { name: 'Add endpoint' }).count()).toBe(0);
    await done(s);
  });

  it('sends a user whose session is no longer accepted back to sign in, saying why', async () => {
    const s = await signIn();
    await s.page.evaluate(() => {
      const raw = JSON.parse(sessionStorage.getItem('chs.session')!);
      sessionStorage.setItem('chs.session', JSON.stringify({ ...raw, token: `${raw.token}x` }));
    });
    await s.page.reload();
    await s.page.getByText('Your session has ended', { exact: false }).waitFor();
    await s.page.getByRole('button', { name: 'Sign in' }).waitFor();
    await s.context.close();
  });

  it('signs out on the server: the token it held is refused afterwards, wherever it was copied', async () => {
    const s = await signIn();
    const token = await s.page.evaluate(() => JSON.parse(sessionStorage.getItem('chs.session')!).token as string);
    const customers = () => t.app.inject({ method: 'GET', url: '/api/v1/customers', headers: { authorization: `Bearer ${token}` } });
    expect((await customers()).statusCode).toBe(200);
    await s.page.getByRole('button', { name: 'Sign out' }).click();
    await s.page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(await s.page.evaluate(() => sessionStorage.getItem('chs.session'))).toBeNull();
    expect((await customers()).statusCode).toBe(401);
    await done(s);
  });

  it('refuses a wrong password with a readable message', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${base}/app/login`);
    await page.getByLabel('Email').fill('demo@example.com');
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).toMatch(/password/i);
    await context.close();
  });

  it('fits a phone screen: navigation and tables stay within the width', async () => {
    const s = await signIn(undefined, undefined, { width: 390, height: 844 });
    await s.page.locator('table tbody tr').first().waitFor();
    const overflow = await s.page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await screenshot(s.page, 'customers-phone');
    await s.page.goto(`${base}/app/alerts`);
    await s.page.locator('.alert').first().waitFor();
    expect(await s.page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
    await screenshot(s.page, 'alerts-phone');
    await done(s);
  });

  it('is served with a policy that allows nothing from elsewhere, and deep links load the app', async () => {
    const res = await fetch(`${base}/app/customers/00000000-0000-0000-0000-000000000000`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    const html = await res.text();
    expect(html).not.toMatch(/https?:\/\//);
    expect((await fetch(`${base}/app/assets/missing.js`)).status).toBe(404);

    const s = await signIn();
    await s.page.goto(`${base}/app/customers/00000000-0000-0000-0000-000000000000`);
    await s.page.getByText('It may have been deleted', { exact: false }).waitFor();
    await s.context.close();
  });

  it('shows a silent provider on its card, and on a customer’s health its stale dimensions and the lowered confidence', async () => {
    // Stripe every 6 hours for five days, then a day without anything.
    const w = await tenantHearingStripe(t.prisma, testSecretBox(), {
      count: 20,
      everyHours: 6,
      last: new Date(Date.now() - 24 * 3_600_000),
    });
    const viewer = await userWithSession(t.prisma, t.sessions, w.tenantId, 'viewer', PASSWORD);
    const { customer } = await scoredCustomer(t.prisma, w.tenantId, {
      usage: 80,
      engagement: null,
      support: null,
      billing: 90,
      growth: null,
    });
    // The worker checks every minute too; whichever pass takes the row flags it.
    await expect
      .poll(
        async () => {
          await checkFreshness(t.pool);
          return (await t.prisma.integrationFreshness.findFirst({ where: { tenantId: w.tenantId, provider: 'stripe' } }))?.silentSince;
        },
        { timeout: 10_000 },
      )
      .toBeInstanceOf(Date);

    const s = await signIn(viewer.email, PASSWORD);
    // A notice on every screen, before anyone opens Integrations.
    await expect(s.page.getByTestId('silent-integrations').textContent()).resolves.toMatch(/Stripe has been silent/);
    await s.page.getByRole('link', { name: 'Integrations' }).click();
    const card = s.page.locator('article[data-provider="stripe"]');
    await expect.poll(() => card.getByTestId('freshness').textContent()).toMatch(/Silent.*usual longest wait is 6 hours/);
    await screenshot(s.page, 'integrations-silent');
    await s.page.getByRole('link', { name: 'Customers' }).click();
    await s.page.getByRole('link', { name: customer.name }).click();
    await s.page.getByRole('heading', { name: customer.name, level: 1 }).waitFor();
    await s.page.getByTestId('stale-billing').waitFor();
    expect(await s.page.getByTestId('stale-usage').count()).toBe(0);
    await expect(s.page.getByTestId('health-confidence').textContent()).resolves.toMatch(
      /Confidence 55%: Billing may be out of date: no events from Stripe/,
    );
    await screenshot(s.page, 'customer-stale');
    await done(s);
  });
});

describe('the dashboard’s data lifecycle screens', () => {
  /** Waits for the download a click starts, and reads the file. */
  async function downloaded(page: Page, click: () => Promise<void>): Promise<{ name: string; text: string }> {
    const [download] = await Promise.all([page.waitForEvent('download'), click()]);
    const path = await download.path();
    const { readFileSync } = await import('node:fs');
    return { name: download.suggestedFilename(), text: readFileSync(path, 'utf8') };
  }

  it('exports a customer’s data, then erases the customer once its name is typed', async () => {
    const s = await signIn();
    await s.page.getByRole('link', { name: 'Globex' }).click();
    await s.page.getByRole('heading', { name: 'Globex', level: 1 }).waitFor();
    const file = await downloaded(s.page, () => s.page.getByRole('button', { name: 'Export data' }).click());
    expect(file.name).toMatch(/^customer-[0-9a-f-]{36}-\d{4}-\d{2}-\d{2}\.ndjson$/);
    const records = file.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(records[0]).toMatchObject({ record: 'customer', data: { name: 'Globex' } });
    expect(new Set(records.map((r) => r.record))).toContain('signal');

    const before = await t.prisma.customer.count({ where: { tenantId } });
    await s.page.getByRole('button', { name: 'Erase…' }).click();
    const dialog = s.page.getByRole('dialog', { name: 'Erase “Globex”' });
    const erase = dialog.getByRole('button', { name: 'Erase for good' });
    expect(await erase.isDisabled()).toBe(true);
    await dialog.getByLabel('Type the customer’s name to confirm').fill('Globex');
    await screenshot(s.page, 'customer-erase-confirm');
    await erase.click();
    await s.page.getByText('Globex was erased, with every record about it.').waitFor();
    await expect.poll(() => s.page.locator('table tbody tr').count()).toBe(before - 1);
    expect(await t.prisma.customer.count({ where: { tenantId, name: 'Globex' } })).toBe(0);
    await done(s);
  });

  it('downloads a dataset as CSV and changes retention from the Data settings', async () => {
    const s = await signIn();
    await s.page.getByRole('link', { name: 'Data' }).click();
    await s.page.getByRole('heading', { name: 'Data', level: 1 }).waitFor();
    const form = s.page.getByRole('form', { name: 'Export data' });
    await form.getByLabel('Data').selectOption('customers');
    await form.getByLabel('Format').selectOption('csv');
    const file = await downloaded(s.page, () => form.getByRole('button', { name: 'Download' }).click());
    expect(file.name).toMatch(/^customers-\d{4}-\d{2}-\d{2}\.csv$/);
    const { parse } = await import('csv-parse/sync');
    const rows = parse(file.text, { columns: true }) as Record<string, string>[];
    expect(rows).toHaveLength(await t.prisma.customer.count({ where: { tenantId } }));
    expect(Object.keys(rows[0]!)).toEqual(expect.arrayContaining(['id', 'name', 'health_score', 'churn_risk_level']));

    const retention = s.page.getByRole('form', { name: 'Retention' });
    await retention.locator('input[name="inboundBodies"]').fill('14');
    await retention.getByRole('button', { name: 'Save retention' }).click();
    await s.page.getByText('Saved.', { exact: false }).waitFor();
    await screenshot(s.page, 'data-settings');
    const [changed] = await t.prisma.auditEvent.findMany({ where: { tenantId, action: 'retention.changed' } });
    expect(changed!.changes).toEqual({ inbound_body_retention_days: { from: 30, to: 14 } });
    await done(s);
  });

  it('reads the audit log a page at a time and filters it by action', async () => {
    // Enough entries for a second page, whatever ran before.
    await t.pool.query(
      `INSERT INTO audit_events (id, tenant_id, occurred_at, actor_type, action) SELECT gen_random_uuid(), $1, now() - g * interval '1 hour', 'operator', 'user.created' FROM generate_series(1, 30) g`,
      [tenantId],
    );
    const s = await signIn();
    await s.page.getByRole('link', { name: 'Audit log' }).click();
    const table = s.page.getByRole('table', { name: 'Audit log' });
    await table.locator('tbody tr').first().waitFor();
    expect(await table.locator('tbody tr').count()).toBe(25);
    await s.page.getByRole('button', { name: 'Next →' }).click();
    await s.page.getByText(/^26–/).waitFor();
    await s.page.getByLabel('Action').selectOption('customer.erased');
    await s.page.waitForURL(/action=customer.erased/);
    await expect.poll(() => table.locator('tbody tr').count()).toBe(1);
    expect(await table.locator('tbody tr').first().textContent()).toContain('demo@example.com');
    await s.page.getByLabel('Action').selectOption('data.exported');
    await expect.poll(() => table.locator('tbody tr').count()).toBe(2);
    await screenshot(s.page, 'audit-log');
    await done(s);
  });

  it('schedules the workspace’s deletion, warns on every screen, and cancels it', async () => {
    const s = await signIn();
    await s.page.goto(`${base}/app/settings/data`);
    await s.page.getByRole('button', { name: 'Delete workspace…' }).click();
    const dialog = s.page.getByRole('dialog');
    const name = (await t.prisma.tenant.findUniqueOrThrow({ where: { id: tenantId } })).name;
    await dialog.getByLabel('Type the workspace’s name to confirm').fill(name);
    await dialog.getByRole('button', { name: 'Schedule the deletion' }).click();
    await s.page.getByText('The workspace is scheduled for deletion on', { exact: false }).waitFor();
    await s.page.goto(`${base}/app/customers`);
    await s.page.getByRole('alert').filter({ hasText: 'This workspace will be deleted on' }).waitFor();
    await screenshot(s.page, 'workspace-deletion-banner');
    await s.page.getByRole('link', { name: 'Cancel the deletion' }).click();
    await s.page.getByRole('button', { name: 'Cancel the deletion' }).click();
    await s.page.getByRole('button', { name: 'Delete workspace…' }).waitFor();
    expect((await t.prisma.tenant.findUniqueOrThrow({ where: { id: tenantId } })).deletionDueAt).toBeNull();
    await done(s);
  });
});
