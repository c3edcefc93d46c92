import { randomBytes } from 'node:crypto';
import type { Resealer } from '../crypto/reencrypt.ts';
import type { SecretBox } from '../crypto/secret-box.ts';
import type { Db } from '../db/prisma.ts';
import { DomainError, notFound, validationFailed } from '../errors.ts';
import { sequenceSubject } from '../contract/sequence-subject.ts';
import { forgetSequences } from '../outbox/events/enqueue.ts';
import { EVENT_NAMES, isEventName } from '../outbox/events/registry.ts';
import { onPrisma } from '../db/sql.ts';
import { changedFields, recordAudit, type Actor } from './audit.ts';
import { checkEndpointUrl } from '../outbox/endpoints/ssrf.ts';
import { SIGNATURE_SCHEMES } from '../contract/enums.ts';
import { Prisma } from '../generated/prisma/client.ts';
import { type Filters, filterPaths, validateFilters } from '../outbox/events/filters.ts';
import { newSigningKeyPair } from '../outbox/sender/signing.ts';
import { resetCircuit, setPacing } from '../outbox/sender/delivery-store.ts';

export const MAX_ENDPOINTS_PER_TENANT = 20;
/** The highest rate limit an endpoint can be given, in deliveries a second (docs/receiving-webhooks.md, "Rate limit"). */
export const MAX_RATE_LIMIT_PER_SECOND = 1000;
/** The lowest: one delivery every 100 seconds. */
export const MIN_RATE_LIMIT_PER_SECOND = 0.01;
export const SECRET_OVERLAP_HOURS = 24;

// Base64 after `whsec_`, as the Standard Webhooks specification serialises secrets, so its libraries read it.
const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

function validScheme(scheme: string | undefined) {
  if (scheme !== undefined && !(SIGNATURE_SCHEMES as readonly string[]).includes(scheme)) {
    throw validationFailed([{ path: 'signature_scheme', message: `must be one of: ${SIGNATURE_SCHEMES.join(', ')}` }]);
  }
}

/** Filters checked against the endpoint's events; null when there are none. */
function checkedFilters(filters: unknown, events: string[]): Filters | null {
  const valid = filters === null || filters === undefined ? {} : validateFilters(filters, events);
  return Object.keys(valid).length ? valid : null;
}

/** The endpoint's filters and their compiled predicates, as stored. */
const filterColumns = (filters: Filters | null) =>
  filters ? { filters, filterPaths: filterPaths(filters) } : { filters: Prisma.DbNull, filterPaths: Prisma.DbNull };

/** A new key pair, the private half sealed. */
function sealedKeyPair(box: SecretBox) {
  const { signingKey, publicKey } = newSigningKeyPair();
  return { signingKey: box.seal(signingKey), publicKey };
}

/** A number of deliveries a second within the bounds, or null for none. */
function validRate(rate: unknown) {
  if (rate === undefined || rate === null) return;
  if (typeof rate !== 'number' || !Number.isFinite(rate) || rate < MIN_RATE_LIMIT_PER_SECOND || rate > MAX_RATE_LIMIT_PER_SECOND) {
    throw validationFailed([
      {
        path: 'rate_limit_per_second',
        message: `must be a number of deliveries a second from ${MIN_RATE_LIMIT_PER_SECOND} to ${MAX_RATE_LIMIT_PER_SECOND}, or null for no limit`,
      },
    ]);
  }
}

async function validUrl(url: string, allowPrivate: boolean) {
  const rule = await checkEndpointUrl(url, allowPrivate);
  if (!rule.ok) throw validationFailed([{ path: 'url', message: rule.reason! }]);
}

function validEvents(events: string[]) {
  const unknown = events.filter((e) => !isEventName(e));
  if (events.length === 0) throw validationFailed([{ path: 'events', message: `choose at least one of: ${EVENT_NAMES.join(', ')}` }]);
  if (unknown.length)
    throw validationFailed([
      { path: 'events', message: `unknown event ${unknown.join(', ')}; valid events are: ${EVENT_NAMES.join(', ')}` },
    ]);
}

/**
 * The tenant's webhook endpoints (Prisma: only the API writes them, a row at a time; the deliverer's
 * bookkeeping of their health is plain SQL in src/outbox).
 */
