import type pg from 'pg';
import type { Db } from '../db/prisma.ts';
import { onPg, onPrisma, type Sql } from '../db/sql.ts';
import { DomainError, notFound, validationFailed } from '../errors.ts';
import type { Fitter } from '../scoring/fit-runner.ts';
import type { CpuShare } from '../runtime/cpu-share.ts';
import { requestTenant } from '../scoring/scoring-queue.ts';
import { activateChurnModel, checkLabels, trainChurnModel } from '../scoring/training.ts';
import { ALIVE_EVERY_MS, type TrainingRun, trainingRuns } from '../scoring/training-runs.ts';
import { recordAudit, type Actor } from './audit.ts';
import { setActiveChurnModel } from './workspace.ts';
import { customerRows } from './customer-rows.ts';
import { PG, pgCode } from '../db/pg-errors.ts';

const FUTURE_SKEW_MS = 5 * 60_000;
const DEFAULT_TRAINING_WAIT_MS = 20_000;
/** How often a training another process runs is looked at again, while a request waits for it. */
const POLL_MS = 500;

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
export function createChurnService(deps: {
  pool: pg.Pool;
  prisma: Db;
  fitter?: Fitter;
  cpuShare?: CpuShare;
  /** How long a request asking to wait for a training's end may wait (below the request's own time limit). */
  trainingWaitMs?: number;
  /** Told of a training that failed for a reason of the service's own (the tenant is told only that it failed). */
  onError?: (err: unknown, what: string) => void;
}) {
  const { pool, prisma } = deps;
  // The trainings this process runs, by id, until each has stored its outcome, and how to end each.
  const running = new Map<string, Promise<void>>();
  // The service stopping: every training ends at its next step, and every wait for one at once (the request
  // is answered with what there is: 202, read it later).
  const stopping = new AbortController();
  const stopped = new Promise<void>((resolve) => stopping.signal.addEventListener('abort', () => resolve(), { once: true }));

  /** Runs a started training to its end, in the background: its row says how it ended. */
  const runTraining = async (actor: Actor, run: TrainingRun, signal: AbortSignal) => {
    const sql = onPg(pool);
    const alive = setInterval(() => void trainingRuns.alive(sql, run.id).catch(() => undefined), ALIVE_EVERY_MS);
    alive.unref();
    try {
      const r = await trainChurnModel(pool, actor.tenantId, setActiveChurnModel, {
        activate: run.activate,
        fitter: deps.fitter,
        cpuShare: deps.cpuShare,
        runId: run.id,
        signal,
      });
      await recordAudit(onPrisma(prisma), actor, {
        action: 'churn_model.trained',
        targetType: 'churn_model',
        targetId: r.modelVersion,
        changes: { activated: r.activated, samples: r.samples, auc: r.auc, baseline_auc: r.baseline.auc },
      });
    } catch (caught) {
      // Stopped, a fit cut short by the closing fitter fails as the stop says.
      const e = signal.aborted ? signal.reason : caught;
      if (!(e instanceof DomainError)) deps.onError?.(e, 'churn training failed');
      const error =
        e instanceof DomainError
          ? { code: e.code, message: e.message }
          : { code: 'internal_error', message: 'The training failed; start it again.' };
      await trainingRuns.fail(sql, run.id, error).catch((err) => deps.onError?.(err, 'storing a failed churn training'));
    } finally {
      clearInterval(alive);
    }
  };

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
     * Starts fitting the tenant's model on its labelled customers, in the background: too few labels is
     * refused at once, and so is a second training while one runs. The model is used only if it does at
     * least as well as the default, and, with `activate: false`, only once `activate` is called after the
     * comparison was seen. With `wait`, the answer waits for its end as long as a request may; `training`
     * reads how it ended.
     */
    async startTraining(actor: Actor, opts: { activate?: boolean; wait?: boolean } = {}): Promise<TrainingRun> {
      if (stopping.signal.aborted) {
        throw new DomainError('service_unavailable', 'The service is stopping; start the training again in a minute.', {
          retryAfterSeconds: 60,
        });
      }
      const sql = onPg(pool);
      await checkLabels(sql, actor.tenantId);
      const run = await trainingRuns.start(sql, actor.tenantId, opts.activate ?? true);
      if (!run) {
        const other = await trainingRuns.running(sql, actor.tenantId);
        throw new DomainError(
          'conflict',
          `A training of this workspace’s churn model is already under way${other ? ` (training ${other.id})` : ''}; wait for its result.`,
        );
      }
      const done = runTraining(actor, run, stopping.signal).finally(() => running.delete(run.id));
      running.set(run.id, done);
      if (!opts.wait) return run;
      return (await this.training(actor.tenantId, run.id, deps.trainingWaitMs ?? DEFAULT_TRAINING_WAIT_MS)) ?? run;
    },
    /**
     * One of the tenant's trainings, null when it has none of that id. With `waitMs`, a running one is
     * waited for up to that long: the answer is its outcome when it ends in time.
     */
    async training(tenantId: string, id: string, waitMs = 0): Promise<TrainingRun | null> {
      const sql = onPg(pool);
      const deadline = Date.now() + waitMs;
      for (;;) {
        const run = await trainingRuns.get(sql, tenantId, id);
        const left = deadline - Date.now();
        if (!run || run.status !== 'running' || left <= 0) return run;
        // This process's own training is waited for as it ends; another process's is looked at again.
        if (stopping.signal.aborted) return run;
        const mine = running.get(id);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, mine ? left : Math.min(POLL_MS, left));
          void Promise.race([mine ?? new Promise<void>(() => undefined), stopped]).then(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
    },
    /** The tenant's latest training, null before its first. */
    async latestTraining(tenantId: string): Promise<TrainingRun | null> {
      return trainingRuns.latest(onPg(pool), tenantId);
    },
    /**
     * Ends this process's trainings at their next step (the service stopping), each stored as interrupted,
     * and every request waiting for one is answered at once; answers once each training has stored how it
     * ended. A fit under way ends when the fitter closes. Called again, it only waits.
     */
    stopTrainings(): Promise<void> {
      if (!stopping.signal.aborted) {
        stopping.abort(
          new DomainError('service_unavailable', 'The training was interrupted: the service stopped. Start it again.', {
            retryAfterSeconds: 60,
          }),
        );
      }
      return Promise.all(running.values()).then(() => undefined);
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
