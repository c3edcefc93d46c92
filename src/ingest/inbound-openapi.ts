// How the inbound webhook routes read in the OpenAPI description. The handler checks every part itself,
// in the order providers need (unknown address 404, then signature 401, then the body), so these
// schemas document the requests; they do not validate them.
import { PROVIDERS } from './providers/types.ts';

const TENANT_ID = { type: 'string', format: 'uuid', description: 'The tenant’s id, shown on its integration cards.' } as const;

export const inboundParams = {
  type: 'object',
  properties: {
    provider: { type: 'string', enum: [...PROVIDERS], description: 'The provider that signs the request.' },
    tenant_id: TENANT_ID,
  },
  required: ['provider', 'tenant_id'],
} as const;

export const metaParams = { type: 'object', properties: { tenant_id: TENANT_ID }, required: ['tenant_id'] } as const;

/** The signature headers, per provider; each provider sends only its own. */
export const signatureHeaders = {
  type: 'object',
  properties: {
    'stripe-signature': { type: 'string', description: 'Stripe: `t=<unix seconds>,v1=<hex HMAC-SHA256>`.' },
    'x-hub-signature-256': { type: 'string', description: 'GitHub and Meta: `sha256=<hex HMAC-SHA256 of the body>`.' },
    'x-github-event': { type: 'string', description: 'GitHub: the event name (`ping` is answered as a handshake).' },
    'x-github-delivery': { type: 'string', description: 'GitHub: the delivery id, the same on redeliveries.' },
    'x-slack-signature': { type: 'string', description: 'Slack: `v0=<hex HMAC-SHA256 of v0:<timestamp>:<body>>`.' },
    'x-slack-request-timestamp': { type: 'string', description: 'Slack: unix seconds; older than five minutes is refused.' },
    'x-signature-ed25519': { type: 'string', description: 'Discord: hex Ed25519 signature of timestamp + body.' },
    'x-signature-timestamp': { type: 'string', description: 'Discord: the signed timestamp.' },
    'x-hub-signature': { type: 'string', description: 'Intercom: `sha1=<hex HMAC-SHA1 of the body>`.' },
  },
} as const;

/** One small, typical body per provider. */
const EXAMPLES: Record<(typeof PROVIDERS)[number], { summary: string; value: Record<string, unknown> }> = {
  stripe: {
    summary: 'Stripe: invoice.payment_failed',
    value: {
      id: 'evt_1P2',
      object: 'event',
      type: 'invoice.payment_failed',
      created: 1767225600,
      data: { object: { id: 'in_1', customer: 'cus_123', amount_due: 4900 } },
    },
  },
  github: {
    summary: 'GitHub: issues.opened',
    value: {
      action: 'opened',
      issue: { number: 7, title: 'Export fails' },
      repository: { full_name: 'acme/app' },
      sender: { login: 'octocat' },
    },
  },
  slack: {
    summary: 'Slack: Events API message',
    value: {
      type: 'event_callback',
      event_id: 'Ev0PV52K25',
      team_id: 'T123',
      event: { type: 'message', user: 'U123', text: 'Thanks!', ts: '1767225600.000100' },
    },
  },
  discord: { summary: 'Discord: Interactions PING', value: { type: 1, id: '1234567890', application_id: '987654321' } },
  intercom: {
    summary: 'Intercom: conversation.user.created',
    value: {
      type: 'notification_event',
      id: 'notif_1',
      topic: 'conversation.user.created',
      created_at: 1767225600,
      data: { item: { type: 'conversation', id: '42' } },
    },
  },
  meta_ads: {
    summary: 'Meta: ad account change',
    value: { object: 'ad_account', entry: [{ id: 'act_123', time: 1767225600, changes: [{ field: 'spend', value: { amount: 120.5 } }] }] },
  },
};

export const inboundBody = {
  type: 'object',
  additionalProperties: true,
  description: 'The provider’s JSON event, exactly as it signed it.',
  'x-examples': EXAMPLES,
} as const;

const receipt = {
  type: 'object',
  properties: { received: { type: 'boolean' }, id: { type: 'string', format: 'uuid' }, duplicate: { type: 'boolean' } },
  required: ['received', 'id', 'duplicate'],
} as const;

export const inboundResponses = {
  200: {
    description:
      'A replay of a stored event (`duplicate: true`), a handshake answer (Slack `{challenge}`, GitHub and Intercom pings), or a Discord interaction response.',
    type: 'object',
    additionalProperties: true,
  },
  202: { description: 'Stored and queued.', ...receipt },
  204: { description: 'Discord Webhook Events: acknowledged with no body.', type: 'null' },
} as const;

export const metaVerificationQuery = {
  type: 'object',
  properties: {
    'hub.mode': { type: 'string', enum: ['subscribe'], description: 'Always `subscribe`.' },
    'hub.verify_token': { type: 'string', description: 'The verify token set on the tenant’s Meta integration card.' },
    'hub.challenge': { type: 'string', description: 'Echoed back when the token matches.' },
  },
  required: ['hub.mode', 'hub.verify_token', 'hub.challenge'],
} as const;

export const metaVerificationResponse = {
  200: {
    description: 'The hub.challenge, echoed.',
    content: { 'text/plain': { schema: { type: 'string' }, example: '1158201444' } },
  },
} as const;
