// Prism, Stoplight's validating proxy, stands between clients and the service with `--errors`: it refuses a
// request that does not fit the OpenAPI description and turns any answer that does not fit it into its own
// error. Real provider deliveries and a request to every REST operation go through it; each must come back
// as the service answered it, so a tenant can put such a proxy in front of us and lose nothing.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID, sign as signEd25519 } from 'node:crypto';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sign as signGithub } from '@octokit/webhooks-methods';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROVIDERS } from '../../src/contract/enums.ts';
import { readRecordedRequest, replayable, signatureHeaders } from '../../src/ingest/recorded-request.ts';
import { operator } from '../../src/services/audit.ts';
import { createInboundSecretStore } from '../../src/services/integrations.ts';
import { createTestApp, testSecretBox, type TestApp } from '../support/app.ts';
import { alert, scoredCustomer, tenantWithKey } from '../support/factories.ts';
import { discordKeys, nowS, stripeSdkSigned } from '../support/providers.ts';
import { freePort, ROOT } from '../support/spawn.ts';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'providers');

let t: TestApp;
let spec: Record<string, any>;
let prism: ChildProcess;
let proxy: string;
/** operationId → statuses seen through the proxy. */
const seen = new Map<string, Set<number>>();

beforeAll(async () => {
  t = await createTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const upstream = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
  spec = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  const dir = join(ROOT, 'test-output', 'prism');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'openapi.json');
  writeFileSync(file, JSON.stringify(spec));
  const port = await freePort();
  proxy = `http://127.0.0.1:${port}`;
  prism = spawn(
    join(ROOT, 'node_modules', '.bin', 'prism'),
    ['proxy', file, upstream, '--errors', '--host', '127.0.0.1', '--port', String(port)],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  await new Promise<void>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`the proxy did not start:\n${out}`)), 60_000);
    const onData = (b: Buffer) => {
      out += b.toString();
      if (/Prism is listening/.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    };
    prism.stdout!.on('data', onData);
    prism.stderr!.on('data', onData);
    prism.on('exit', (code) => reject(new Error(`the proxy exited with ${code}:\n${out}`)));
  });
}, 120_000);

afterAll(async () => {
  prism?.kill('SIGTERM');
  await t?.close();
});

interface Answer {
  status: number;
  body: string;
}

/** Sends a request through the proxy; fails the test when the proxy, not the service, answered. */
async function send(operationId: string, method: string, path: string, init: { headers?: Record<string, string>; body?: string } = {}) {
  const res = await fetch(proxy + path, { method, headers: init.headers, body: init.body });
  const answer: Answer = { status: res.status, body: await res.text() };
  expect(answer.body, `${method} ${path}: the proxy found the exchange outside the description`).not.toContain('stoplight.io/prism/errors');
  const statuses = seen.get(operationId) ?? new Set<number>();
  statuses.add(answer.status);
  seen.set(operationId, statuses);
  return answer;
}

