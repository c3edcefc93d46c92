import { describe, expect } from 'vitest';
import { purgeDueWorkspaces } from '../../src/lifecycle/workspace-purge.ts';
import { inTransaction } from '../../src/db/sql.ts';
import { enqueueEvents } from '../../src/outbox/events/enqueue.ts';
import { queueDue } from '../../src/outbox/sender/delivery-store.ts';
import { operator } from '../../src/services/audit.ts';
import { createInboundSecretStore } from '../../src/services/integrations.ts';
import { testWith } from '../support/fixtures.ts';
import {
  alert,
  customer,
  exampleEvent,
  historyPoint,
  invoice,
  signals,
  spread,
  subscription,
  tenantWithKey,
} from '../support/factories.ts';
import { stripeCustomer, stripeEvent, stripeSdkSigned } from '../support/providers.ts';
import { testSecretBox, type TestApp } from '../support/app.ts';

// Offboarding: an owner schedules the workspace's deletion, deliveries stop at once, the owner can take it
// back within the window, and when the window ends the worker removes every row of it in bounded batches.
// Everything runs as the service's own database role.

const test = testWith({ asAppRole: true, env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } }).extend(
  'owner',
  async ({ app, tenant, signedIn }) => {
    const s = await signedIn('owner');
    const send = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) =>
      app.app.inject({ method, url, headers: { authorization: `Bearer ${s.token}` }, ...(payload ? { payload } : {}) });
    return { ...s, send, name: tenant.tenant.name };
  },
);

/** A pending delivery of the tenant's, due now. */
async function pendingDelivery(app: TestApp, tenantId: string) {
  const { rows } = await app.pool.query<{ id: string }>(
    `WITH e AS (INSERT INTO webhook_endpoints (id, tenant_id, url, events, secret, updated_at)
                VALUES (gen_random_uuid(), $1, 'https://127.0.0.1:9/h', '{customer.created}', 'x', now()) RETURNING id)
     INSERT INTO webhook_deliveries (id, tenant_id, endpoint_id, event_type, envelope, status, next_attempt_at, updated_at)
     SELECT gen_random_uuid(), $1, e.id, 'customer.created', '{}', 'pending', now() - interval '1 second', now() FROM e RETURNING id`,
    [tenantId],
  );
  return rows[0]!.id;
}

