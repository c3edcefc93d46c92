import { createPublicKey, verify as verifySignature } from 'node:crypto';
import { header, type ProviderSpec } from './types.ts';

// DER prefix of an Ed25519 SubjectPublicKeyInfo; the raw 32-byte key follows it.
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/** The tenant's secret is the Discord application's public key (64 hex characters). */
export const isDiscordPublicKey = (hex: string) => /^[0-9a-fA-F]{64}$/.test(hex);

function publicKey(hex: string) {
  return createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, Buffer.from(hex, 'hex')]), format: 'der', type: 'spki' });
}

const INTERACTION_PING = 1;

export const discord: ProviderSpec = {
  name: 'discord',
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
    // Interactions endpoint PING (type 1) wants {"type":1}; the Webhook Events PING (type 0) wants 204.
    if (body?.type === INTERACTION_PING && !body?.t && !body?.event) return { status: 200, body: { type: 1 } };
    if (body?.type === 0 && !body?.t && !body?.event) return { status: 204, body: null };
    return null;
  },
  describe: (body) => {
    // Webhook Events carry no id of their own: the empty key makes the inbox key them by body hash.
    if (body?.event?.type) return { dedupKey: '', eventType: String(body.event.type) };
    // Interactions carry `id`; gateway dispatches relayed by a bot carry `t` and the object's id in `d`.
    if (body?.t)
      return {
        dedupKey: `${body.t}:${body.d?.id ?? body.d?.message_id ?? body.s ?? ''}:${body.d?.user_id ?? body.d?.user?.id ?? ''}`,
        eventType: String(body.t),
      };
    return {
      dedupKey: String(body?.id ?? ''),
      eventType: body?.type === 2 ? 'INTERACTION_CREATE' : `interaction.${body?.type ?? 'unknown'}`,
    };
  },
};
