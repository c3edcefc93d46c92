import pg from 'pg';
import { describe, expect } from 'vitest';
import { appDatabaseRole } from '../support/database.ts';
import { testWith } from '../support/fixtures.ts';

type Gql = (query: string, variables?: object) => Promise<{ data?: any; errors?: { message: string; extensions?: { code?: string } }[] }>;

// An admin signed in over GraphQL, and a way to read the tenant's audit log.
// Endpoints on loopback, so no name has to resolve.
const test = testWith({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } })
  .extend('admin', async ({ app, signedIn }) => {
    const s = await signedIn('admin');
    const gql: Gql = async (query, variables = {}) =>
      (
        await app.app.inject({
          method: 'POST',
          url: '/graphql',
          headers: { authorization: `Bearer ${s.token}`, 'x-forwarded-for': '203.0.113.9' },
          payload: { query, variables },
        })
      ).json();
    return { ...s, gql };
  })
  .extend('audit', async ({ admin }) => async (filter: { action?: string; targetId?: string } = {}) => {
    const r = await admin.gql(
      `query($action: String, $targetId: String) { auditEvents(action: $action, targetId: $targetId, first: 100) {
         totalCount nodes { action actorType actorId actorLabel clientAddress requestId targetType targetId changes occurredAt } } }`,
      filter,
    );
    if (r.errors) throw new Error(JSON.stringify(r.errors));
    return r.data.auditEvents.nodes as Record<string, any>[];
  });

