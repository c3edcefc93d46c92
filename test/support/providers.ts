import { createHmac, generateKeyPairSync, randomUUID, sign, type KeyObject } from 'node:crypto';
import Stripe from 'stripe';

export const nowS = () => Math.floor(Date.now() / 1000);
const hmac = (alg: 'sha1' | 'sha256', key: string, data: string) => createHmac(alg, key).update(data).digest('hex');
const rid = () => randomUUID().replaceAll('-', '').slice(0, 24);

export interface Signed {
  body: string;
  headers: Record<string, string>;
}

export const signStripe = (secret: string, event: object, t = nowS()): Signed => {
  const body = JSON.stringify(event);
  return {
    body,
    headers: { 'content-type': 'application/json', 'stripe-signature': `t=${t},v1=${hmac('sha256', secret, `${t}.${body}`)}` },
  };
};
/** GitHub's full header set; the signature covers the body only, not the delivery id or event name. */
export const githubHeaders = (secret: string, event: string, body: string, delivery = randomUUID()): Record<string, string> => ({
  'content-type': 'application/json',
  'user-agent': 'GitHub-Hookshot/8e8e8e8',
  'x-github-event': event,
  'x-github-delivery': delivery,
  'x-github-hook-id': '292430182',
  'x-github-hook-installation-target-id': '79929171',
  'x-github-hook-installation-target-type': 'repository',
  'x-hub-signature': `sha1=${hmac('sha1', secret, body)}`,
  'x-hub-signature-256': `sha256=${hmac('sha256', secret, body)}`,
});
export const signGithub = (secret: string, event: string, payload: object, delivery = randomUUID()): Signed => {
  const body = JSON.stringify(payload);
  return { body, headers: githubHeaders(secret, event, body, delivery) };
};
export const signSlack = (secret: string, payload: object, ts = nowS()): Signed => {
  const body = JSON.stringify(payload);
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'x-slack-request-timestamp': String(ts),
      'x-slack-signature': `v0=${hmac('sha256', secret, `v0:${ts}:${body}`)}`,
    },
  };
};
export const signIntercom = (secret: string, payload: object): Signed => {
  const body = JSON.stringify(payload);
  return { body, headers: { 'content-type': 'application/json', 'x-hub-signature': `sha1=${hmac('sha1', secret, body)}` } };
};
export const signMeta = (secret: string, payload: object): Signed => {
  const body = JSON.stringify(payload);
  return { body, headers: { 'content-type': 'application/json', 'x-hub-signature-256': `sha256=${hmac('sha256', secret, body)}` } };
};
export function discordKeys() {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const hex = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('hex');
  return { publicHex: hex, privateKey };
}
export const signDiscord = (privateKey: KeyObject, payload: object, ts = String(nowS())): Signed => {
  const body = JSON.stringify(payload);
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'user-agent': 'Discord-Interactions/1.0 (+https://discord.com)',
      'x-signature-timestamp': ts,
      'x-signature-ed25519': sign(null, Buffer.from(ts + body), privateKey).toString('hex'),
    },
  };
};

// Payloads in each provider's documented shape.
export const stripeEvent = (type: string, object: object, created = nowS()) => ({
  id: `evt_${rid()}`,
  object: 'event',
  api_version: '2024-06-20',
  created,
  livemode: false,
  pending_webhooks: 1,
  type,
  data: { object },
});
export const stripeCustomer = (cus: string, email = 'billing@initech.example', name = 'Initech') => ({
  id: cus,
  object: 'customer',
  email,
  name,
  metadata: {},
});
export const stripeInvoice = (id: string, cus: string, total: number, extra: object = {}) => ({
  id,
  object: 'invoice',
  customer: cus,
  status: 'draft',
  total,
  amount_due: total,
  currency: 'usd',
  due_date: nowS() + 30 * 86400,
  ...extra,
});
export const stripeSubscription = (id: string, cus: string, trialEnd: number | null, extra: object = {}) => ({
  id,
  object: 'subscription',
  customer: cus,
  status: trialEnd ? 'trialing' : 'active',
  currency: 'usd',
  trial_end: trialEnd,
  items: {
    object: 'list',
    data: [
      {
        id: `si_${rid()}`,
        quantity: 5,
        price: { id: 'price_pro', unit_amount: 5000, currency: 'usd', recurring: { interval: 'month', interval_count: 1 } },
      },
    ],
  },
  ...extra,
});
const sha = () => randomUUID().replaceAll('-', '').padEnd(40, '0');
// Each push carries its own commits, as real ones do: two pushes never have the same body.
export const githubPush = (org: string, commits = 3) => ({
  ref: 'refs/heads/main',
  before: sha(),
  after: sha(),
  commits: Array.from({ length: commits }, () => ({ id: sha(), message: 'fix' })),
  repository: { id: 1, name: 'app', full_name: `${org}/app`, owner: { login: org } },
  organization: { login: org },
  pusher: { name: 'dev', email: 'dev@users.noreply.github.com' },
  sender: { login: 'dev', id: 7 },
});
export const slackMessage = (team: string, channel: string, text: string) => ({
  token: 'x',
  team_id: team,
  api_app_id: 'A1',
  type: 'event_callback',
  event_id: `Ev${rid()}`,
  event_time: nowS(),
  event: { type: 'message', channel, user: 'U123', text, ts: `${nowS()}.000100`, event_ts: `${nowS()}.000100` },
});
export const discordMessage = (guild: string, content: string) => ({
  op: 0,
  t: 'MESSAGE_CREATE',
  s: 42,
  d: {
    id: String(BigInt(Date.now()) << 22n),
    guild_id: guild,
    channel_id: '99',
    content,
    author: { id: '5', username: 'user' },
    timestamp: new Date().toISOString(),
  },
});
export const intercomConversation = (topic: string, email: string, extra: object = {}) => ({
  type: 'notification_event',
  app_id: 'app1',
  id: `notif_${randomUUID()}`,
  topic,
  created_at: nowS(),
  data: {
    type: 'notification_event_data',
    item: {
      type: 'conversation',
      id: rid(),
      state: 'open',
      source: { author: { type: 'user', email }, body: '<p>The export is broken and I am frustrated</p>' },
      contacts: { contacts: [{ id: 'ct1' }] },
      ...extra,
    },
  },
});
export const metaLead = (page: string, leadgen: string, email?: string) => ({
  object: 'page',
  entry: [
    {
      id: page,
      time: nowS(),
      changes: [
        {
          field: 'leadgen',
          value: {
            ad_id: '444',
            form_id: '555',
            leadgen_id: leadgen,
            created_time: nowS(),
            page_id: page,
            ...(email ? { field_data: [{ name: 'email', values: [email] }] } : {}),
          },
        },
      ],
    },
  ],
});

const stripeSdk = new Stripe('sk_test_x');

/**
 * What Stripe itself sends, signed by Stripe's own library rather than by our helper: the header set of
 * a real delivery (Content-Type with its charset, Stripe's User-Agent, Accept, Cache-Control) and a
 * `Stripe-Signature` from `stripe.webhooks.generateTestHeaderString`.
 */
export function stripeSdkSigned(secret: string, payload: string, timestamp = nowS()): Signed {
  return {
    body: payload,
    headers: {
      'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
      accept: '*/*; q=0.5, application/xml',
      'cache-control': 'no-cache',
      'content-type': 'application/json; charset=utf-8',
      'stripe-signature': stripeSdk.webhooks.generateTestHeaderString({ payload, secret, timestamp }),
    },
  };
}