const json = (headers: Record<string, string>, body: unknown) => ({
  headers: { ...headers, 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

describe('behind a validating proxy (Prism with --errors)', () => {
  it.each(PROVIDERS)('every recorded %s delivery is forwarded and answered as described', async (provider) => {
    const { tenantId } = await tenantWithKey(t.prisma);
    const keys = provider === 'discord' ? discordKeys() : null;
    const { secret } = await createInboundSecretStore(t.prisma, testSecretBox(), { cacheMs: 0 }).put(
      { tenantId, provider, secret: keys?.publicHex },
      operator(tenantId),
    );
    const files = readdirSync(join(FIXTURES, provider)).filter((f) => f.endsWith('.json'));
    expect(files.length).toBeGreaterThan(1);
    for (const file of files) {
      const recorded = replayable(await readRecordedRequest(join(FIXTURES, provider, file)));
      const { headers } = recorded;
      // Prism parses a JSON body and forwards it re-serialised, so a pretty-printed delivery (Stripe's)
      // would reach us with other bytes than those signed; the test sends what Prism forwards.
      const body = JSON.stringify(JSON.parse(recorded.body));
      const ts = nowS();
      // Signed by each provider's own library where one exists.
      const signature =
        provider === 'stripe'
          ? stripeSdkSigned(secret, body, ts).headers
          : provider === 'github'
            ? { 'x-hub-signature-256': await signGithub(secret, body) }
            : keys
              ? {
                  'x-signature-timestamp': String(ts),
                  'x-signature-ed25519': signEd25519(null, Buffer.from(`${ts}${body}`), keys.privateKey).toString('hex'),
                }
              : signatureHeaders(provider, secret, body, ts);
      const a = await send('receiveInboundWebhook', 'POST', `/api/v1/webhooks/in/${provider}/${tenantId}`, {
        headers: { ...headers, ...signature },
        body,
      });
      expect([200, 202, 204], `${file}: ${a.body}`).toContain(a.status);
    }
    // A delivery whose signature does not match: the service's 401, as described.
    const bad = await send('receiveInboundWebhook', 'POST', `/api/v1/webhooks/in/${provider}/${tenantId}`, json({}, { id: 'x' }));
    expect(bad.status).toBe(401);
  });

  it("answers Meta's subscription check through the proxy, and refuses a wrong verify token as described", async () => {
    const { tenantId } = await tenantWithKey(t.prisma);
    await createInboundSecretStore(t.prisma, testSecretBox(), { cacheMs: 0 }).put(
      { tenantId, provider: 'meta_ads', verifyToken: 'verify-me' },
      operator(tenantId),
    );
    const q = (token: string) => `?hub.mode=subscribe&hub.verify_token=${token}&hub.challenge=1158201444`;
    const ok = await send('verifyMetaWebhook', 'GET', `/api/v1/webhooks/in/meta_ads/${tenantId}${q('verify-me')}`);
    expect(ok).toEqual({ status: 200, body: '1158201444' });
    expect((await send('verifyMetaWebhook', 'GET', `/api/v1/webhooks/in/meta_ads/${tenantId}${q('wrong')}`)).status).toBe(403);
    expect((await send('verifyMetaWebhook', 'GET', `/api/v1/webhooks/in/meta_ads/${crypto.randomUUID()}${q('x')}`)).status).toBe(404);
  });

  it('forwards a request to every REST operation and each answer fits the description', async () => {
    const { tenantId, apiKey } = await tenantWithKey(t.prisma);
    const key = { 'x-api-key': apiKey };
    const { customer } = await scoredCustomer(t.prisma, tenantId, { usage: 40, engagement: 50, support: 60, billing: 70, growth: 80 });
    const a = await alert(t.prisma, tenantId, customer.id);
    const expectStatus = (answer: Answer, status: number) => expect(answer.status, answer.body).toBe(status);

    expectStatus(await send('listCustomers', 'GET', '/api/v1/customers?limit=5', { headers: key }), 200);
    const created = await send('createCustomer', 'POST', '/api/v1/customers', json(key, { name: 'Proxy Co', external_id: 'proxy-1' }));
    expectStatus(created, 201);
    expectStatus(await send('createCustomer', 'POST', '/api/v1/customers', json(key, { name: 'Again', external_id: 'proxy-1' })), 409);
    const createdId = JSON.parse(created.body).id as string;
    const c = `/api/v1/customers/${customer.id}`;
    expectStatus(await send('getCustomer', 'GET', c, { headers: key }), 200);
    expectStatus(await send('getCustomer', 'GET', `/api/v1/customers/${crypto.randomUUID()}`, { headers: key }), 404);
    expectStatus(await send('updateCustomer', 'PATCH', c, json(key, { name: 'Renamed Co' })), 200);
    expectStatus(await send('getCustomerHealth', 'GET', `${c}/health`, { headers: key }), 200);
    expectStatus(await send('getCustomerChurnPrediction', 'GET', `${c}/churn-prediction`, { headers: key }), 200);
    expectStatus(await send('listCustomerHealthHistory', 'GET', `${c}/health/history?limit=5`, { headers: key }), 200);
    expectStatus(
      await send('listCustomerHealthChanges', 'GET', `${c}/health/changes?since=2020-01-01T00:00:00Z&limit=5`, { headers: key }),
      200,
    );
    expectStatus(await send('recordChurnOutcome', 'POST', `${c}/churn-outcome`, json(key, { churned: false })), 201);
    expectStatus(await send('listAlerts', 'GET', '/api/v1/alerts?status=open&severity=high', { headers: key }), 200);
    expectStatus(await send('updateAlert', 'PATCH', `/api/v1/alerts/${a.id}`, json(key, { status: 'acknowledged' })), 200);
    expectStatus(
      await send(
        'recordUsageEvents',
        'POST',
        '/api/v1/events',
        json(key, { events: [{ customer_id: customer.id, event: 'report.exported' }] }),
      ),
      202,
    );
    expectStatus(await send('listWebhookEventTypes', 'GET', '/api/v1/webhook-event-types', { headers: key }), 200);
    const endpoint = await send(
      'createWebhookEndpoint',
      'POST',
      '/api/v1/webhook-endpoints',
      json(key, { url: 'https://127.0.0.1:9/hook', events: ['alert.created', 'invoice.paid'] }),
    );
    expectStatus(endpoint, 201);
    const e = `/api/v1/webhook-endpoints/${JSON.parse(endpoint.body).id}`;
    expectStatus(await send('listWebhookEndpoints', 'GET', '/api/v1/webhook-endpoints', { headers: key }), 200);
    expectStatus(await send('getWebhookEndpoint', 'GET', e, { headers: key }), 200);
    expectStatus(await send('updateWebhookEndpoint', 'PATCH', e, json(key, { description: 'through the proxy' })), 200);
    expectStatus(await send('rotateWebhookEndpointSecret', 'POST', `${e}/rotate-secret`, { headers: key }), 200);
    expectStatus(await send('testWebhookEndpoint', 'POST', `${e}/test`, { headers: key }), 200);
    expectStatus(await send('getWebhookEndpointStats', 'GET', `${e}/stats?window=hour`, { headers: key }), 200);
    const deliveries = await send('listWebhookDeliveries', 'GET', `${e}/deliveries`, { headers: key });
    expectStatus(deliveries, 200);
    const delivery = JSON.parse(deliveries.body).data[0]?.id as string | undefined;
    expect(delivery).toBeTruthy();
    expectStatus(await send('resendWebhookDelivery', 'POST', `/api/v1/webhook-deliveries/${delivery}/resend`, { headers: key }), 202);
    expectStatus(
      await send('replayWebhookDeliveries', 'POST', `${e}/replay`, json(key, { since: new Date(Date.now() - 3_600_000).toISOString() })),
      202,
    );
    // The customer created above was announced: its customer.created is number 1.
    const events = await send('listWebhookEvents', 'GET', `/api/v1/webhook-events?subject=customer:${createdId}&after_sequence=0&limit=5`, {
      headers: key,
    });
    expectStatus(events, 200);
    expect(JSON.parse(events.body).data.map((e: { sequence: number }) => e.sequence)).toEqual([1]);
    expectStatus(await send('deleteWebhookEndpoint', 'DELETE', e, { headers: key }), 204);
    expectStatus(await send('getHealthWeights', 'GET', '/api/v1/health-weights', { headers: key }), 200);
    expectStatus(
      await send(
        'setHealthWeights',
        'PUT',
        '/api/v1/health-weights',
        json(key, { usage: 0.4, engagement: 0.2, support: 0.1, billing: 0.2, growth: 0.1 }),
      ),
      200,
    );
    expectStatus(await send('resetHealthWeights', 'DELETE', '/api/v1/health-weights', { headers: key }), 200);
    expectStatus(await send('getChurnModel', 'GET', '/api/v1/churn-model', { headers: key }), 200);
    expectStatus(await send('trainChurnModel', 'POST', '/api/v1/churn-model/train', { headers: key }), 422);
    expectStatus(await send('getChurnTraining', 'GET', `/api/v1/churn-model/trainings/${randomUUID()}`, { headers: key }), 404);
    expectStatus(await send('resetChurnModel', 'DELETE', '/api/v1/churn-model', { headers: key }), 200);
    expectStatus(await send('listAuditEvents', 'GET', '/api/v1/audit-events?limit=5', { headers: key }), 200);
    // Streamed exports: NDJSON and CSV bodies as the description's media types.
    expectStatus(await send('exportDataset', 'GET', '/api/v1/exports/customers?format=csv', { headers: key }), 200);
    expectStatus(await send('exportDataset', 'GET', '/api/v1/exports/alerts', { headers: key }), 200);
    expectStatus(await send('exportCustomer', 'GET', `${c}/export`, { headers: key }), 200);
    expectStatus(await send('deleteCustomer', 'DELETE', `/api/v1/customers/${createdId}`, { headers: key }), 200);
    const workspace = await send('getWorkspace', 'GET', '/api/v1/workspace', { headers: key });
    expectStatus(workspace, 200);
    expectStatus(await send('getRetention', 'GET', '/api/v1/retention', { headers: key }), 200);

    // Credential answers: an unknown key, a plan without API access, two different credentials.
    expectStatus(await send('listCustomers', 'GET', '/api/v1/customers', { headers: { 'x-api-key': `sk_${'0'.repeat(40)}` } }), 401);
    const free = await tenantWithKey(t.prisma, 'free');
    expectStatus(await send('listCustomers', 'GET', '/api/v1/customers', { headers: { 'x-api-key': free.apiKey } }), 403);
    expectStatus(
      await send('listCustomers', 'GET', '/api/v1/customers', { headers: { ...key, authorization: `Bearer ${free.apiKey}` } }),
      400,
    );
    // A session from the sign-in route, an owner's: retention and the workspace's deletion are for owners, signed in.
    const user = await t.services.accounts.createUser(operator(tenantId), {
      email: `proxy-${tenantId}@example.com`,
      password: 'correct horse battery',
      role: 'owner',
    });
    const login = await send(
      'login',
      'POST',
      '/api/v1/auth/login',
      json({}, { email: `proxy-${tenantId}@example.com`, password: 'correct horse battery' }),
    );
    expectStatus(login, 200);
    expectStatus(
      await send('login', 'POST', '/api/v1/auth/login', json({}, { email: `proxy-${tenantId}@example.com`, password: 'wrong' })),
      401,
    );
    const owner = { authorization: `Bearer ${JSON.parse(login.body).token}` };
    expectStatus(await send('setRetention', 'PUT', '/api/v1/retention', json(owner, { inbound_bodies: 14, signals: null })), 200);
    const name = JSON.parse(workspace.body).name as string;
    expectStatus(await send('scheduleWorkspaceDeletion', 'POST', '/api/v1/workspace/deletion', json(owner, { confirm_name: name })), 202);
    expectStatus(await send('scheduleWorkspaceDeletion', 'POST', '/api/v1/workspace/deletion', json(owner, { confirm_name: name })), 409);
    expectStatus(await send('cancelWorkspaceDeletion', 'DELETE', '/api/v1/workspace/deletion', { headers: owner }), 200);
    expectStatus(await send('cancelWorkspaceDeletion', 'DELETE', '/api/v1/workspace/deletion', { headers: owner }), 409);
    // Ending sessions: the owner's last, as each one refuses what it ended.
    const signIn = async () => {
      const res = await send('login', 'POST', '/api/v1/auth/login', json({}, { email: user.email, password: 'correct horse battery' }));
      return { authorization: `Bearer ${JSON.parse(res.body).token}` };
    };
    expectStatus(await send('logout', 'POST', '/api/v1/auth/logout', { headers: await signIn() }), 204);
    expectStatus(await send('logout', 'POST', '/api/v1/auth/logout', { headers: key }), 403);
    expectStatus(await send('revokeUserSessions', 'DELETE', `/api/v1/users/${randomUUID()}/sessions`, { headers: owner }), 404);
    expectStatus(await send('revokeWorkspaceSessions', 'DELETE', '/api/v1/workspace/sessions', { headers: key }), 403);
    expectStatus(await send('revokeUserSessions', 'DELETE', `/api/v1/users/${user.id}/sessions`, { headers: owner }), 204);
    expectStatus(await send('revokeWorkspaceSessions', 'DELETE', '/api/v1/workspace/sessions', { headers: owner }), 401);
    expectStatus(await send('revokeWorkspaceSessions', 'DELETE', '/api/v1/workspace/sessions', { headers: await signIn() }), 204);
  });

  it('went through every operation of the description', () => {
    const operations = Object.values<Record<string, { operationId?: string }>>(spec.paths).flatMap((item) =>
      Object.values(item).flatMap((op) => (op?.operationId ? [op.operationId] : [])),
    );
    expect([...seen.keys()].sort()).toEqual([...new Set(operations)].sort());
  });
});
