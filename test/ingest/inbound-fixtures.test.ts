import { operator } from '../../src/services/audit.ts';
import { sign } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROVIDERS } from '../../src/contract/enums.ts';
import type { ProviderName } from '../../src/ingest/providers/types.ts';
import { readRecordedRequest, replayable, signatureHeaders } from '../../src/ingest/recorded-request.ts';
import { createInboundSecretStore } from '../../src/services/integrations.ts';
import { appWithWorker, testSecretBox } from '../support/app.ts';
import { tenantWithKey } from '../support/factories.ts';
import { discordKeys, nowS } from '../support/providers.ts';

const t = appWithWorker();

const DIR = join(import.meta.dirname, '..', 'fixtures', 'providers');

interface Effect {
  status: number;
  /** The answer's body, where the provider expects a particular one. */
  answer?: unknown;
  /** The inbox row's status after processing; absent when nothing is stored (a handshake). */
  inbox?: 'processed' | 'ignored';
  signals?: string[];
}
const ephemeral = { type: 4, data: { content: 'Received.', flags: 64 } };

// What each recorded request must do once replayed. Every fixture on disk must be listed here, and
// every entry must have its fixture (the last test checks both ways).
const EFFECTS: Record<string, Effect> = {
  'github/ping.json': { status: 200, answer: { ok: true, pong: true } },
  'github/push.json': { status: 202, inbox: 'processed', signals: ['code.push'] },
  'github/issues-opened.json': { status: 202, inbox: 'processed', signals: ['code.issue_opened'] },
  'github/pull-request-opened.json': { status: 202, inbox: 'processed', signals: ['code.pr_opened'] },
  'github/star-created.json': { status: 202, inbox: 'processed', signals: ['code.star'] },
  'slack/url-verification.json': { status: 200, answer: { challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P' } },
  'slack/message.json': { status: 202, inbox: 'processed', signals: ['chat.message'] },
  'slack/message-retry.json': { status: 202, inbox: 'processed', signals: ['chat.message'] },
  'slack/reaction-added.json': { status: 202, inbox: 'processed', signals: ['chat.reaction'] },
  'slack/app-rate-limited.json': { status: 202, inbox: 'ignored', signals: [] },
  'discord/interaction-ping.json': { status: 200, answer: { type: 1 } },
  'discord/slash-command.json': { status: 200, answer: ephemeral, inbox: 'processed', signals: ['chat.message'] },
  'discord/button-click.json': { status: 200, answer: { type: 6 }, inbox: 'processed', signals: ['chat.reaction'] },
  'discord/webhook-event-ping.json': { status: 204, answer: '' },
  'discord/application-authorized.json': { status: 204, answer: '', inbox: 'ignored', signals: [] },
  'discord/entitlement-create.json': { status: 204, answer: '', inbox: 'ignored', signals: [] },
  'intercom/ping.json': { status: 200, answer: { ok: true } },
  'intercom/conversation-user-created.json': { status: 202, inbox: 'processed', signals: ['support.conversation_opened'] },
  'intercom/conversation-admin-closed.json': { status: 202, inbox: 'processed', signals: ['support.conversation_closed'] },
  'intercom/conversation-rating-added.json': { status: 202, inbox: 'processed', signals: ['support.rating'] },
  'meta_ads/leadgen.json': { status: 202, inbox: 'processed', signals: ['ads.lead'] },
  'meta_ads/leadgen-batched.json': { status: 202, inbox: 'processed', signals: ['ads.lead', 'ads.lead'] },
};
// Stripe's recorded deliveries, kept per API version, are replayed by stripe-fixtures.test.ts.
const onDisk = PROVIDERS.filter((p) => p !== 'stripe').flatMap((p) =>
  readdirSync(join(DIR, p))
    .filter((f) => f.endsWith('.json'))
    .map((f) => `${p}/${f}`),
);

/** Replays one recorded request to a new tenant, signed afresh as the provider would sign it. */
async function replay(name: string) {
  const provider = name.split('/')[0] as ProviderName;
  const { tenantId } = await tenantWithKey(t.prisma);
  const keys = provider === 'discord' ? discordKeys() : null;
  const { secret } = await createInboundSecretStore(t.prisma, testSecretBox(), { cacheMs: 0 }).put({
    tenantId,
    provider,
    secret: keys?.publicHex,
  }, operator(tenantId));
  const { headers, body } = replayable(await readRecordedRequest(join(DIR, name)));
  const ts = nowS();
  const signature = keys
    ? {
        'x-signature-timestamp': String(ts),
        'x-signature-ed25519': sign(null, Buffer.from(`${ts}${body}`), keys.privateKey).toString('hex'),
      }
    : signatureHeaders(provider, secret, body, ts);
  const send = () =>
    t.app.inject({
      method: 'POST',
      url: `/api/v1/webhooks/in/${provider}/${tenantId}`,
      headers: { ...headers, ...signature },
      payload: body,
    });
  return { tenantId, res: await send(), send };
}

describe('recorded provider requests, replayed and re-signed', () => {
  it.each(Object.entries(EFFECTS))('%s', async (name, effect) => {
    const { tenantId, res, send } = await replay(name);
    expect(res.statusCode, res.body).toBe(effect.status);
    if (effect.answer !== undefined) expect(effect.answer === '' ? res.body : res.json()).toEqual(effect.answer);
    await expect
      .poll(() => t.prisma.inboxEvent.count({ where: { tenantId, status: 'received' } }), { timeout: 10_000, interval: 50 })
      .toBe(0);
    const rows = await t.prisma.inboxEvent.findMany({ where: { tenantId } });
    expect(rows.map((r) => r.status)).toEqual(effect.inbox ? [effect.inbox] : []);
    const signals = await t.prisma.signal.findMany({ where: { tenantId }, select: { kind: true } });
    expect(signals.map((s) => s.kind)).toEqual(effect.signals ?? []);
    if (effect.inbox) {
      // The provider's retry of the same delivery changes nothing.
      const again = await send();
      expect(again.statusCode).toBe(effect.status === 202 ? 200 : effect.status);
      expect(await t.prisma.inboxEvent.count({ where: { tenantId } })).toBe(1);
    }
  });

  it('every fixture on disk has an expected effect, and every expected effect its fixture', () => {
    expect(onDisk.sort()).toEqual(Object.keys(EFFECTS).sort());
  });
});