describe('scheduling a workspace’s deletion', () => {
  test('is for its owner, signed in, who types its name', async ({ app, owner, apiKey, signedIn }) => {
    const admin = await signedIn('admin');
    const asAdmin = await app.app.inject({
      method: 'POST',
      url: '/api/v1/workspace/deletion',
      headers: { authorization: `Bearer ${admin.token}` },
      payload: { confirm_name: owner.name },
    });
    expect(asAdmin.statusCode).toBe(403);
    const withKey = await app.app.inject({
      method: 'POST',
      url: '/api/v1/workspace/deletion',
      headers: { 'x-api-key': apiKey },
      payload: { confirm_name: owner.name },
    });
    expect(withKey.statusCode).toBe(403);
    const wrongName = await owner.send('POST', '/api/v1/workspace/deletion', { confirm_name: 'Something else' });
    expect(wrongName.statusCode).toBe(400);
    expect(wrongName.json().errors).toEqual([expect.objectContaining({ path: 'confirm_name' })]);
    expect((await owner.send('GET', '/api/v1/workspace')).json().deletion).toBeNull();

    const res = await owner.send('POST', '/api/v1/workspace/deletion', { confirm_name: owner.name });
    expect(res.statusCode).toBe(202);
    const due = new Date(res.json().deletion.due_at).getTime();
    expect(due - Date.now()).toBeGreaterThan(6.9 * 86_400_000);
    expect(res.json().deletion.requested_by).toBe(owner.email);
    expect((await owner.send('POST', '/api/v1/workspace/deletion', { confirm_name: owner.name })).statusCode).toBe(409);
  });

  test('holds the workspace’s deliveries at once and lets them go when cancelled', async ({ app, owner, tenant }) => {
    const id = await pendingDelivery(app, tenant.tenantId);
    await owner.send('POST', '/api/v1/workspace/deletion', { confirm_name: owner.name });
    expect(await app.outbound.deliverer.attempt(id)).toEqual({ status: 'skipped' });
    await app.pool.query('UPDATE webhook_deliveries SET queued_at = NULL WHERE id = $1', [id]);
    expect(await queueDue(app.pool, app.queue)).toBe(0);

    const cancelled = await owner.send('DELETE', '/api/v1/workspace/deletion');
    expect(cancelled.statusCode).toBe(200);
    expect(cancelled.json().deletion).toBeNull();
    expect(await queueDue(app.pool, app.queue)).toBe(1);
    expect((await owner.send('DELETE', '/api/v1/workspace/deletion')).statusCode).toBe(409);
    const actions = await app.prisma.auditEvent.findMany({ where: { tenantId: tenant.tenantId }, orderBy: { occurredAt: 'asc' } });
    expect(actions.map((a) => a.action)).toEqual(['workspace.deletion_scheduled', 'workspace.deletion_cancelled']);
  });

  test('sends the deliveries turned away during the window at the next due pass once cancelled', async ({ app, owner, tenant }) => {
    const id = await pendingDelivery(app, tenant.tenantId);
    // Queued, as the relay leaves a delivery whose job it published.
    await app.pool.query('UPDATE webhook_deliveries SET queued_at = now() WHERE id = $1', [id]);
    await owner.send('POST', '/api/v1/workspace/deletion', { confirm_name: owner.name });
    expect(await app.outbound.deliverer.attempt(id)).toEqual({ status: 'skipped' });

    await owner.send('DELETE', '/api/v1/workspace/deletion');
    expect(await queueDue(app.pool, app.queue)).toBe(1);
    const cancelled = await app.prisma.auditEvent.findFirstOrThrow({
      where: { tenantId: tenant.tenantId, action: 'workspace.deletion_cancelled' },
    });
    expect(cancelled.changes).toEqual({ deliveries_released: 1 });
  });

  test('refuses a Test during the window with a conflict problem, and does not send it after a cancellation', async ({
    app,
    owner,
    tenant,
  }) => {
    const endpoint = await owner.send('POST', '/api/v1/webhook-endpoints', { url: 'https://127.0.0.1:9/h', events: ['customer.created'] });
    await owner.send('POST', '/api/v1/workspace/deletion', { confirm_name: owner.name });
    const res = await owner.send('POST', `/api/v1/webhook-endpoints/${endpoint.json().id}/test`, {});
    expect(res.statusCode).toBe(409);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({ code: 'conflict', detail: expect.stringMatching(/deletion is scheduled/) });

    await owner.send('DELETE', '/api/v1/workspace/deletion');
    expect(await queueDue(app.pool, app.queue)).toBe(0);
    expect(await app.prisma.webhookDelivery.count({ where: { tenantId: tenant.tenantId } })).toBe(0);
  });

  test('cannot be cancelled once the window has ended', async ({ app, owner, tenant }) => {
    await owner.send('POST', '/api/v1/workspace/deletion', { confirm_name: owner.name });
    await app.pool.query(`UPDATE tenants SET deletion_due_at = now() - interval '1 second' WHERE id = $1`, [tenant.tenantId]);
    // The owner's session ends with the window; the service refuses a cancellation that arrives just after it, too.
    expect((await owner.send('DELETE', '/api/v1/workspace/deletion')).statusCode).toBe(401);
    await expect(app.services.workspace.cancelDeletion(operator(tenant.tenantId))).rejects.toThrow(/No deletion/);
    expect((await app.prisma.tenant.findUniqueOrThrow({ where: { id: tenant.tenantId } })).deletionDueAt).not.toBeNull();
  });

  test('keeps its keys, sessions, sign-in and inbound address working through the window, and closes them all when it ends', async ({
    app,
    owner,
    apiKey,
    tenant,
  }) => {
    const { secret } = await createInboundSecretStore(app.prisma, testSecretBox(), { cacheMs: 0 }).put(
      { tenantId: tenant.tenantId, provider: 'stripe' },
      operator(tenant.tenantId),
    );
    let n = 0;
    const inbound = () => {
      const signed = stripeSdkSigned(
        secret,
        JSON.stringify({ ...stripeEvent('customer.created', stripeCustomer(`cus_${++n}`)), id: `evt_${n}` }),
      );
      return app.app.inject({
        method: 'POST',
        url: `/api/v1/webhooks/in/stripe/${tenant.tenantId}`,
        headers: signed.headers,
        payload: signed.body,
      });
    };
    const withKey = () => app.app.inject({ method: 'GET', url: '/api/v1/customers', headers: { 'x-api-key': apiKey } });
    const signIn = () =>
      app.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: owner.email, password: owner.password } });
    await owner.send('POST', '/api/v1/workspace/deletion', { confirm_name: owner.name });

    expect((await withKey()).statusCode).toBe(200);
    expect((await owner.send('GET', '/api/v1/workspace')).statusCode).toBe(200);
    expect((await signIn()).statusCode).toBe(200);
    expect((await inbound()).statusCode).toBe(202);

    await app.pool.query(`UPDATE tenants SET deletion_due_at = now() - interval '1 second' WHERE id = $1`, [tenant.tenantId]);
    const refused = await withKey();
    expect(refused.statusCode).toBe(401);
    expect(refused.json().detail).toMatch(/workspace was deleted/);
    expect((await owner.send('GET', '/api/v1/workspace')).statusCode).toBe(401);
    expect((await signIn()).statusCode).toBe(401);
    expect((await inbound()).statusCode).toBe(404);
    // Before the worker has removed anything: the keys and users are still there.
    expect(await app.prisma.apiKey.count({ where: { tenantId: tenant.tenantId } })).toBe(1);
    expect(await app.prisma.user.count({ where: { tenantId: tenant.tenantId } })).toBe(1);
  });
});

