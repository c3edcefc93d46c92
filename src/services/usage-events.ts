import { createHash } from 'node:crypto';
import type pg from 'pg';
import { inTransaction, onPg } from '../db/sql.ts';
import { DomainError, validationFailed } from '../errors.ts';
import { isUuid } from '../uuid.ts';
import { claimIdempotencyKey } from './idempotency-keys.ts';
import { recordSignals, type SignalInput } from '../scoring/signals.ts';
import { customerRows } from './customer-rows.ts';
import { PG, pgCode } from '../db/pg-errors.ts';

export interface UsageEventInput {
  customerId?: string | null;
  externalId?: string | null;
  event?: string | null;
  timestamp?: string | null;
  properties?: unknown;
  userId?: string | null;
}

export interface ItemError {
  index: number;
  code: 'validation_failed' | 'not_found';
  message: string;
}

export interface UsageEventsResult {
  accepted: number;
  errors: ItemError[];
}

export const MAX_BATCH = 500;
export const MAX_IDEMPOTENCY_KEY = 255;
const BACKFILL_MS = 90 * 86_400_000;
const FUTURE_SKEW_MS = 5 * 60_000;
const EVENT_NAME = /^[A-Za-z0-9][\w.:/-]{0,199}$/;
const MAX_PROPERTIES_BYTES = 8192;

type Checked = { ok: true; at: Date } | { ok: false; error: ItemError };

function check(e: UsageEventInput, index: number, now: number): Checked {
  const fail = (message: string, code: ItemError['code'] = 'validation_failed'): Checked => ({
    ok: false,
    error: { index, code, message },
  });
  if (!e.event || !EVENT_NAME.test(e.event)) return fail('event: required, 1-200 characters of letters, digits and . _ : / -');
  if (Boolean(e.customerId) === Boolean(e.externalId)) return fail('give exactly one of customer_id and external_id');
  if (e.customerId && !isUuid(e.customerId)) return fail('customer_id: must be a UUID');
  if (e.properties !== undefined && e.properties !== null && (typeof e.properties !== 'object' || Array.isArray(e.properties))) {
    return fail('properties: must be an object');
  }
  if (e.properties && Buffer.byteLength(JSON.stringify(e.properties)) > MAX_PROPERTIES_BYTES)
    return fail(`properties: at most ${MAX_PROPERTIES_BYTES} bytes`);
  if (e.userId !== undefined && e.userId !== null && (typeof e.userId !== 'string' || e.userId.length > 200))
    return fail('user_id: at most 200 characters');
  const at = e.timestamp ? new Date(e.timestamp) : new Date(now);
  if (e.timestamp && (Number.isNaN(at.getTime()) || !/^\d{4}-\d{2}-\d{2}T/.test(e.timestamp)))
    return fail('timestamp: must be an ISO 8601 date-time');
  if (at.getTime() > now + FUTURE_SKEW_MS) return fail('timestamp: more than 5 minutes in the future');
  if (at.getTime() < now - BACKFILL_MS) return fail('timestamp: more than 90 days old');
  return { ok: true, at };
}

/**
 * Product usage events (docs/decisions.md §7), recorded as `usage.event` signals. A batch keeps what is valid
 * and lists the rest by index; a single event that fails is an error of the request. With an
 * Idempotency-Key, a repeated batch answers the first answer and records nothing again.
 */
export async function recordUsageEvents(
  pool: pg.Pool,
  tenantId: string,
  events: UsageEventInput[],
  opts: { idempotencyKey?: string | null; now?: number } = {},
): Promise<UsageEventsResult> {
  // Customers are looked up before the insert: one erased in between fails the insert on its foreign key,
  // and nothing was stored. Once more, its events are then not_found like any unknown customer's.
  for (let attempt = 1; ; attempt++) {
    try {
      return await recordOnce(pool, tenantId, events, opts);
    } catch (e) {
      if (attempt >= 3 || pgCode(e) !== PG.foreignKeyViolation) throw e;
    }
  }
}

async function recordOnce(
  pool: pg.Pool,
  tenantId: string,
  events: UsageEventInput[],
  opts: { idempotencyKey?: string | null; now?: number },
): Promise<UsageEventsResult> {
  if (events.length < 1 || events.length > MAX_BATCH)
    throw validationFailed([{ path: 'events', message: `send 1 to ${MAX_BATCH} events` }]);
  if (opts.idempotencyKey && opts.idempotencyKey.length > MAX_IDEMPOTENCY_KEY) {
    throw validationFailed([{ path: 'idempotencyKey', message: `must be at most ${MAX_IDEMPOTENCY_KEY} characters` }]);
  }
  const now = opts.now ?? Date.now();
  const checked = events.map((e, i) => check(e, i, now));

  const ids = events.flatMap((e, i) => (checked[i]!.ok && e.customerId ? [e.customerId.toLowerCase()] : []));
  const externalIds = events.flatMap((e, i) => (checked[i]!.ok && e.externalId ? [e.externalId] : []));
  // Plain SQL on the shared pool, as the rest of the ingestion path: this is a hot path (bench/events.ts).
  const customers = await customerRows.byIdsOrExternalIds(onPg(pool), tenantId, ids, externalIds);
  const byId = new Set(customers.map((c) => c.id));
  const byExternal = new Map(customers.filter((c) => c.external_id).map((c) => [c.external_id!, c.id]));

  const errors: ItemError[] = [];
  const rows: SignalInput[] = [];
  for (const [i, e] of events.entries()) {
    const c = checked[i]!;
    if (!c.ok) {
      errors.push(c.error);
      continue;
    }
    const customerId = e.customerId
      ? byId.has(e.customerId.toLowerCase())
        ? e.customerId.toLowerCase()
        : null
      : (byExternal.get(e.externalId!) ?? null);
    if (!customerId) {
      errors.push({
        index: i,
        code: 'not_found',
        message: e.customerId ? `customer ${e.customerId} was not found` : `no customer has external_id ${e.externalId}`,
      });
      continue;
    }
    rows.push({
      tenantId,
      customerId,
      source: 'api',
      kind: 'usage.event',
      occurredAt: c.at,
      attributes: { event: e.event, properties: e.properties ?? {}, user_id: e.userId ?? null },
    });
  }

  if (events.length === 1 && errors[0]) {
    const [err] = errors;
    throw err.code === 'not_found'
      ? new DomainError('not_found', `${err.message[0]!.toUpperCase()}${err.message.slice(1)}.`)
      : validationFailed([{ path: 'events.0', message: err.message }]);
  }

  const result: UsageEventsResult = { accepted: rows.length, errors };
  if (!opts.idempotencyKey) {
    await recordSignals(onPg(pool), rows);
    return result;
  }
  const requestHash = createHash('sha256').update(JSON.stringify(events)).digest('hex');
  return inTransaction(pool, async (sql) => {
    const earlier = await claimIdempotencyKey(sql, { tenantId, key: opts.idempotencyKey!, requestHash, response: result });
    if (!earlier.claimed) {
      if (earlier.requestHash !== requestHash)
        throw new DomainError('conflict', 'This Idempotency-Key was used with a different request body.');
      return earlier.response;
    }
    await recordSignals(sql, rows);
    return result;
  });
}

/** The events API's side of ingestion, on the shared pool. */
export function createUsageEventService(pool: pg.Pool) {
  return {
    record: (tenantId: string, events: UsageEventInput[], opts: { idempotencyKey?: string | null } = {}) =>
      recordUsageEvents(pool, tenantId, events, opts),
  };
}

export type UsageEventService = ReturnType<typeof createUsageEventService>;
