import type pg from 'pg';
import { inTransaction, onPg, type Sql } from '../db/sql.ts';
import { DomainError, notFound, validationFailed } from '../errors.ts';
import type { Plan, Role } from '../contract/enums.ts';
import type { Db } from '../db/prisma.ts';
import { RETENTION_KEYS, RETENTION_SETTINGS, type RetentionKey } from '../contract/retention.ts';
import { RETENTION_COLUMNS } from '../lifecycle/policy.ts';
import { releaseHeldDeliveries } from '../outbox/sender/delivery-store.ts';
import { changedFields, recordAudit, type Actor } from './audit.ts';

// The workspace as a whole (docs/data-lifecycle.md): its retention settings, its users' roles, and its
// deletion with an undo window. Owners decide these; every change is in the audit log. The one module that
// writes the `tenants` and `users` rows: other services call the functions below.

export interface RetentionSettingView {
  key: RetentionKey;
  days: number;
  defaultDays: number;
  minDays: number;
  maxDays: number;
  /** Whether the tenant keeps the default. */
  isDefault: boolean;
  description: string;
}

const COLUMNS = RETENTION_KEYS.map((k) => RETENTION_COLUMNS[k]);

async function overrides(sql: Sql, tenantId: string): Promise<Record<RetentionKey, number | null>> {
  const [row] = await sql.query<Record<string, number | null>>(`SELECT ${COLUMNS.join(', ')} FROM tenants WHERE id = $1`, [tenantId]);
  if (!row) throw notFound(`Tenant ${tenantId}`);
  return Object.fromEntries(RETENTION_KEYS.map((k) => [k, row[RETENTION_COLUMNS[k]] ?? null])) as Record<RetentionKey, number | null>;
}

const view = (o: Record<RetentionKey, number | null>): RetentionSettingView[] =>
  RETENTION_KEYS.map((key) => {
    const s = RETENTION_SETTINGS[key];
    return {
      key,
      days: o[key] ?? s.days,
      defaultDays: s.days,
      minDays: s.min,
      maxDays: s.max,
      isDefault: o[key] === null,
      description: s.what,
    };
  });

/** A new tenant. */
export function insertTenant(db: Pick<Db, 'tenant'>, input: { name: string; plan: Plan }) {
  return db.tenant.create({ data: { name: input.name, plan: input.plan } });
}

/** Which churn model scores the tenant's customers; null puts the default coefficients back. */
export async function setActiveChurnModel(sql: Sql, tenantId: string, modelId: string | null): Promise<void> {
  await sql.query('UPDATE tenants SET active_churn_model_id = $2, updated_at = now() WHERE id = $1', [tenantId, modelId]);
}

/** The tenant's dimension weights; null puts the defaults back. */
export async function setScoringWeights(sql: Sql, tenantId: string, weights: object | null): Promise<void> {
  await sql.query('UPDATE tenants SET scoring_weights = $2::jsonb, updated_at = now() WHERE id = $1', [
    tenantId,
    weights === null ? null : JSON.stringify(weights),
  ]);
}

/** A new user of a workspace. */
export function insertUser(db: Pick<Db, 'user'>, input: { tenantId: string; email: string; role: Role; passwordHash: string }) {
  return db.user.create({ data: input });
}

/**
 * Takes the workspace's lock on its users: role changes and removals of one workspace run one after the
 * other. Each checks that another owner remains; two at once (two owners demoting or removing each other)
 * would each see the other still an owner, and both commit.
 */
async function lockUsersOf(sql: Sql, tenantId: string) {
  // Not FOR UPDATE: that would also make every insert of the workspace's rows (which check its key) wait.
  await sql.query('SELECT 1 FROM tenants WHERE id = $1 FOR NO KEY UPDATE', [tenantId]);
}

/** Refuses to leave the workspace without an owner (the command line can act on any user). */
async function requireAnotherOwner(sql: Sql, tenantId: string, userId: string) {
  const others = await sql.query(`SELECT 1 FROM users WHERE tenant_id = $1 AND role = 'owner' AND id <> $2 LIMIT 1`, [tenantId, userId]);
  if (!others.length) throw new DomainError('conflict', 'The workspace must keep at least one owner.');
}

