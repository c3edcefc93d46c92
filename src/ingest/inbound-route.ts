import { Transform, type Readable } from 'node:stream';
import { LRUCache } from 'lru-cache';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type FailureBudget, tooManyAttempts } from '../auth/attempt-counter.ts';
import type { Db } from '../db/prisma.ts';
import { DomainError, validationFailed } from '../errors.ts';
import { jsonContentTypeRefusal } from '../http/media-type.ts';
import { isUuid } from '../uuid.ts';
import { problemResponses } from '../http/openapi.ts';
import { parseEventJson } from './event-json.ts';
import * as doc from './inbound-openapi.ts';
import type { Inbox } from './inbox.ts';
import { PROVIDER_SPECS } from './providers/index.ts';
import { isProvider, MAX_DEDUP_KEY_BYTES } from './providers/types.ts';
import { hexEqual } from './providers/hmac.ts';
import type { InboundSecretStore } from '../services/integrations.ts';
import type { VerificationBudget } from './verification-budget.ts';
import { inboundEvents } from '../runtime/metrics.ts';
import { annotateActiveSpan } from '../runtime/trace-context.ts';

export interface InboundDeps {
  prisma: Db;
  secrets: InboundSecretStore;
  inbox: Inbox;
  bodyLimit: number;
  cacheMs: number;
  /** Per-address budget of lookups for tenants that do not exist. */
  unknownTenants: FailureBudget;
  /** Budgets of failed signature checks at the addresses of tenants that exist (verification-budget.ts). */
  badSignatures: VerificationBudget;
  now?: () => number;
}

// Long enough to absorb a flood of one made-up address, short enough that a new tenant is reachable at once in practice.
const UNKNOWN_TENANT_TTL_MS = 5_000;
// How long a tenant found to exist stays exempt from its sender's budget of unknown addresses.
const SEEN_TENANT_TTL_MS = 3_600_000;

const PREFIX = '/api/v1/webhooks/in/';
/** Whether an OpenAPI path is one of these routes (they pass no rate limiter). */
export const isInboundPath = (path: string) => path.startsWith(PREFIX);

// The handler checks every part itself (see inbound-openapi.ts): the schemas are documentation only.
const documentedOnly = () => () => true;

const notFound = () => new DomainError('not_found', 'No such inbound webhook address: check the provider name and tenant id.');
const invalidSignature = (provider: string) =>
  new DomainError('invalid_signature', `The ${provider} signature is missing, does not match this tenant's secret, or is too old.`);
const tooLarge = (provider: string, limit: number) =>
  new DomainError('payload_too_large', `A ${provider} body may be at most ${limit} bytes.`);

/**
 * The body as it arrives, refused with `error` once more than `limit` bytes have come: a body is never
 * read past what its provider can send. The rest is left unread.
 */
function capped(payload: Readable, limit: number, error: () => Error): Readable {
  let received = 0;
  const out = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      received += chunk.length;
      if (received <= limit) return callback(null, chunk);
      payload.unpipe(out);
      callback(error());
    },
  });
  payload.on('error', (err) => out.destroy(err));
  return payload.pipe(out);
}

/**
 * POST /api/v1/webhooks/in/{provider}/{tenant_id}: verify over the raw bytes, answer handshakes,
 * store the event, publish it with a confirm, then answer 202. Nothing is stored for a request that
 * fails any check. Not rate limited, and open to every plan (docs/decisions.md §4).
 */
