import { operator } from '../../src/services/audit.ts';
import { randomUUID } from 'node:crypto';
import { verifyKey } from 'discord-interactions';
import { describe, expect, it } from 'vitest';
import { parseEventJson } from '../../src/ingest/event-json.ts';
import { createInboundSecretStore } from '../../src/services/integrations.ts';
import { appWithWorker, testSecretBox } from '../support/app.ts';
import { tenantWithKey } from '../support/factories.ts';
import * as p from '../support/providers.ts';

const t = appWithWorker();

type Provider = 'github' | 'slack' | 'discord' | 'intercom' | 'meta_ads';
async function setup(provider: Provider, secret?: string) {
  const { tenantId } = await tenantWithKey(t.prisma);
  const s = await createInboundSecretStore(t.prisma, testSecretBox(), { cacheMs: 0 }).put({ tenantId, provider, secret }, operator(tenantId));
  return { tenantId, secret: s.secret };
}
const post = (provider: Provider, tenantId: string, s: p.Signed) =>
  t.app.inject({ method: 'POST', url: `/api/v1/webhooks/in/${provider}/${tenantId}`, headers: s.headers, payload: s.body });
const stored = (tenantId: string) => t.prisma.inboxEvent.findMany({ where: { tenantId } });
async function settled(tenantId: string) {
  await expect
    .poll(() => t.prisma.inboxEvent.count({ where: { tenantId, status: 'received' } }), { timeout: 10_000, interval: 50 })
    .toBe(0);
}

describe('discord: the answers Discord expects', () => {
  const app = '1234560123453231555';
  const interaction = (type: number, extra: object = {}) => ({
    id: String((BigInt(Date.now()) << 22n) | BigInt(Math.floor(Math.random() * 4_000_000))),
    application_id: app,
    type,
    token: `tok-${randomUUID()}`,
    version: 1,
    guild_id: '81384788765712384',
    channel_id: '81384788765712385',
    member: { user: { id: '53908232506183680', username: 'mason' }, roles: [] },
    ...extra,
  });
  const webhookEvent = (type: string, data: object) => ({
    version: 1,
    application_id: app,
    type: 1,
    event: { type, timestamp: '2024-10-18T14:42:53.064834', data },
  });

  it('signs as Discord does: the test signer passes discord-interactions’ verifyKey', async () => {
    const keys = p.discordKeys();
    const s = p.signDiscord(keys.privateKey, interaction(1));
    expect(await verifyKey(s.body, s.headers['x-signature-ed25519']!, s.headers['x-signature-timestamp']!, keys.publicHex)).toBe(true);
    expect(await verifyKey(`${s.body} `, s.headers['x-signature-ed25519']!, s.headers['x-signature-timestamp']!, keys.publicHex)).toBe(
      false,
    );
  });

  it('answers the Webhook Events PING (type 0) with 204 and an empty body, storing nothing', async () => {
    const keys = p.discordKeys();
    const { tenantId } = await setup('discord', keys.publicHex);
    const res = await post('discord', tenantId, p.signDiscord(keys.privateKey, { version: 1, application_id: app, type: 0 }));
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect(await stored(tenantId)).toHaveLength(0);
  });

  it('answers a Webhook Event (type 1 with `event`) with 204 and an empty body, stores it once, and a redelivery also gets 204', async () => {
    const keys = p.discordKeys();
    const { tenantId } = await setup('discord', keys.publicHex);
    const s = p.signDiscord(
      keys.privateKey,
      webhookEvent('APPLICATION_AUTHORIZED', {
        integration_type: 0,
        scopes: ['applications.commands'],
        user: { id: '1' },
        guild: { id: '81384788765712384' },
      }),
    );
    for (let i = 0; i < 2; i++) {
      const res = await post('discord', tenantId, s);
      expect(res.statusCode).toBe(204);
      expect(res.body).toBe('');
    }
    const rows = await stored(tenantId);
    expect(rows.map((r) => r.eventType)).toEqual(['APPLICATION_AUTHORIZED']);
  });

  it('answers an Interactions PING (type 1 without `event`) with {"type":1} as JSON', async () => {
    const keys = p.discordKeys();
    const { tenantId } = await setup('discord', keys.publicHex);
    const res = await post('discord', tenantId, p.signDiscord(keys.privateKey, interaction(1, { guild_id: undefined, member: undefined })));
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toEqual({ type: 1 });
    expect(await stored(tenantId)).toHaveLength(0);
  });

  it('answers an application command with an ephemeral message, not a receipt, and records the guild’s activity', async () => {
    const keys = p.discordKeys();
    const { tenantId } = await setup('discord', keys.publicHex);
    const res = await post(
      'discord',
      tenantId,
      p.signDiscord(keys.privateKey, interaction(2, { data: { id: '9', name: 'health', type: 1 } })),
    );
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ type: 4, data: { content: 'Received.', flags: 64 } });
    await settled(tenantId);
    const [row] = await stored(tenantId);
    expect(row?.status).toBe('processed');
    expect(await t.prisma.signal.count({ where: { tenantId, source: 'discord', accountId: '81384788765712384' } })).toBe(1);
  });

  it.each([
    [3, { custom_id: 'ok', component_type: 2 }, { type: 6 }],
    [
      4,
      { id: '9', name: 'health', type: 1, options: [{ name: 'q', type: 3, value: 'ac', focused: true }] },
      { type: 8, data: { choices: [] } },
    ],
    [5, { custom_id: 'form', components: [] }, { type: 4, data: { content: 'Received.', flags: 64 } }],
  ])('answers interaction type %i with its interaction response and stores it', async (type, data, expected) => {
    const keys = p.discordKeys();
    const { tenantId } = await setup('discord', keys.publicHex);
    const res = await post('discord', tenantId, p.signDiscord(keys.privateKey, interaction(type, { data })));
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(expected);
    expect(await stored(tenantId)).toHaveLength(1);
  });
});

