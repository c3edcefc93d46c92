import { normalizeDiscord, discordRangeErrors } from '../normalizers/chat.ts';
import { isDiscordPublicKey } from '../../contract/provider-secrets.ts';
import { createPublicKey, verify as verifySignature } from 'node:crypto';
import { type HandshakeReply, header, KIB, type ProviderSpec, withinRanges } from './types.ts';

// DER prefix of an Ed25519 SubjectPublicKeyInfo; the raw 32-byte key follows it.
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

function publicKey(hex: string) {
  return createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, Buffer.from(hex, 'hex')]), format: 'der', type: 'spki' });
}

// Two Discord features post here, told apart by shape: Webhook Events are `{version, application_id,
// type: 0 PING | 1 EVENT, event?: {type, timestamp, data}}`; Interactions are `{id, token,
// application_id, type: 1 PING | 2..5, ...}`. Both use the number 1, so `event` decides. Gateway
// dispatches relayed by the tenant's own bot are `{op, t, s, d}`.
const isWebhookEvent = (b: any) => (b?.type === 0 || b?.type === 1) && !b?.t && !b?.token && (b?.event !== undefined || b?.type === 0);
const isInteraction = (b: any) => !isWebhookEvent(b) && !b?.t && Number.isInteger(b?.type);

const INTERACTION_PING = 1;
const APPLICATION_COMMAND = 2;
const MESSAGE_COMPONENT = 3;
const AUTOCOMPLETE = 4;
const MODAL_SUBMIT = 5;
// Interaction callback types.
const PONG = 1;
const CHANNEL_MESSAGE_WITH_SOURCE = 4;
const DEFERRED_UPDATE_MESSAGE = 6;
const AUTOCOMPLETE_RESULT = 8;
const EPHEMERAL = 1 << 6;

/**
 * What Discord must get back within 3 s once an event is stored: 204 with no body for a Webhook Event,
 * an interaction response for an Interaction (our 202 receipt would show the user "This interaction
 * failed"). Commands and modal submits get a message only the user sees; components are acknowledged
 * without a visible change; autocomplete gets no choices. Relayed gateway dispatches get the receipt.
 */
function interactionAnswer(type: unknown): HandshakeReply | null {
  switch (type) {
    case APPLICATION_COMMAND:
    case MODAL_SUBMIT:
      return { status: 200, body: { type: CHANNEL_MESSAGE_WITH_SOURCE, data: { content: 'Received.', flags: EPHEMERAL } } };
    case MESSAGE_COMPONENT:
      return { status: 200, body: { type: DEFERRED_UPDATE_MESSAGE } };
    case AUTOCOMPLETE:
      return { status: 200, body: { type: AUTOCOMPLETE_RESULT, data: { choices: [] } } };
    default:
      return null;
  }
}

export const discord: ProviderSpec = {
  normalize: withinRanges(normalizeDiscord, discordRangeErrors),
  rangeErrors: discordRangeErrors,
  sign: () => {
    // The tenant's Discord secret is the application's public key: only Discord holds the private key.
    throw new TypeError('discord requests cannot be re-signed: Discord signs with a private key only Discord holds');
  },
  name: 'discord',
  // An interaction or a relayed dispatch: one message (at most 4,000 characters and 6,000 of embeds) with its resolved users.
  maxBodyBytes: 128 * KIB,
  signed: (headers) =>
    /^[0-9a-fA-F]{128}$/.test(header(headers, 'x-signature-ed25519') ?? '') && !!header(headers, 'x-signature-timestamp'),
  dedupKeySigned: true,
  verify({ headers, rawBody }, secrets) {
    const sig = header(headers, 'x-signature-ed25519');
    const ts = header(headers, 'x-signature-timestamp');
    if (!sig || !ts || !/^[0-9a-fA-F]{128}$/.test(sig)) return false;
    const message = Buffer.concat([Buffer.from(ts, 'utf8'), rawBody]);
    return secrets.some((hex) => {
      try {
        return isDiscordPublicKey(hex) && verifySignature(null, message, publicKey(hex), Buffer.from(sig, 'hex'));
      } catch {
        return false;
      }
    });
  },
  handshake: (body) => {
    // The Webhook Events URL check (type 0) wants 204 and no body; the Interactions endpoint PING, {"type":1}.
    if (isWebhookEvent(body) && body.type === 0) return { status: 204, body: null };
    if (isInteraction(body) && body.type === INTERACTION_PING) return { status: 200, body: { type: PONG } };
    return null;
  },
  answer: (body) => {
    if (isWebhookEvent(body)) return { status: 204, body: null };
    return isInteraction(body) ? interactionAnswer(body.type) : null;
  },
  describe: (body) => {
    // Webhook Events carry no id of their own: the empty key makes the inbox key them by body hash.
    if (isWebhookEvent(body)) return { dedupKey: '', eventType: String(body?.event?.type ?? 'unknown') };
    // Gateway dispatches relayed by a bot carry `t` and the object's id in `d`.
    if (body?.t)
      return {
        dedupKey: `${body.t}:${body.d?.id ?? body.d?.message_id ?? body.s ?? ''}:${body.d?.user_id ?? body.d?.user?.id ?? ''}`,
        eventType: String(body.t),
      };
    return {
      dedupKey: String(body?.id ?? ''),
      eventType: body?.type === APPLICATION_COMMAND ? 'INTERACTION_CREATE' : `interaction.${body?.type ?? 'unknown'}`,
    };
  },
  openapi: {
    label: 'Discord',
    headers: {
      'x-signature-ed25519': 'hex Ed25519 signature of timestamp + body.',
      'x-signature-timestamp': 'the signed timestamp.',
    },
    example: { summary: 'Interactions PING', value: { type: 1, id: '1234567890', application_id: '987654321' } },
  },
};
