import { SEQUENCE_SUBJECT_PATTERN } from '../../contract/sequence-subject.ts';
import { EVENT_NAMES, EVENTS, payloadJsonSchema } from '../events/registry.ts';
import { DELIVERY_TIMEOUT_MS } from './http-send.ts';
import { RETRY_SPAN_MS } from './retry-schedule.ts';

// The `webhooks` section of the OpenAPI description: one entry per event type, describing the request the
// service sends to a tenant's endpoint, so a receiver can generate types for it. The body is the event's
// payload alone, exactly as sent (the stored CloudEvents envelope stays in the delivery log). The timeout
// and the retry span are read from the sender, so the description cannot drift from what it does.

const header = (description: string, schema: Record<string, unknown> = { type: 'string' }) => ({ required: true, description, schema });
/** Sent by one of the two signature schemes only (the endpoint's `signature_scheme`). */
const schemeHeader = (scheme: string, description: string, schema: Record<string, unknown>) => ({
  required: false,
  description: `${description} Sent when the endpoint's \`signature_scheme\` is \`${scheme}\`${scheme === 'v0' ? ' (the default)' : ''}.`,
  schema,
});

const HEADERS = [
  {
    name: 'X-Webhook-Id',
    in: 'header',
    ...schemeHeader('v0', 'The delivery id; the same on every retry of a delivery. Use it to drop duplicates.', {
      type: 'string',
      format: 'uuid',
    }),
  },
  { name: 'X-Webhook-Event', in: 'header', ...header('The event type, as in the envelope’s `type`.') },
  {
    name: 'X-Webhook-Timestamp',
    in: 'header',
    ...schemeHeader('v0', 'Unix seconds when this attempt was signed; refuse one more than 300 s away from your clock.', {
      type: 'string',
      pattern: '^[0-9]+$',
    }),
  },
  {
    name: 'X-Webhook-Signature',
    in: 'header',
    ...schemeHeader(
      'v0',
      '`v0=` and the hex HMAC-SHA256 of `{timestamp}.{raw body}` under the endpoint secret; during a secret rotation two, space-separated, the new one first. Accept the request if any matches.',
      { type: 'string', pattern: '^v0=[0-9a-f]{64}( v0=[0-9a-f]{64})*$' },
    ),
  },
  {
    name: 'webhook-id',
    in: 'header',
    ...schemeHeader('standard', 'Standard Webhooks: the delivery id, the same on every retry of a delivery. Use it to drop duplicates.', {
      type: 'string',
      format: 'uuid',
    }),
  },
  {
    name: 'webhook-timestamp',
    in: 'header',
    ...schemeHeader(
      'standard',
      'Standard Webhooks: Unix seconds when this attempt was signed; refuse one more than 300 s away from your clock.',
      {
        type: 'string',
        pattern: '^[0-9]+$',
      },
    ),
  },
  {
    name: 'webhook-signature',
    in: 'header',
    ...schemeHeader(
      'standard',
      "Standard Webhooks: `v1,` and the base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{raw body}` under the bytes the secret's base64 after `whsec_` encodes, then `v1a,` and the base64 Ed25519 signature of the same string, verifiable with the endpoint's `public_key`; during a secret rotation the rotated-out pair follows, space-separated. Accept the request if any signature you check matches.",
      { type: 'string', pattern: '^v1a?,[A-Za-z0-9+/]+={0,2}( v1a?,[A-Za-z0-9+/]+={0,2})*$' },
    ),
  },
  {
    name: 'X-Webhook-Sequence',
    in: 'header',
    required: false,
    description:
      'The event’s number among the tenant’s events of its sequence subject: 1, 2, 3, … with no number skipped, the same on every retry. Absent on Test deliveries only.',
    schema: { type: 'string', pattern: '^[1-9][0-9]*$' },
  },
  {
    name: 'X-Webhook-Sequence-Subject',
    in: 'header',
    required: false,
    description:
      'What the event is numbered under: `customer:<id>` for anything about a customer, `invoice:<id>` for invoice and payment events (a payment with no invoice: its customer, else `payment:<provider id>`), `subscription:<id>` for a trial extension without a customer, `endpoint:<id>` for `endpoint.disabled`, `endpoint.circuit_opened` and `endpoint.circuit_closed`. Absent on Test deliveries only.',
    schema: { type: 'string', pattern: SEQUENCE_SUBJECT_PATTERN },
  },
];

/** In whole hours, rounded down. */
const RETRY_HOURS = Math.floor(RETRY_SPAN_MS / 3_600_000);

export function webhooksSection(): Record<string, unknown> {
  return Object.fromEntries(
    EVENT_NAMES.map((name) => [
      name,
      {
        post: {
          operationId: `receive_${name.replace(/\./g, '_')}`,
          summary: EVENTS[name].description,
          description: `Sent to every enabled endpoint subscribed to \`${name}\`. Answer 2xx within ${DELIVERY_TIMEOUT_MS / 1000} s; anything else is retried with backoff for about ${RETRY_HOURS} hours (docs/receiving-webhooks.md).`,
          tags: ['Outbound webhooks'],
          parameters: HEADERS,
          requestBody: {
            required: true,
            content: { 'application/json': { schema: payloadJsonSchema(name), example: EVENTS[name].example } },
          },
          responses: { '2XX': { description: 'Received; any 2xx answer ends the delivery.' } },
          security: [],
        },
      },
    ]),
  );
}
