// How the inbound webhook routes read in the OpenAPI description. The handler checks every part itself,
// in the order providers need (unknown address 404, then signature 401, then the body), so these
// schemas document the requests; they do not validate them. Each provider's headers and example body sit
// on its spec (src/ingest/providers), so a provider added there is described here too.
import { PROVIDER_SPECS } from './providers/index.ts';
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

const specs = PROVIDERS.map((p) => PROVIDER_SPECS[p]);
const and = (names: string[]) => (names.length > 1 ? `${names.slice(0, -1).join(', ')} and ${names.at(-1)}` : names[0]);

/**
 * The headers the providers sign with, from their specs; each provider sends only its own. A header several
 * providers send alike (GitHub's and Meta's `x-hub-signature-256`) is described once, naming them all.
 */
function headerProperties(): Record<string, { type: 'string'; description: string }> {
  const byName = new Map<string, Map<string, string[]>>(); // header → what it carries → who sends it so
  for (const { openapi } of specs) {
    for (const [name, text] of Object.entries(openapi.headers)) {
      const texts = byName.get(name) ?? byName.set(name, new Map()).get(name)!;
      texts.set(text, [...(texts.get(text) ?? []), openapi.label]);
    }
  }
  return Object.fromEntries(
    [...byName].map(([name, texts]) => [
      name,
      { type: 'string', description: [...texts].map(([text, labels]) => `${and(labels)}: ${text}`).join(' ') },
    ]),
  );
}

export const signatureHeaders = { type: 'object', properties: headerProperties() } as const;

export const inboundBody = {
  type: 'object',
  additionalProperties: true,
  description: 'The provider’s JSON event, exactly as it signed it.',
  'x-examples': Object.fromEntries(
    specs.map(({ name, openapi: { label, example } }) => [name, { summary: `${label}: ${example.summary}`, value: example.value }]),
  ),
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