export function createWebhookEndpointService(db: Db, box: SecretBox, opts: { allowPrivateTargets: boolean }) {
  /** The tenant's endpoint, or 404; `query` adds what a GraphQL selection reads with it (its relations). */
  const owned = async (tenantId: string, id: string, query: { include?: object; select?: object } = {}) => {
    const e = await db.webhookEndpoint.findFirst({ ...(query as object), where: { id, tenantId } });
    if (!e) throw notFound(`Webhook endpoint ${id}`);
    return e;
  };
  return {
    owned,
    async create(
      actor: Actor,
      input: {
        url: string;
        events: string[];
        description?: string | null;
        ordered?: boolean;
        signatureScheme?: string;
        filters?: unknown;
        rateLimitPerSecond?: number | null;
      },
    ) {
      const { tenantId } = actor;
      await validUrl(input.url, opts.allowPrivateTargets);
      validEvents(input.events);
      validScheme(input.signatureScheme);
      validRate(input.rateLimitPerSecond);
      const filters = checkedFilters(input.filters, input.events);
      const secret = newSecret();
      // The count and the insert share a transaction-scoped lock so two requests cannot both make the 21st.
      const endpoint = await db.$transaction(async (tx) => {
        await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`endpoints:${tenantId}`}, 0))`;
        if ((await tx.webhookEndpoint.count({ where: { tenantId } })) >= MAX_ENDPOINTS_PER_TENANT) {
          throw new DomainError('limit_reached', `A tenant can have at most ${MAX_ENDPOINTS_PER_TENANT} webhook endpoints.`);
        }
        const created = await tx.webhookEndpoint.create({
          data: {
            tenantId,
            url: input.url,
            events: [...new Set(input.events)],
            description: input.description ?? null,
            ordered: input.ordered ?? false,
            signatureScheme: input.signatureScheme ?? 'v0',
            rateLimitPerSecond: input.rateLimitPerSecond ?? null,
            ...filterColumns(filters),
            secret: box.seal(secret),
            ...sealedKeyPair(box),
          },
        });
        if (created.rateLimitPerSecond !== null) await setPacing(onPrisma(tx), created.id, true);
        await recordAudit(onPrisma(tx), actor, {
          action: 'webhook_endpoint.created',
          targetType: 'webhook_endpoint',
          targetId: created.id,
          changes: {
            url: created.url,
            events: created.events,
            description: created.description,
            ordered: created.ordered,
            signatureScheme: created.signatureScheme,
            filters: created.filters,
            rateLimitPerSecond: created.rateLimitPerSecond,
          },
        });
        return created;
      });
      return { endpoint, secret };
    },
    async update(
      actor: Actor,
      id: string,
      input: {
        url?: string;
        events?: string[];
        description?: string | null;
        enabled?: boolean;
        ordered?: boolean;
        signatureScheme?: string;
        /** null removes every filter. */
        filters?: unknown;
        /** null removes the limit. */
        rateLimitPerSecond?: number | null;
      },
    ) {
      const before = await owned(actor.tenantId, id);
      // Enabling or disabling closes an open circuit breaker: the audit log says so.
      const circuit =
        input.enabled === undefined
          ? null
          : await db.webhookEndpointCircuit.findUnique({ where: { endpointId: id }, select: { state: true } });
      const breaker = circuit && circuit.state !== 'closed' ? circuit.state : null;
      if (input.url !== undefined) await validUrl(input.url, opts.allowPrivateTargets);
      if (input.events !== undefined) validEvents(input.events);
      validScheme(input.signatureScheme);
      validRate(input.rateLimitPerSecond);
      const rateChanged = input.rateLimitPerSecond !== undefined && input.rateLimitPerSecond !== before.rateLimitPerSecond;
      // The filters kept must name only events still subscribed, whichever of the two changes.
      const filters =
        input.filters !== undefined || input.events !== undefined
          ? checkedFilters(input.filters !== undefined ? input.filters : before.filters, input.events ?? before.events)
          : undefined;
      const events = input.events && [...new Set(input.events)];
      return db.$transaction(async (tx) => {
        await recordAudit(onPrisma(tx), actor, {
          action: 'webhook_endpoint.updated',
          targetType: 'webhook_endpoint',
          targetId: id,
          changes: {
            ...changedFields(before, {
              url: input.url,
              events,
              description: input.description,
              enabled: input.enabled,
              ordered: input.ordered,
              signatureScheme: input.signatureScheme,
              filters: input.filters === undefined ? undefined : filters,
              rateLimitPerSecond: input.rateLimitPerSecond,
            }),
            ...(breaker ? { circuit: { from: breaker, to: 'closed' } } : {}),
          },
        });
        const updated = await tx.webhookEndpoint.update({
          where: { id },
          data: {
            ...(input.url !== undefined ? { url: input.url } : {}),
            ...(input.events !== undefined ? { events: [...new Set(input.events)] } : {}),
            ...(input.description !== undefined ? { description: input.description } : {}),
            ...(input.ordered !== undefined ? { ordered: input.ordered } : {}),
            ...(input.signatureScheme !== undefined ? { signatureScheme: input.signatureScheme } : {}),
            ...(filters !== undefined ? filterColumns(filters) : {}),
            // An endpoint made before key pairs were kept gets its own when it first needs one.
            ...(input.signatureScheme === 'standard' && !before.signingKey ? sealedKeyPair(box) : {}),
            // Re-enabling clears the reason and gives the endpoint a fresh five days.
            ...(input.enabled === true ? { enabled: true, disabledReason: null, failingSince: null } : {}),
            ...(input.enabled === false ? { enabled: false, disabledReason: 'disabled by the tenant' } : {}),
            ...(input.rateLimitPerSecond !== undefined ? { rateLimitPerSecond: input.rateLimitPerSecond } : {}),
          },
        });
        // The endpoint's row is held now; its deliveries and its budget row go after it (docs/concurrency.md).
        if (rateChanged) await setPacing(onPrisma(tx), id, input.rateLimitPerSecond !== null);
        // Enabling or disabling closes its circuit breaker, the breaker's row last: what the breaker held goes out
        // (enabled: the tenant says the receiver is back) or is failed as "endpoint disabled" (disabled), as every
        // pending delivery of a disabled endpoint is.
        if (input.enabled !== undefined) await resetCircuit(onPrisma(tx), id);
        return updated;
      });
    },
    async remove(actor: Actor, id: string) {
      const e = await owned(actor.tenantId, id);
      await db.$transaction(async (tx) => {
        // The endpoint's row, then its deliveries in order (they go with it, by a cascade), as every
        // writer of both takes them (docs/concurrency.md); a delivery being recorded now is waited for.
        await tx.$queryRaw`SELECT 1 AS locked FROM webhook_endpoints WHERE id = ${id}::uuid FOR UPDATE`;
        await tx.$queryRaw`SELECT 1 AS locked FROM webhook_deliveries WHERE endpoint_id = ${id}::uuid ORDER BY id FOR UPDATE`;
        await tx.webhookEndpoint.delete({ where: { id } });
        await recordAudit(onPrisma(tx), actor, {
          action: 'webhook_endpoint.deleted',
          targetType: 'webhook_endpoint',
          targetId: id,
          changes: { url: e.url },
        });
        // The numbering of its endpoint.disabled events goes with it, last (the counters are the last lock).
        await forgetSequences(onPrisma(tx), actor.tenantId, [sequenceSubject('endpoint', id)]);
      });
    },
    async rotateSecret(actor: Actor, id: string) {
      const e = await owned(actor.tenantId, id);
      const secret = newSecret();
      const previousExpiresAt = new Date(Date.now() + SECRET_OVERLAP_HOURS * 3600_000);
      const endpoint = await db.$transaction(async (tx) => {
        await recordAudit(onPrisma(tx), actor, {
          action: 'webhook_endpoint.secret_rotated',
          targetType: 'webhook_endpoint',
          targetId: id,
          changes: { previous_secret_valid_until: previousExpiresAt.toISOString() },
        });
        return tx.webhookEndpoint.update({
          where: { id },
          data: {
            secret: box.seal(secret),
            previousSecret: e.secret,
            previousExpiresAt,
            // The key pair rotates with the secret, the one rotated out signing beside the new for as long.
            ...sealedKeyPair(box),
            previousSigningKey: e.signingKey,
            previousPublicKey: e.publicKey,
          },
        });
      });
      return { endpoint, secret };
    },
  };
}

export type WebhookEndpointService = ReturnType<typeof createWebhookEndpointService>;

/**
 * Re-seals, row by row, every endpoint secret and signing key an older key sealed (the operator's
 * `secrets:reencrypt`). Safe while the service runs, and to run again. Answers how many rows it read.
 */
export async function resealEndpointSecrets(db: Db, resealer: Resealer): Promise<number> {
  const rows = await db.webhookEndpoint.findMany({
    select: { id: true, secret: true, previousSecret: true, signingKey: true, previousSigningKey: true },
  });
  for (const row of rows) {
    const next = {
      secret: resealer.reseal(row.secret)!,
      previousSecret: resealer.reseal(row.previousSecret),
      signingKey: resealer.reseal(row.signingKey),
      previousSigningKey: resealer.reseal(row.previousSigningKey),
    };
    if ((Object.keys(next) as (keyof typeof next)[]).some((c) => next[c] !== row[c])) {
      // Only if unchanged since read: a rotation meanwhile already sealed with the current key.
      await db.webhookEndpoint.updateMany({ where: { id: row.id, secret: row.secret }, data: next });
    }
  }
  return rows.length;
}
