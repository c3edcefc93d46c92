import type { IncomingHttpHeaders } from 'node:http';
import type { ProviderName } from '../../contract/enums.ts';
import { type FieldError, validationFailed } from '../../errors.ts';
import type { Normalizer, StoredEvent } from '../normalizers/types.ts';
import type { Sql } from '../../db/sql.ts';
import type { InboundCommand } from '../../services/inbound-commands.ts';

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
   * Whether the headers carry a signature `verify` could accept (present, well formed, its timestamp within
   * the window): checked before the body is read, so a request that cannot verify costs no read of its body.
   */
  signed(headers: IncomingHttpHeaders, now: number): boolean;
  /**
   * The largest body accepted from this provider, in bytes: what its largest real deliveries need, with room
   * (docs/inbound-webhooks.md, "Limits"). A larger one is refused with 413 before it is read whole. Unset, or
   * above BODY_LIMIT_BYTES: that limit.
   */
  maxBodyBytes?: number;
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
  /** Where `describe`'s dedup key comes from, as a refusal names it; unset means the body's `id`. */
  dedupKeyField?: string;
  /** The provider's own id of this event (replays carry the same) and its type. */
  describe(body: any, req: InboundRequest): { dedupKey: string; eventType: string };
  /**
   * The numbers (amounts, counts, times) and codes of the event that its normalizer would write and that
   * are out of what can be stored (normalizers/ranges.ts), each with its path in the body: such an event is
   * refused on acceptance, and one stored before is refused by its normalizer. Unset: it writes none.
   */
  rangeErrors?(body: any): FieldError[];
  /** Reads a stored event into what it asks of the domain (src/ingest/normalizers; applied by services/inbound-commands.ts). */
  normalize: Normalizer;
  /**
   * Fills in, in the event's transaction and before its commands are applied, what the event leaves out and
   * the provider's events stored beside it say (reads only). Unset: the event says everything itself.
   */
  complete?(sql: Sql, event: StoredEvent, commands: InboundCommand[]): Promise<InboundCommand[]>;
  /**
   * The keys, within the event's tenant, of every object whose rows the event's normalizer may write (an
   * invoice and its payments, a subscription, a customer account, the customer a domain stands for,
   * services/customers.ts `customerKeys`): their locks are taken, in key order, before any event of the
   * transaction is applied (db/locks.ts `lockObjects`). Unset: the provider's events write no object of
   * their own (only signals, which no one else locks).
   */
  objectsOf?(event: StoredEvent): string[];
  /**
   * The provider object an event is about, whose events are applied in the order they were accepted
   * (an invoice, a subscription, a customer account, a conversation), read from the body on acceptance.
   * Unset or null: the event may be applied beside any other (docs/inbound-webhooks.md, "Order").
   */
  orderKeyOf?(body: any): string | null;
  /** The signature headers the provider would send for `body` under `secret` at unix time `now`, to replay recorded requests. */
  sign(secret: string, body: string, now: number): Record<string, string>;
  /** How /openapi.json describes the provider's requests (src/ingest/inbound-openapi.ts). */
  openapi: {
    /** The provider's name in the descriptions. */
    label: string;
    /** Each header the checks read (lower case), with what it carries. */
    headers: Record<string, string>;
    /** One small, typical body. */
    example: { summary: string; value: Record<string, unknown> };
  };
}

export const header = (h: IncomingHttpHeaders, name: string): string | undefined => {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
};

/**
 * The longest dedup key accepted, in UTF-8 bytes: the unique index over it holds about 2.7 kB a row, so a
 * longer key could never be stored, and is refused as bad input rather than failing on every retry.
 */
export const MAX_DEDUP_KEY_BYTES = 1024;

/** Replay window for schemes that sign a timestamp (Stripe, Slack). */
export const TOLERANCE_SECONDS = 300;

/**
 * A normalizer that first refuses an event whose numbers are out of range (`rangeErrors`): such an event,
 * stored before acceptance refused it, fails on its own with the fields named, before anything is written.
 */
export function withinRanges(normalize: Normalizer, rangeErrors: (body: any) => FieldError[]): Normalizer {
  return (event) => {
    const errors = rangeErrors(event.body);
    if (errors.length > 0) throw validationFailed(errors);
    return normalize(event);
  };
}

export const KIB = 1024;