describe('audit log', () => {
  test('records an API key created by a signed-in admin with the actor, the socket address and no secret', async ({ admin, audit }) => {
    const r = await admin.gql('mutation { createApiKey(name: "deploy") { secret apiKey { id } } }');
    const [e] = await audit({ action: 'api_key.created' });
    expect(e).toMatchObject({
      actorType: 'user',
      actorId: admin.user.id,
      actorLabel: admin.email,
      // The socket's address, not the forwarded header the client sent.
      clientAddress: '127.0.0.1',
      targetType: 'api_key',
      targetId: r.data.createApiKey.apiKey.id,
      changes: { name: 'deploy', expires_at: null },
    });
    expect(e!.requestId).toBeTruthy();
    expect(JSON.stringify(e)).not.toContain(r.data.createApiKey.secret);
  });

  test('records rotation and revocation of a key against that key', async ({ admin, audit, tenant }) => {
    const rotated = await admin.gql(`mutation { rotateApiKey(id: "${tenant.apiKeyId}", gracePeriodHours: 1) { apiKey { id } } }`);
    await admin.gql(`mutation { revokeApiKey(id: "${rotated.data.rotateApiKey.apiKey.id}") { id } }`);
    expect((await audit({ targetId: tenant.apiKeyId })).map((e) => e.action)).toEqual(['api_key.rotated']);
    const [revoked] = await audit({ targetId: rotated.data.rotateApiKey.apiKey.id });
    expect(revoked).toMatchObject({ action: 'api_key.revoked' });
  });

  test('records a webhook endpoint’s life with the fields that changed, never its secret', async ({ admin, audit }) => {
    const created = await admin.gql(
      'mutation { createWebhookEndpoint(input: { url: "https://127.0.0.1:9/a", events: ["invoice.paid"] }) { secret endpoint { id } } }',
    );
    const id = created.data.createWebhookEndpoint.endpoint.id as string;
    await admin.gql(`mutation { updateWebhookEndpoint(id: "${id}", input: { url: "https://127.0.0.1:9/b", enabled: true }) { id } }`);
    const rotated = await admin.gql(`mutation { rotateWebhookEndpointSecret(id: "${id}") { secret } }`);
    await admin.gql(`mutation { deleteWebhookEndpoint(id: "${id}") }`);
    const events = await audit({ targetId: id });
    expect(events.map((e) => e.action)).toEqual([
      'webhook_endpoint.deleted',
      'webhook_endpoint.secret_rotated',
      'webhook_endpoint.updated',
      'webhook_endpoint.created',
    ]);
    // `enabled` was already true, so only the URL changed.
    expect(events[2]!.changes).toEqual({ url: { from: 'https://127.0.0.1:9/a', to: 'https://127.0.0.1:9/b' } });
    const text = JSON.stringify(events);
    expect(text).not.toContain(created.data.createWebhookEndpoint.secret);
    expect(text).not.toContain(rotated.data.rotateWebhookEndpointSecret.secret);
  });

  test('records a Test, a resend and a replay with who sent what to which endpoint host, and how many', async ({
    app,
    admin,
    audit,
    tenant,
  }) => {
    const created = await admin.gql(
      'mutation { createWebhookEndpoint(input: { url: "https://127.0.0.1:9/hook?token=abc", events: ["invoice.paid"] }) { endpoint { id } } }',
    );
    const id = created.data.createWebhookEndpoint.endpoint.id as string;
    const tested = await admin.gql(`mutation { testWebhookEndpoint(id: "${id}") { deliveryId } }`);
    const deliveryId = tested.data.testWebhookEndpoint.deliveryId as string;
    await admin.gql(`mutation { resendWebhookDelivery(id: "${deliveryId}") }`);
    await app.pool.query(
      `INSERT INTO webhook_deliveries (id, tenant_id, endpoint_id, event_type, envelope, status, updated_at)
       VALUES (gen_random_uuid(), $1, $2, 'invoice.paid', '{}', 'failed', now())`,
      [tenant.tenantId, id],
    );
    const replayed = await admin.gql(`mutation { replayWebhookDeliveries(endpointId: "${id}", since: "2020-01-01T00:00:00Z") }`);
    expect(replayed.data.replayWebhookDeliveries).toBe(1);

    const [test] = await audit({ action: 'webhook_endpoint.tested' });
    expect(test).toMatchObject({
      actorType: 'user',
      actorId: admin.user.id,
      targetType: 'webhook_endpoint',
      targetId: id,
      changes: { url_host: '127.0.0.1:9', event: 'invoice.paid', delivery_id: deliveryId, deliveries: 1 },
    });
    const [resent] = await audit({ action: 'webhook_delivery.resent' });
    expect(resent).toMatchObject({
      actorId: admin.user.id,
      targetType: 'webhook_delivery',
      targetId: deliveryId,
      changes: { endpoint_id: id, url_host: '127.0.0.1:9', deliveries: 1 },
    });
    const [replay] = await audit({ action: 'webhook_endpoint.replayed' });
    expect(replay).toMatchObject({
      actorId: admin.user.id,
      targetId: id,
      changes: { url_host: '127.0.0.1:9', since: '2020-01-01T00:00:00.000Z', deliveries: 1 },
    });
    // The host only: a URL's path and query may carry the receiver's own token.
    expect(JSON.stringify([test, resent, replay])).not.toContain('token=abc');
  });

  test('records weights changes as before and after', async ({ admin, audit }) => {
    const r = await admin.gql(
      'mutation { setHealthWeights(input: { usage: 0.4, engagement: 0.2, support: 0.1, billing: 0.2, growth: 0.1 }) { isDefault } }',
    );
    expect(r.errors).toBeUndefined();
    const [e] = await audit({ action: 'scoring_weights.changed' });
    expect(e!.changes.usage).toEqual({ from: expect.any(Number), to: 0.4 });
  });

  test('records that an inbound secret was set, without the secret', async ({ admin, audit }) => {
    const r = await admin.gql('mutation { setInboundSecret(provider: stripe, secret: "whsec_abcdefgh12345678") { provider } }');
    expect(r.errors).toBeUndefined();
    const [e] = await audit({ action: 'inbound_secret.set' });
    expect(e).toMatchObject({ targetId: 'stripe', changes: { secret: 'set', generated: false } });
    expect(JSON.stringify(e)).not.toContain('whsec_abcdefgh12345678');
  });

  test('records sign-ins and failed sign-ins on a known email', async ({ app, admin, audit }) => {
    const login = (password: string) =>
      app.app.inject({
        method: 'POST',
        url: '/graphql',
        payload: {
          query: 'mutation($e: String!, $p: String!) { login(email: $e, password: $p) { token } }',
          variables: { e: admin.email, p: password },
        },
      });
    await login('wrong password');
    await login(admin.password);
    expect((await audit({ targetId: admin.user.id })).map((e) => e.action)).toEqual(['session.signed_in', 'session.sign_in_failed']);
  });

  test('is readable with an API key but not by a member', async ({ app, apiKey, signedIn, admin }) => {
    await admin.gql('mutation { createApiKey(name: "x") { secret } }');
    const query = { query: '{ auditEvents { totalCount } }' };
    const byKey = await app.app.inject({ method: 'POST', url: '/graphql', headers: { 'x-api-key': apiKey }, payload: query });
    expect(byKey.json().data.auditEvents.totalCount).toBe(1);
    const member = await signedIn('member');
    const byMember = await app.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { authorization: `Bearer ${member.token}` },
      payload: query,
    });
    expect(byMember.json().errors[0].extensions.code).toBe('forbidden');
  });

  test('shows a tenant only its own events', async ({ app, admin }) => {
    await admin.gql('mutation { createApiKey(name: "mine") { secret } }');
    const other = await (await import('../support/factories.ts')).tenantWithKey(app.prisma);
    const r = await app.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'x-api-key': other.apiKey },
      payload: { query: '{ auditEvents { totalCount } }' },
    });
    expect(r.json().data.auditEvents.totalCount).toBe(0);
  });

  test('refuses an unknown action filter as invalid input', async ({ admin }) => {
    const r = await admin.gql('{ auditEvents(action: "key.stolen") { totalCount } }');
    expect(r.errors?.[0]?.extensions?.code).toBe('validation_failed');
  });
});