export function createWorkspaceService(deps: { pool: pg.Pool; deletionDelayDays: number }) {
  const { pool } = deps;
  return {
    async retention(tenantId: string): Promise<RetentionSettingView[]> {
      return view(await overrides(onPg(pool), tenantId));
    },
    /** Sets the given windows (null: back to the default); the caller has checked the bounds. */
    async setRetention(actor: Actor, input: Partial<Record<RetentionKey, number | null>>): Promise<RetentionSettingView[]> {
      return inTransaction(pool, async (sql) => {
        const before = await overrides(sql, actor.tenantId);
        const keys = RETENTION_KEYS.filter((k) => input[k] !== undefined);
        if (keys.length) {
          await sql.query(
            `UPDATE tenants SET ${keys.map((k, i) => `${RETENTION_COLUMNS[k]} = $${i + 2}`).join(', ')}, updated_at = now() WHERE id = $1`,
            [actor.tenantId, ...keys.map((k) => input[k])],
          );
        }
        const after = { ...before, ...Object.fromEntries(keys.map((k) => [k, input[k]])) } as Record<RetentionKey, number | null>;
        // Named as the tenants columns name them, the audit log's readers' words for them.
        const days = (o: Record<RetentionKey, number | null>) =>
          Object.fromEntries(RETENTION_KEYS.map((k) => [RETENTION_COLUMNS[k], o[k] ?? RETENTION_SETTINGS[k].days])) as Record<
            string,
            number
          >;
        const changes = changedFields(days(before), days(after));
        if (Object.keys(changes).length)
          await recordAudit(sql, actor, { action: 'retention.changed', targetType: 'tenant', targetId: actor.tenantId, changes });
        return view(after);
      });
    },

    /**
     * Schedules the workspace's deletion after the undo window. From now on nothing is delivered to its
     * webhook endpoints; when the window ends the worker removes everything (src/lifecycle/workspace-purge.ts).
     */
    async scheduleDeletion(actor: Actor & { id: string }, confirmName: string): Promise<void> {
      await inTransaction(pool, async (sql) => {
        const [t] = await sql.query<{ name: string; deletion_requested_at: Date | null }>(
          'SELECT name, deletion_requested_at FROM tenants WHERE id = $1 FOR NO KEY UPDATE',
          [actor.tenantId],
        );
        if (!t) throw notFound(`Tenant ${actor.tenantId}`);
        if (confirmName !== t.name) throw validationFailed([{ path: 'confirmName', message: 'must be the workspace’s name' }]);
        if (t.deletion_requested_at) throw new DomainError('conflict', 'The workspace’s deletion is already scheduled.');
        const [s] = await sql.query<{ deletion_due_at: Date }>(
          `UPDATE tenants SET deletion_requested_at = now(), deletion_due_at = now() + make_interval(days => $2), deletion_requested_by = $3, updated_at = now()
           WHERE id = $1 RETURNING deletion_due_at`,
          [actor.tenantId, deps.deletionDelayDays, actor.id],
        );
        await recordAudit(sql, actor, {
          action: 'workspace.deletion_scheduled',
          targetType: 'tenant',
          targetId: actor.tenantId,
          changes: { due_at: s!.deletion_due_at.toISOString() },
        });
      });
    },
    /** Cancels a scheduled deletion while its window lasts; deliveries held meanwhile go out. */
    async cancelDeletion(actor: Actor): Promise<void> {
      await inTransaction(pool, async (sql) => {
        const rows = await sql.query(
          `UPDATE tenants SET deletion_requested_at = NULL, deletion_due_at = NULL, deletion_requested_by = NULL, updated_at = now()
           WHERE id = $1 AND deletion_requested_at IS NOT NULL AND deletion_due_at > now() RETURNING 1`,
          [actor.tenantId],
        );
        if (!rows.length) throw new DomainError('conflict', 'No deletion of this workspace is waiting to be cancelled.');
        const held = await releaseHeldDeliveries(sql, actor.tenantId);
        // The cancellation lets held data go out: the log says how much.
        await recordAudit(sql, actor, {
          action: 'workspace.deletion_cancelled',
          targetType: 'tenant',
          targetId: actor.tenantId,
          changes: { deliveries_released: held },
        });
      });
    },

    /**
     * Revokes every session of one user issued until now, wherever it is used (docs/operations.md); the user
     * signs in again. The time is this process's clock, as the tokens' issue times are.
     */
    async revokeUserSessions(actor: Actor, userId: string): Promise<void> {
      await inTransaction(pool, async (sql) => {
        const now = new Date();
        const [u] = await sql.query<{ email: string }>(
          'UPDATE users SET sessions_valid_after = $3, updated_at = now() WHERE id = $1 AND tenant_id = $2 RETURNING email',
          [userId, actor.tenantId, now],
        );
        if (!u) throw notFound(`User ${userId}`);
        await recordAudit(sql, actor, {
          action: 'user.sessions_revoked',
          targetType: 'user',
          targetId: userId,
          changes: { email: u.email, sessions_valid_after: now.toISOString() },
        });
      });
    },
    /** Revokes every session of every user of the workspace issued until now, the caller's included. */
    async revokeWorkspaceSessions(actor: Actor): Promise<void> {
      await inTransaction(pool, async (sql) => {
        const now = new Date();
        // The tenant row FOR NO KEY UPDATE, as every workspace transaction of the API takes it (docs/concurrency.md).
        await sql.query('UPDATE tenants SET sessions_valid_after = $2, updated_at = now() WHERE id = $1', [actor.tenantId, now]);
        await recordAudit(sql, actor, {
          action: 'workspace.sessions_revoked',
          targetType: 'tenant',
          targetId: actor.tenantId,
          changes: { sessions_valid_after: now.toISOString() },
        });
      });
    },

    /** Changes a user's role; the workspace always keeps an owner, and owners do not demote themselves. */
    async setUserRole(actor: Actor, userId: string, role: Role): Promise<void> {
      await inTransaction(pool, async (sql) => {
        await lockUsersOf(sql, actor.tenantId);
        const [u] = await sql.query<{ role: Role }>('SELECT role::text AS role FROM users WHERE id = $1 AND tenant_id = $2 FOR UPDATE', [
          userId,
          actor.tenantId,
        ]);
        if (!u) throw notFound(`User ${userId}`);
        if (u.role === role) return;
        if (userId === actor.id) throw new DomainError('conflict', 'Owners cannot change their own role; another owner can.');
        if (u.role === 'owner') await requireAnotherOwner(sql, actor.tenantId, userId);
        await sql.query('UPDATE users SET role = $3::"Role", updated_at = now() WHERE id = $1 AND tenant_id = $2', [
          userId,
          actor.tenantId,
          role,
        ]);
        await recordAudit(sql, actor, {
          action: 'user.role_changed',
          targetType: 'user',
          targetId: userId,
          changes: { role: { from: u.role, to: role } },
        });
      });
    },
    /** Removes a user (not oneself); the audit log keeps their email as the actor label of what they did. */
    async removeUser(actor: Actor, userId: string): Promise<void> {
      await inTransaction(pool, async (sql) => {
        if (userId === actor.id) throw new DomainError('conflict', 'You cannot remove yourself; another owner can.');
        await lockUsersOf(sql, actor.tenantId);
        await requireAnotherOwner(sql, actor.tenantId, userId);
        const [u] = await sql.query<{ email: string; role: Role }>(
          'DELETE FROM users WHERE id = $1 AND tenant_id = $2 RETURNING email, role::text AS role',
          [userId, actor.tenantId],
        );
        if (!u) throw notFound(`User ${userId}`);
        await recordAudit(sql, actor, {
          action: 'user.removed',
          targetType: 'user',
          targetId: userId,
          changes: { email: u.email, role: u.role },
        });
      });
    },
  };
}

export type WorkspaceService = ReturnType<typeof createWorkspaceService>;
