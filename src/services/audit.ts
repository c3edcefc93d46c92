import type { Prisma } from '../generated/prisma/client.ts';
import type { Db } from '../db/prisma.ts';
import { onPrisma, type Sql } from '../db/sql.ts';

/** Who made a change: a signed-in user, an API key, or the operator at the command line. */
export interface Actor {
  tenantId: string;
  type: 'user' | 'api_key' | 'operator';
  id: string | null;
  /** The socket's address; null for the operator. */
  clientAddress: string | null;
  requestId: string | null;
}

/** The audited actions; a name is `<what>.<what happened>`, stable once released (receivers filter on it). */
export const AUDIT_ACTIONS = [
  'session.signed_in',
  'session.sign_in_failed',
  'session.signed_out',
  'user.sessions_revoked',
  'workspace.sessions_revoked',
  'user.created',
  'user.role_changed',
  'user.removed',
  'api_key.created',
  'api_key.rotated',
  'api_key.revoked',
  'webhook_endpoint.created',
  'webhook_endpoint.updated',
  'webhook_endpoint.deleted',
  'webhook_endpoint.secret_rotated',
  'webhook_endpoint.tested',
  'webhook_endpoint.replayed',
  'webhook_delivery.resent',
  'inbound_secret.set',
  'scoring_weights.changed',
  'churn_model.trained',
  'churn_model.activated',
  'churn_model.reset',
  'customer.erased',
  'data.exported',
  'retention.changed',
  'workspace.deletion_scheduled',
  'workspace.deletion_cancelled',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export interface AuditEntry {
  action: AuditAction;
  targetType?: string | null;
  targetId?: string | null;
  /** `{ field: { from, to } }` for edits, or facts of the action. Never a secret: callers pass only what may be shown. */
  changes?: Record<string, unknown>;
}

/** The operator's actor: the command line has no user, key or socket behind it. */
export const operator = (tenantId: string): Actor => ({ tenantId, type: 'operator', id: null, clientAddress: null, requestId: null });

/** The fields of `after` whose values differ from `before`, as `{ field: { from, to } }`. */
export function changedFields<T extends Record<string, unknown>>(
  before: T,
  after: Partial<T>,
): Record<string, { from: unknown; to: unknown }> {
  const out: Record<string, { from: unknown; to: unknown }> = {};
  for (const [field, to] of Object.entries(after)) {
    if (to === undefined) continue;
    const from = before[field];
    if (JSON.stringify(from) !== JSON.stringify(to)) out[field] = { from: from ?? null, to: to ?? null };
  }
  return out;
}

/**
 * Records an audit event in the caller's transaction, so it exists exactly when the change does. Plain SQL,
 * since both kinds of transaction write it: Prisma's (through `onPrisma`) and the pipeline's pg ones. The actor's
 * label is what the user or key is called now, so the log still reads after it is gone.
 */
export async function recordAudit(sql: Sql, actor: Actor, entry: AuditEntry): Promise<void> {
  await sql.query(
    `INSERT INTO audit_events (id, tenant_id, actor_type, actor_id, actor_label, client_address, request_id, action, target_type, target_id, changes)
     SELECT gen_random_uuid(), $1::uuid, $2, $3::uuid,
            CASE $2 WHEN 'user' THEN (SELECT email FROM users WHERE id = $3::uuid)
                    WHEN 'api_key' THEN (SELECT name || ' (' || prefix || '…)' FROM api_keys WHERE id = $3::uuid)
                    ELSE 'operator' END,
            $4, $5, $6, $7, $8, $9::jsonb`,
    [
      actor.tenantId,
      actor.type,
      actor.id,
      actor.clientAddress,
      actor.requestId,
      entry.action,
      entry.targetType ?? null,
      entry.targetId ?? null,
      JSON.stringify(entry.changes ?? {}),
    ],
  );
}

export interface AuditFilter {
  tenantId: string;
  action?: string | null;
  actorId?: string | null;
  targetId?: string | null;
  since?: Date | null;
  until?: Date | null;
}

/** The audit log as owners and admins read it (Prisma: the API writes and reads it a row at a time). */
export function createAuditService(deps: { prisma: Db }) {
  return {
    record: (actor: Actor, entry: AuditEntry) => recordAudit(onPrisma(deps.prisma), actor, entry),
    /** The filter as a Prisma condition, for the GraphQL connection's planned read. */
    where(f: AuditFilter): Prisma.AuditEventWhereInput {
      return {
        tenantId: f.tenantId,
        ...(f.action ? { action: f.action } : {}),
        ...(f.actorId ? { actorId: f.actorId } : {}),
        ...(f.targetId ? { targetId: f.targetId } : {}),
        ...(f.since || f.until ? { occurredAt: { ...(f.since ? { gte: f.since } : {}), ...(f.until ? { lt: f.until } : {}) } } : {}),
      };
    },
  };
}

export type AuditService = ReturnType<typeof createAuditService>;