describe('audit log storage', () => {
  test('cannot be changed or deleted through the application’s connection', async ({ app, admin }) => {
    await admin.gql('mutation { createApiKey(name: "kept") { secret } }');
    await expect(app.pool.query(`UPDATE audit_events SET action = 'api_key.revoked'`)).rejects.toThrow(/cannot be changed/);
    await expect(app.pool.query('DELETE FROM audit_events')).rejects.toThrow(/younger than a year/);
    await expect(app.pool.query('TRUNCATE audit_events')).rejects.toThrow(/cannot be truncated/);
  });

  test('lets a row older than a year go, and goes with its tenant', async ({ app, tenant }) => {
    const old = await app.pool.query<{ id: string }>(
      `INSERT INTO audit_events (id, tenant_id, occurred_at, actor_type, action) VALUES (gen_random_uuid(), $1, now() - interval '400 days', 'operator', 'user.created') RETURNING id`,
      [tenant.tenantId],
    );
    await app.pool.query(
      `INSERT INTO audit_events (id, tenant_id, actor_type, action) VALUES (gen_random_uuid(), $1, 'operator', 'user.created')`,
      [tenant.tenantId],
    );
    expect((await app.pool.query('DELETE FROM audit_events WHERE id = $1', [old.rows[0]!.id])).rowCount).toBe(1);
    await app.pool.query('DELETE FROM tenants WHERE id = $1', [tenant.tenantId]);
    expect((await app.pool.query('SELECT 1 FROM audit_events WHERE tenant_id = $1', [tenant.tenantId])).rowCount).toBe(0);
  });
});

/** A connection as a login role in chs_app, the role the service runs as in production (docs/operations.md). */
async function asAppRole<T>(databaseUrl: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const role = await appDatabaseRole();
  const c = new pg.Client({ connectionString: Object.assign(new URL(databaseUrl), { username: role.name }).toString() });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
    await role.drop();
  }
}

const insertAudit = (c: pg.Client | pg.Pool, tenantId: string, age = '0 days') =>
  c.query(
    `INSERT INTO audit_events (id, tenant_id, occurred_at, actor_type, action) VALUES (gen_random_uuid(), $1, now() - $2::interval, 'operator', 'user.created')`,
    [tenantId, age],
  );

