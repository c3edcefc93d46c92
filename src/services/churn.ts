import type pg from 'pg';
import type { Db } from '../db/prisma.ts';
import { onPg, onPrisma, type Sql } from '../db/sql.ts';
import { notFound, validationFailed } from '../errors.ts';
import type { Fitter } from '../scoring/fit-runner.ts';
import type { CpuShare } from '../runtime/cpu-share.ts';
import { requestTenant } from '../scoring/scoring-queue.ts';
import { activateChurnModel, trainChurnModel } from '../scoring/training.ts';
import { recordAudit, type Actor } from './audit.ts';
import { setActiveChurnModel } from './workspace.ts';
import { customerRows } from './customer-rows.ts';
import { PG, pgCode } from '../db/pg-errors.ts';

const FUTURE_SKEW_MS = 5 * 60_000;

export interface ChurnOutcomeInput {
  tenantId: string;
  customerId: string;
  churned: boolean;
  at: Date;
  /** `api` for a label the tenant posts, the provider's name for one an event implies. */
  source: string;
}

/** The churn_outcomes table: labels come from the API and from the worker (a cancelled subscription), so plain SQL. */
export const churnOutcomeRows = {
  async insert(sql: Sql, o: ChurnOutcomeInput): Promise<string> {
    const [row] = await sql.query<{ id: string }>(
      `INSERT INTO churn_outcomes (id, tenant_id, customer_id, churned, at, source) VALUES (gen_random_uuid(), $1, $2, $3, $4, $5) RETURNING id`,
      [o.tenantId, o.customerId, o.churned, o.at, o.source],
    );
    return row!.id;
  },
};

/** The stored model the API shows. */
export interface ActiveModelRow {
  version: string;
  intercept: number;
  coefficients: unknown;
  baseline: unknown;
  metrics: unknown;
  trainedAt: Date;
}

/**
 * Churn labels and the tenant's model: training and activation are the scoring engine's (src/scoring/training.ts),
 * called from here; going back to the default model and refreshing every prediction commit together.
 */
export function createChurnService(deps: { pool: pg.Pool; prisma: Db; fitter?: Fitter; cpuShare?: CpuShare }) {
  const { pool, prisma } = deps;
  return {
    /** Labels a customer as churned (or not) for training; `at` defaults to now. Answers the label's id. */
    async recordOutcome(tenantId: string, input: { customerId: string; churned: boolean; at?: Date | null }): Promise<string> {
      const at = input.at ?? new Date();
      if (at.getTime() > Date.now() + FUTURE_SKEW_MS) throw validationFailed([{ path: 'at', message: 'must not be in the future' }]);
      const sql = onPg(pool);
      if (!(await customerRows.exists(sql, tenantId, input.customerId))) throw notFound(`Customer ${input.customerId}`);
      try {
        return await churnOutcomeRows.insert(sql, { tenantId, customerId: input.customerId, churned: input.churned, at, source: 'api' });
      } catch (e) {
        // Erased between the check and the insert: nothing was stored, and the customer is gone.
        if (pgCode(e) === PG.foreignKeyViolation) throw notFound(`Customer ${input.customerId}`);
        throw e;
      }
    },
    /**
     * Fits the tenant's model on its labelled customers; it is used only if it does at least as well as the
     * default, and, with `activate: false`, only once `activate` is called after the comparison was seen.
     */
    async train(actor: Actor, opts: { activate?: boolean } = {}) {
      const r = await trainChurnModel(pool, actor.tenantId, setActiveChurnModel, {
        activate: opts.activate,
        fitter: deps.fitter,
        cpuShare: deps.cpuShare,
      });
      await recordAudit(onPrisma(prisma), actor, {
        action: 'churn_model.trained',
        targetType: 'churn_model',
        targetId: r.modelVersion,
        changes: { activated: r.activated, samples: r.samples, auc: r.auc, baseline_auc: r.baseline.auc },
      });
      return r;
    },
    /** Puts a stored trained model in use and refreshes every prediction. */
    async activate(actor: Actor, version: string): Promise<void> {
      await activateChurnModel(pool, actor.tenantId, version, setActiveChurnModel);
      await recordAudit(onPrisma(prisma), actor, { action: 'churn_model.activated', targetType: 'churn_model', targetId: version });
    },
    async activeModel(tenantId: string): Promise<ActiveModelRow | null> {
      const tenant = await prisma.tenant.findUniqueOrThrow({ where: { id: tenantId }, select: { activeChurnModel: true } });
      return tenant.activeChurnModel;
    },
    /** Puts the default coefficients back in use (trained models are kept) and refreshes every prediction. */
    async resetModel(actor: Actor): Promise<void> {
      const { tenantId } = actor;
      await prisma.$transaction(async (tx) => {
        const before = await tx.tenant.findUniqueOrThrow({
          where: { id: tenantId },
          select: { activeChurnModel: { select: { version: true } } },
        });
        await setActiveChurnModel(onPrisma(tx), tenantId, null);
        await requestTenant(onPrisma(tx), tenantId);
        await recordAudit(onPrisma(tx), actor, {
          action: 'churn_model.reset',
          targetType: 'churn_model',
          targetId: before.activeChurnModel?.version ?? null,
        });
      });
    },
  };
}

export type ChurnService = ReturnType<typeof createChurnService>;
