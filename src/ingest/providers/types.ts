import type { IncomingHttpHeaders } from 'node:http';
import type { ProviderName } from '../../contract/enums.ts';
import type { Normalizer } from '../normalizers/types.ts';

export { isProvider, type ProviderName, PROVIDERS } from '../../contract/enums.ts';

export interface InboundRequest {
  headers: IncomingHttpHeaders;
  rawBody: Buffer;
  /** Unix seconds, injectable for tests. */
  now: number;
}

export interface HandshakeReply {
  status: number;
  body: unknown;
}

export interface ProviderSpec {
  name: ProviderName;
  /** Checks the signature over the exact bytes with each candidate secret (current, then the rotated-out one). */
  verify(req: InboundRequest, secrets: string[]): boolean;
  /**
   * Whether `describe`'s dedup key is inside the signed bytes. When it is not (GitHub's delivery id is
   * a header), a captured body re-posted with a fresh id would pass the signature as a new event, so
   * the inbox also deduplicates on a hash of the body. Unset means signed.
   */
  dedupKeySigned?: boolean;
  /** A provider's set-up or liveness handshake, answered instead of being stored. */
  handshake?(body: any, req: InboundRequest): HandshakeReply | null;
  /** The answer the provider expects once the event is stored, when it is not our 202 receipt. */
  answer?(body: any, req: InboundRequest): HandshakeReply | null;
  /** The provider's own id of this event (replays carry the same) and its type. */
  describe(body: any, req: InboundRequest): { dedupKey: string; eventType: string };
  /** Turns a stored event into invoices, subscriptions, signals and outbound events (src/ingest/normalizers). */
  normalize: Normalizer;
  /** The signature headers the provider would send for `body` under `secret` at unix time `now`, to replay recorded requests. */
  sign(secret: string, body: string, now: number): Record<string, string>;
}

export const header = (h: IncomingHttpHeaders, name: string): string | undefined => {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
};

/** Replay window for schemes that sign a timestamp (Stripe, Slack). */
export const TOLERANCE_SECONDS = 300;