describe('audit log storage for the application’s database role', () => {
  test('can add and read audit events, and cannot rewrite, delete or unprotect them', async ({ app, tenant }) => {
    await asAppRole(app.config.database.url!, async (c) => {
      await insertAudit(c, tenant.tenantId);
      expect((await c.query('SELECT count(*)::int AS n FROM audit_events WHERE tenant_id = $1', [tenant.tenantId])).rows[0].n).toBe(1);
      for (const statement of [
        `UPDATE audit_events SET action = 'api_key.revoked'`,
        'DELETE FROM audit_events',
        'TRUNCATE audit_events',
        'ALTER TABLE audit_events DISABLE TRIGGER audit_events_no_rewrite',
        'DROP TRIGGER audit_events_no_rewrite ON audit_events',
        'SET session_replication_role = replica',
      ]) {
        await expect(c.query(statement), statement).rejects.toThrow(/permission denied|must be owner/);
      }
    });
    expect((await app.pool.query('SELECT count(*)::int AS n FROM audit_events WHERE tenant_id = $1', [tenant.tenantId])).rows[0].n).toBe(1);
  });

  test('removes through the purge function only rows past a year, whatever it is asked', async ({ app, tenant }) => {
    await asAppRole(app.config.database.url!, async (c) => {
      await insertAudit(c, tenant.tenantId, '400 days');
      await insertAudit(c, tenant.tenantId, '300 days');
      const purge = async (before: string) =>
        (await c.query(`SELECT audit_events_purge($1, $2::timestamptz, 100) AS n`, [tenant.tenantId, before])).rows[0].n;
      expect(await purge('infinity')).toBe(1);
      expect(await purge('infinity')).toBe(0);
      // Once the workspace's deletion is due, everything of it may go.
      await c.query(`UPDATE tenants SET deletion_requested_at = now(), deletion_due_at = now() WHERE id = $1`, [tenant.tenantId]);
      expect(await purge('infinity')).toBe(1);
    });
  });

  test('cannot take back a due deletion, so a workspace cannot be made due to purge its log and then live on', async ({ app, tenant }) => {
    await asAppRole(app.config.database.url!, async (c) => {
      await insertAudit(c, tenant.tenantId);
      await c.query(`UPDATE tenants SET deletion_requested_at = now(), deletion_due_at = now() WHERE id = $1`, [tenant.tenantId]);
      for (const set of ['deletion_due_at = NULL', `deletion_due_at = now() + interval '7 days'`, 'deletion_requested_at = NULL']) {
        await expect(c.query(`UPDATE tenants SET ${set} WHERE id = $1`, [tenant.tenantId]), set).rejects.toThrow(/cannot be taken back/);
      }
      // Other changes to the row go on.
      await c.query(`UPDATE tenants SET updated_at = now() WHERE id = $1`, [tenant.tenantId]);
    });
    const t = await app.prisma.tenant.findUniqueOrThrow({ where: { id: tenant.tenantId } });
    expect(t.deletionDueAt!.getTime()).toBeLessThanOrEqual(Date.now());
  });
});

describe('GET /api/v1/audit-events', () => {
  test('lists the log newest first with snake_case fields, filtered by action', async ({ admin, api }) => {
    await admin.gql('mutation { createApiKey(name: "first") { secret } }');
    await admin.gql('mutation { createApiKey(name: "second") { secret } }');
    const res = await api.get('/api/v1/audit-events?action=api_key.created&limit=1');
    expect(res.statusCode).toBe(200);
    const page = res.json();
    expect(page.data).toEqual([
      expect.objectContaining({
        action: 'api_key.created',
        actor_type: 'user',
        actor_label: admin.email,
        changes: expect.objectContaining({ name: 'second' }),
      }),
    ]);
    const next = (await api.get(`/api/v1/audit-events?action=api_key.created&limit=1&cursor=${page.next_cursor}`)).json();
    expect(next.data[0].changes.name).toBe('first');
    expect(next.has_more).toBe(false);
  });

  test('filters by time', async ({ admin, api }) => {
    await admin.gql('mutation { createApiKey(name: "now") { secret } }');
    const future = new Date(Date.now() + 60_000).toISOString();
    expect((await api.get(`/api/v1/audit-events?since=${future}`)).json().data).toEqual([]);
    expect((await api.get(`/api/v1/audit-events?until=${future}`)).json().data).toHaveLength(1);
  });

  test('answers 400 problem+json for an unknown action', async ({ api }) => {
    const res = await api.get('/api/v1/audit-events?action=key.stolen');
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  });
});