export async function inboundRoutes(app: FastifyInstance, deps: InboundDeps) {
  const now = deps.now ?? (() => Math.floor(Date.now() / 1000));
  // Known tenants are remembered for the key cache's time, with the moment their address closes (when a
  // scheduled deletion falls due; docs/data-lifecycle.md), unknown ones for a few seconds; an address that
  // keeps naming tenants that do not exist is refused before it costs a lookup.
  const tenants = new LRUCache<string, number | false>({ max: 50_000, ttl: Math.max(deps.cacheMs, 1) });
  // A provider sends every tenant's events from the same few addresses, and anyone can point a provider
  // at made-up addresses of ours: an address's budget of unknown tenants must not cost the tenants that
  // exist. So it holds back only lookups of ids not found to exist within the hour.
  const seen = new LRUCache<string, true>({ max: 100_000, ttl: SEEN_TENANT_TTL_MS });
  const tenantExists = async (id: string, address: string) => {
    let closesAt = tenants.get(id);
    if (closesAt === undefined) {
      const wait = seen.has(id) ? 0 : deps.unknownTenants.waitFor(address);
      if (wait > 0) throw tooManyAttempts('Too many requests for inbound addresses that do not exist.', wait);
      const row = await deps.prisma.tenant.findUnique({ where: { id }, select: { deletionDueAt: true } });
      closesAt = row ? (row.deletionDueAt?.getTime() ?? Infinity) : false;
      if (row && deps.cacheMs > 0) tenants.set(id, closesAt);
      if (row) seen.set(id, true);
      else {
        seen.delete(id);
        tenants.set(id, false, { ttl: UNKNOWN_TENANT_TTL_MS });
        await deps.unknownTenants.fail(address);
      }
    }
    return closesAt !== false && Date.now() < closesAt;
  };

  // The raw bytes are what providers sign: keep them, and parse only after the signature holds.
  // The Content-Type rule is the API's; the bytes' encoding is the provider's business, not refused here.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: deps.bodyLimit }, (req, body, done) => {
    const refusal = jsonContentTypeRefusal(req.headers['content-type']);
    done(refusal ? new DomainError('unsupported_media_type', refusal) : null, body);
  });

  async function addressOf(provider: string, tenantId: string, client: string) {
    if (!isProvider(provider) || !isUuid(tenantId) || !(await tenantExists(tenantId.toLowerCase(), client))) throw notFound();
    const active = await deps.secrets.active(tenantId.toLowerCase(), provider);
    if (!active) {
      throw new DomainError(
        'inbound_secret_not_set',
        `This tenant has not generated a signing secret for ${provider}: generate one on the ${provider} integration card.`,
      );
    }
    return { provider, tenantId: tenantId.toLowerCase(), active };
  }

  // Every answer counted by provider and outcome; a refusal by its problem code (an admission refusal,
  // which raises nothing here, by its status).
  const outcomes = new WeakMap<FastifyRequest, 'accepted' | 'duplicate'>();
  const refusals = new WeakMap<FastifyRequest, string>();
  app.addHook('onError', (req, _reply, error, done) => {
    if (error instanceof DomainError) refusals.set(req, error.code);
    done();
  });
  app.addHook('onResponse', (req, reply, done) => {
    const named = (req.params as { provider?: string } | undefined)?.provider;
    const provider = named === undefined ? 'meta_ads' : isProvider(named) ? named : 'unknown';
    const outcome = outcomes.get(req) ?? (reply.statusCode < 400 ? 'answered' : 'refused');
    const reason = outcome === 'refused' ? (refusals.get(req) ?? `status_${reply.statusCode}`) : 'none';
    inboundEvents.inc({ provider, outcome, reason });
    done();
  });

  type Address = Awaited<ReturnType<typeof addressOf>>;
  // The address each request was found to be, before its body was read.
  const addresses = new WeakMap<FastifyRequest, Address>();

  /**
   * Everything that can refuse a request before its body is read, in order: the address (404, 403), the
   * budgets of failed signatures (429), a declared length over the provider's limit (413), a signature
   * header that could not verify (401, counted as a failure); then the body is read up to that limit. The
   * connection stays open for the answer: a client still uploading reads it rather than a reset.
   */
  async function beforeBody(
    req: FastifyRequest<{ Params: { provider: string; tenant_id: string } }>,
    _reply: FastifyReply,
    payload: Readable,
  ) {
    const address = await addressOf(req.params.provider, req.params.tenant_id, req.ip);
    const spec = PROVIDER_SPECS[address.provider];
    const key = `${address.provider}/${address.tenantId}`;
    const wait = deps.badSignatures.waitFor(req.ip, key);
    if (wait > 0) throw tooManyAttempts('Too many requests whose signature did not verify at this address.', wait);
    const limit = Math.min(spec.maxBodyBytes ?? Infinity, deps.bodyLimit);
    if (Number(req.headers['content-length']) > limit) throw tooLarge(address.provider, limit);
    if (!spec.signed(req.headers, now())) {
      await deps.badSignatures.failed(req.ip, key);
      throw invalidSignature(address.provider);
    }
    addresses.set(req, address);
    return capped(payload, limit, () => tooLarge(address.provider, limit));
  }

  app.post<{ Params: { provider: string; tenant_id: string } }>(
    '/webhooks/in/:provider/:tenant_id',
    {
      preParsing: beforeBody,
      validatorCompiler: documentedOnly,
      schema: {
        tags: ['Inbound webhooks'],
        operationId: 'receiveInboundWebhook',
        summary: 'Receive a provider webhook',
        description:
          'Signed by the provider with the tenant’s inbound secret. Answers 202 `{received, id, duplicate: false}` once the event is stored and queued, 200 `{duplicate: true}` for a replay, the provider’s handshake answer for set-up requests, and, for Discord, the answer Discord expects (204 for Webhook Events, an interaction response for Interactions). An unknown provider or tenant is 404, a missing or wrong signature 401, a provider without a generated secret 403, a body larger than the provider’s limit 413 (refused before it is read whole), and a sender whose signatures keep failing at the address 429 with Retry-After. Not rate limited otherwise.',
        security: [],
        params: doc.inboundParams,
        headers: doc.signatureHeaders,
        body: doc.inboundBody,
        response: { ...doc.inboundResponses, ...problemResponses(400, 401, 403, 404, 413, 415, 429) },
      },
    },
    async (req, reply) => {
      // Found by the preParsing hook before the body was read, which throws for an address it does not find.
      const { provider, tenantId, active } = addresses.get(req)!;
      annotateActiveSpan({ 'tenant.id': tenantId, 'chs.provider': provider });
      const spec = PROVIDER_SPECS[provider];
      const rawBody = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const inbound = { headers: req.headers, rawBody, now: now() };
      const key = `${provider}/${tenantId}`;
      if (!spec.verify(inbound, active.secrets)) {
        await deps.badSignatures.failed(req.ip, key);
        throw invalidSignature(provider);
      }
      deps.badSignatures.verified(req.ip, key);
      let body: unknown;
      try {
        body = parseEventJson(rawBody.toString('utf8'));
      } catch {
        throw new DomainError('validation_failed', 'The body is not valid JSON.', {
          errors: [{ path: 'body', message: 'is not valid JSON' }],
        });
      }
      const handshake = spec.handshake?.(body, inbound);
      if (handshake) return reply.code(handshake.status).send(handshake.body ?? undefined);
      // Values its normalizer could not store (numbers, times, ids) would fail the transaction applying the
      // event, and every event beside it: refused here, where the sender learns which field and why.
      const outOfRange = spec.rangeErrors?.(body) ?? [];
      if (outOfRange.length > 0) throw validationFailed(outOfRange);
      const { dedupKey, eventType } = spec.describe(body, inbound);
      if (Buffer.byteLength(dedupKey) > MAX_DEDUP_KEY_BYTES) {
        const field = spec.dedupKeyField ?? 'id';
        throw new DomainError(
          'validation_failed',
          `The event's ${field} is longer than ${MAX_DEDUP_KEY_BYTES} bytes; it cannot be stored.`,
          {
            errors: [{ path: field, message: `is longer than ${MAX_DEDUP_KEY_BYTES} bytes` }],
          },
        );
      }
      const hashBody = spec.dedupKeySigned === false;
      const orderKey = spec.orderKeyOf?.(body) ?? null;
      const { id, duplicate } = await deps.inbox.accept({ tenantId, provider, dedupKey, eventType, rawBody, hashBody, orderKey });
      outcomes.set(req, duplicate ? 'duplicate' : 'accepted');
      // Stored first, then whatever the provider expects back instead of our receipt (Discord).
      const answer = spec.answer?.(body, inbound);
      if (answer) return reply.code(answer.status).send(answer.body ?? undefined);
      return reply.code(duplicate ? 200 : 202).send({ received: true, id, duplicate });
    },
  );

  // Meta's subscription check: echo hub.challenge when hub.verify_token is the tenant's token.
  app.get<{ Params: { tenant_id: string }; Querystring: Record<string, string | string[] | undefined> }>(
    '/webhooks/in/meta_ads/:tenant_id',
    {
      validatorCompiler: documentedOnly,
      schema: {
        tags: ['Inbound webhooks'],
        operationId: 'verifyMetaWebhook',
        summary: 'Verify a Meta webhook subscription',
        description:
          'Meta’s subscription check: echoes `hub.challenge` as text when `hub.mode` is `subscribe` and `hub.verify_token` is the tenant’s verify token; 403 otherwise, counted with the address’s failed signatures (429 with Retry-After once over budget). An unknown tenant is 404, a tenant without a Meta secret 403.',
        security: [],
        params: doc.metaParams,
        querystring: doc.metaVerificationQuery,
        response: { ...doc.metaVerificationResponse, ...problemResponses(403, 404, 429) },
      },
    },
    async (req, reply) => {
      const { tenantId, active } = await addressOf('meta_ads', req.params.tenant_id, req.ip);
      // A wrong token is a failed verification at the address, as a wrong signature is: it may be a guess.
      const key = `meta_ads/${tenantId}`;
      const wait = deps.badSignatures.waitFor(req.ip, key);
      if (wait > 0) throw tooManyAttempts('Too many requests whose verify token did not match at this address.', wait);
      const q = req.query;
      const token = q['hub.verify_token'];
      // A repeated parameter arrives as an array: it is not a token.
      if (q['hub.mode'] !== 'subscribe' || !active.verifyToken || typeof token !== 'string' || !hexEqual(token, active.verifyToken)) {
        await deps.badSignatures.failed(req.ip, key);
        throw new DomainError('forbidden', 'hub.verify_token does not match the verify token set for this tenant.');
      }
      deps.badSignatures.verified(req.ip, key);
      return reply.type('text/plain; charset=utf-8').send(typeof q['hub.challenge'] === 'string' ? q['hub.challenge'] : '');
    },
  );
}