describe('removing a workspace whose deletion is due', () => {
  /** Rows per table that have a tenant_id, for a tenant. */
  async function rowsOf(app: TestApp, tenantId: string): Promise<Record<string, number>> {
    const { rows: tables } = await app.pool.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.columns WHERE table_schema = 'public' AND column_name = 'tenant_id' ORDER BY table_name`,
    );
    const out: Record<string, number> = {};
    for (const { table_name } of tables) {
      const { rows } = await app.pool.query(`SELECT count(*)::int AS n FROM "${table_name}" WHERE tenant_id = $1`, [tenantId]);
      if (rows[0].n) out[table_name] = rows[0].n;
    }
    out.tenants = (await app.pool.query('SELECT 1 FROM tenants WHERE id = $1', [tenantId])).rowCount ?? 0;
    return out;
  }

  /** A workspace with some of everything. */
  async function populated(app: TestApp, tenantId: string) {
    for (let i = 0; i < 3; i++) {
      const c = await customer(app.prisma, tenantId);
      await signals(app.prisma, tenantId, c.id, spread('usage.event', 12, 30));
      await alert(app.prisma, tenantId, c.id);
      await invoice(app.prisma, tenantId, c.id, { status: 'paid' });
      await subscription(app.prisma, tenantId, c.id, { status: 'active' } as never);
      for (let d = 1; d <= 5; d++) await historyPoint(app.prisma, tenantId, c.id, d, { score: 70 });
    }
    await pendingDelivery(app, tenantId);
    // Outbound events, and with them their subjects' sequence counters.
    await inTransaction(app.pool, (sql) =>
      enqueueEvents(sql, [exampleEvent(tenantId, 'invoice.created'), exampleEvent(tenantId, 'alert.created')]),
    );
    await app.pool.query(
      `INSERT INTO inbox_events (id, tenant_id, provider, dedup_key, event_type, body, status) VALUES (gen_random_uuid(), $1, 'stripe', 'evt_1', 'customer.created', '{}', 'processed')`,
      [tenantId],
    );
    await app.pool.query(
      `INSERT INTO audit_events (id, tenant_id, actor_type, action) VALUES (gen_random_uuid(), $1, 'operator', 'user.created')`,
      [tenantId],
    );
  }

  test('removes every row of it in bounded batches, and nothing of another workspace', async ({ app, owner, tenant }) => {
    await populated(app, tenant.tenantId);
    const other = await tenantWithKey(app.prisma);
    await populated(app, other.tenantId);
    const othersBefore = await rowsOf(app, other.tenantId);
    await owner.send('POST', '/api/v1/workspace/deletion', { confirm_name: owner.name });
    // Within the window nothing goes.
    const mine = await rowsOf(app, tenant.tenantId);
    expect(mine.outbox_sequences).toBe(2);
    await purgeDueWorkspaces(app.pool, { batchSize: 5, maxBatches: 1000 });
    expect(await rowsOf(app, tenant.tenantId)).toEqual(mine);

    await app.pool.query(`UPDATE tenants SET deletion_due_at = now() - interval '1 second' WHERE id = $1`, [tenant.tenantId]);
    const passes = [];
    for (let i = 0; i < 100; i++) {
      const r = await purgeDueWorkspaces(app.pool, { batchSize: 5, maxBatches: 3 });
      passes.push(r);
      if (!r.behind) break;
    }
    expect(passes.length).toBeGreaterThan(3);
    expect(passes.at(-1)).toMatchObject({ workspaces: [tenant.tenantId], behind: false });
    // What is left is the record that it existed, outside its data: its id, plan and dates.
    expect(await rowsOf(app, tenant.tenantId)).toEqual({ tenants: 0, deleted_workspaces: 1 });
    const { rows: record } = await app.pool.query('SELECT * FROM deleted_workspaces WHERE tenant_id = $1', [tenant.tenantId]);
    expect(record).toEqual([
      {
        tenant_id: tenant.tenantId,
        plan: 'scale',
        created_at: expect.any(Date),
        requested_at: expect.any(Date),
        due_at: expect.any(Date),
        deleted_at: expect.any(Date),
      },
    ]);
    expect(await rowsOf(app, other.tenantId)).toEqual(othersBefore);
    // The service's own role could write the record but cannot take it back.
    await expect(app.pool.query('DELETE FROM deleted_workspaces WHERE tenant_id = $1', [tenant.tenantId])).rejects.toThrow(
      /permission denied/,
    );
    // Its people can no longer sign in or call the API.
    expect((await owner.send('GET', '/api/v1/workspace')).statusCode).toBe(401);
  });
});

describe('users and roles', () => {
  test('an owner changes a role and removes a user, both recorded; others may not', async ({ app, owner, signedIn, tenant }) => {
    const member = await signedIn('member');
    const admin = await signedIn('admin');
    const gql = (token: string, query: string, variables: object = {}) =>
      app.app
        .inject({ method: 'POST', url: '/graphql', headers: { authorization: `Bearer ${token}` }, payload: { query, variables } })
        .then((r) => r.json());
    const promote = 'mutation($id: UUID!) { updateUserRole(id: $id, role: admin) { id role } }';
    expect((await gql(admin.token, promote, { id: member.user.id })).errors[0].extensions.code).toBe('forbidden');
    expect((await gql(owner.token, promote, { id: member.user.id })).data.updateUserRole.role).toBe('admin');
    expect((await gql(owner.token, 'mutation($id: UUID!) { removeUser(id: $id) }', { id: admin.user.id })).data.removeUser).toBe(
      admin.user.id,
    );
    expect((await gql(owner.token, 'mutation($id: UUID!) { removeUser(id: $id) }', { id: owner.user.id })).errors[0].extensions.code).toBe(
      'conflict',
    );
    const events = await app.prisma.auditEvent.findMany({ where: { tenantId: tenant.tenantId }, orderBy: { occurredAt: 'asc' } });
    expect(events.map((e) => [e.action, e.changes])).toEqual([
      ['user.role_changed', { role: { from: 'member', to: 'admin' } }],
      ['user.removed', { email: admin.email, role: 'admin' }],
    ]);
    // The removed admin's session no longer works.
    const removed = await app.app.inject({ method: 'GET', url: '/api/v1/workspace', headers: { authorization: `Bearer ${admin.token}` } });
    expect(removed.statusCode).toBe(401);
  });

  test('two owners demoting or removing each other at once leave the workspace one owner', async ({ app, signedIn, tenant }) => {
    const gql = (token: string, query: string, id: string) =>
      app.app.inject({
        method: 'POST',
        url: '/graphql',
        headers: { authorization: `Bearer ${token}` },
        payload: { query, variables: { id } },
      });
    const demote = 'mutation($id: UUID!) { updateUserRole(id: $id, role: admin) { id } }';
    const remove = 'mutation($id: UUID!) { removeUser(id: $id) }';
    for (const [first, second] of [
      [demote, demote],
      [remove, remove],
      [demote, remove],
    ]) {
      await app.prisma.user.deleteMany({ where: { tenantId: tenant.tenantId } });
      const [a, b] = [await signedIn('owner'), await signedIn('owner')];
      const answers = await Promise.all([gql(a.token, first!, b.user.id), gql(b.token, second!, a.user.id)]);
      // The later one is refused: as the last owner (conflict), or, when the earlier one committed before it
      // was authorised, as no longer an owner (forbidden) or no longer a user at all (a 401 problem
      // document: its session ended with its removal); which depends on timing.
      const codes = answers.map((r) => {
        const body = r.json();
        if (r.statusCode !== 200) return body.code as string;
        return body.errors?.[0]?.extensions.code ?? 'ok';
      });
      expect(codes.filter((c) => c === 'ok')).toHaveLength(1);
      const refused = codes.find((c) => c !== 'ok');
      expect(
        first === remove || second === remove ? ['conflict', 'forbidden', 'invalid_credentials'] : ['conflict', 'forbidden'],
      ).toContain(refused);
      expect(await app.prisma.user.count({ where: { tenantId: tenant.tenantId, role: 'owner' } })).toBe(1);
    }
  });
});