describe('github: a signed body re-posted with a fresh delivery id', () => {
  it('is a duplicate: the signature does not cover X-GitHub-Delivery, so the body hash decides', async () => {
    const { tenantId, secret } = await setup('github');
    const payload = p.githubPush('replayed-org');
    const first = await post('github', tenantId, p.signGithub(secret, 'push', payload, randomUUID()));
    expect(first.statusCode).toBe(202);
    const again = await post('github', tenantId, p.signGithub(secret, 'push', payload, randomUUID()));
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual({ received: true, id: first.json().id, duplicate: true });
    await settled(tenantId);
    expect(await stored(tenantId)).toHaveLength(1);
    expect(await t.prisma.signal.count({ where: { tenantId } })).toBe(1);
  });

  it('lets exactly one of several concurrent copies in', async () => {
    const { tenantId, secret } = await setup('github');
    const payload = p.githubPush('race-org');
    const answers = await Promise.all(
      Array.from({ length: 12 }, () => post('github', tenantId, p.signGithub(secret, 'push', payload, randomUUID()))),
    );
    expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 202]);
    expect(await stored(tenantId)).toHaveLength(1);
  });

  it('counts as new once the first copy is older than 7 days', async () => {
    const { tenantId, secret } = await setup('github');
    const payload = p.githubPush('weekly-org');
    const first = await post('github', tenantId, p.signGithub(secret, 'push', payload, randomUUID()));
    await t.prisma.inboxEvent.update({ where: { id: first.json().id }, data: { receivedAt: new Date(Date.now() - 8 * 86_400_000) } });
    const later = await post('github', tenantId, p.signGithub(secret, 'push', payload, randomUUID()));
    expect(later.statusCode).toBe(202);
    expect(await stored(tenantId)).toHaveLength(2);
  });

  it('keeps no body hash for providers whose dedup key is signed (Slack’s event_id is in the body)', async () => {
    const { tenantId, secret } = await setup('slack');
    expect((await post('slack', tenantId, p.signSlack(secret, p.slackMessage('T1', 'C1', 'words')))).statusCode).toBe(202);
    expect((await stored(tenantId)).map((r) => r.bodySha256)).toEqual([null]);
  });
});

describe('characters PostgreSQL cannot store', () => {
  it('are replaced with U+FFFD in every string value and key when an event is parsed; surrogate pairs are kept', () => {
    const parsed = parseEventJson('{"a\\u0000":["x\\u0000y",{"k":"\\udc00 \\ud800"}],"ok":"\\ud83d\\ude00","n":1}');
    expect(parsed).toEqual({ 'a\uFFFD': ['x\uFFFDy', { k: '\uFFFD \uFFFD' }], ok: '😀', n: 1 });
  });

  it('a signed Slack event with U+0000 in team_id and in the message text is accepted and processed, its signal recorded', async () => {
    const { tenantId, secret } = await setup('slack');
    const event = p.slackMessage('T0\u0000NUL', 'C0\u0000', 'great\u0000 product, thanks');
    const s = p.signSlack(secret, event);
    expect(s.body).toContain('\\u0000');
    const res = await post('slack', tenantId, s);
    expect(res.statusCode).toBe(202);
    await settled(tenantId);
    const row = await t.prisma.inboxEvent.findUniqueOrThrow({ where: { id: res.json().id } });
    expect(row.status).toBe('processed');
    expect(row.body).toBe(s.body);
    const [signal] = await t.prisma.signal.findMany({ where: { tenantId } });
    expect(signal).toMatchObject({ kind: 'chat.message', accountId: 'T0\uFFFDNUL', altAccountId: 'C0\uFFFD' });
  });

  it('a lone surrogate and U+0000 in an event type and a dedup key are stored too', async () => {
    const { tenantId, secret } = await setup('slack');
    const event = { ...p.slackMessage('T1', 'C1', 'hi \ud800 there'), event_id: 'Ev\u0000\ud800' };
    (event.event as { type: string }).type = 'message\u0000';
    const res = await post('slack', tenantId, p.signSlack(secret, event));
    expect(res.statusCode).toBe(202);
    await settled(tenantId);
    const row = await t.prisma.inboxEvent.findUniqueOrThrow({ where: { id: res.json().id } });
    expect(row).toMatchObject({ dedupKey: 'Ev\uFFFD\uFFFD', eventType: 'message\uFFFD', status: 'ignored' });
  });
});
