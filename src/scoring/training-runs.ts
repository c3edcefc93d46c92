import type { TrainingStatus } from '../contract/enums.ts';
import type { Sql } from '../db/sql.ts';
import { DomainError } from '../errors.ts';
import type { ModelKind } from './model-selection.ts';

/**
 * The churn_trainings table: one row per training asked for, from its start to its model or its failure.
 * A training on thousands of labels outlives the request that asked for it, and may run in another process
 * than the one asked about it, so its state is a row, not a promise.
 */

/** What a training that succeeded reports (training.ts). */
export interface TrainResult {
  modelVersion: string;
  /** `trained` (its own slopes) or `calibrated_default` (the default's slopes, calibrated on the tenant's labels). */
  kind: ModelKind;
  trainedAt: Date;
  samples: number;
  churned: number;
  holdout: number;
  auc: number;
  brier: number;
  logLoss: number;
  /** The regularisation strength cross-validation chose for the stored model. */
  lambda: number | null;
  /** Held-out customers in five groups by predicted probability: mean predicted against observed churn. */
  reliability: { predicted: number; observed: number; count: number }[];
  /** It did at least as well as the default coefficients on the held-out customers, so it may be put in use. */
  eligible: boolean;
  /** The model fitted with its own slopes, held out: stored only when it ranks at least as well as the default. */
  trained: { auc: number; brier: number };
  /** Whether it is now in use: eligible, and the caller asked for it to be used straight away. */
  activated: boolean;
  baseline: { modelVersion: string; auc: number; brier: number };
}

/** How often the process that trains marks its training alive. */
export const ALIVE_EVERY_MS = 10_000;
/** A running training not marked alive for this long was interrupted: the process training it ended. */
export const INTERRUPTED_AFTER_MS = 60_000;

export interface TrainingRun {
  id: string;
  tenantId: string;
  activate: boolean;
  status: TrainingStatus;
  result: TrainResult | null;
  error: { code: string; message: string } | null;
  startedAt: Date;
  finishedAt: Date | null;
}

interface Row {
  id: string;
  tenant_id: string;
  activate: boolean;
  status: TrainingStatus;
  result: (Omit<TrainResult, 'trainedAt'> & { trainedAt: string }) | null;
  error_code: string | null;
  error_message: string | null;
  started_at: Date;
  finished_at: Date | null;
}

const COLUMNS = 'id, tenant_id, activate, status, result, error_code, error_message, started_at, finished_at';

const fromRow = (r: Row): TrainingRun => ({
  id: r.id,
  tenantId: r.tenant_id,
  activate: r.activate,
  status: r.status,
  result: r.result ? { ...r.result, trainedAt: new Date(r.result.trainedAt) } : null,
  error: r.error_code ? { code: r.error_code, message: r.error_message ?? '' } : null,
  startedAt: r.started_at,
  finishedAt: r.finished_at,
});

async function readOne(sql: Sql, where: string, params: unknown[]): Promise<TrainingRun | null> {
  const [row] = await sql.query<Row & { stale: boolean; alive_at: Date }>(
    `SELECT ${COLUMNS}, alive_at, status = 'running' AND alive_at < now() - make_interval(secs => ${INTERRUPTED_AFTER_MS / 1000}) AS stale
     FROM churn_trainings WHERE ${where}`,
    params,
  );
  if (!row) return null;
  const run = fromRow(row);
  return row.stale ? { ...run, status: 'failed', finishedAt: row.alive_at, error: INTERRUPTED } : run;
}

const INTERRUPTED = {
  code: 'service_unavailable' as const,
  message: 'The training was interrupted: the process running it stopped. Start it again.',
};

/** Finished trainings are kept this long, for their figures and to be read back by id. */
const KEPT_DAYS = 90;

export const trainingRuns = {
  /**
   * Starts a training of the tenant, or answers null when one is already running. One left running by a
   * process that ended is first marked interrupted, so it does not hold the tenant's turn for ever.
   */
  async start(sql: Sql, tenantId: string, activate: boolean): Promise<TrainingRun | null> {
    await sql.query(
      `UPDATE churn_trainings SET status = 'failed', finished_at = alive_at, error_code = $3, error_message = $4
       WHERE tenant_id = $1 AND status = 'running' AND alive_at < now() - make_interval(secs => $2)`,
      [tenantId, INTERRUPTED_AFTER_MS / 1000, INTERRUPTED.code, INTERRUPTED.message],
    );
    const [row] = await sql.query<Row>(
      `INSERT INTO churn_trainings (id, tenant_id, activate) VALUES (gen_random_uuid(), $1, $2)
       ON CONFLICT (tenant_id) WHERE status = 'running' DO NOTHING RETURNING ${COLUMNS}`,
      [tenantId, activate],
    );
    if (!row) return null;
    await sql.query(
      `DELETE FROM churn_trainings WHERE tenant_id = $1 AND status <> 'running' AND started_at < now() - make_interval(days => $2)`,
      [tenantId, KEPT_DAYS],
    );
    return fromRow(row);
  },

  /** The tenant's running training, if any. */
  async running(sql: Sql, tenantId: string): Promise<TrainingRun | null> {
    const [row] = await sql.query<Row>(`SELECT ${COLUMNS} FROM churn_trainings WHERE tenant_id = $1 AND status = 'running'`, [tenantId]);
    return row ? fromRow(row) : null;
  },

  /** One of the tenant's trainings; a running one whose process stopped marking it alive reads as interrupted. */
  async get(sql: Sql, tenantId: string, id: string): Promise<TrainingRun | null> {
    return readOne(sql, 'tenant_id = $1 AND id = $2', [tenantId, id]);
  },

  /** The tenant's latest training, read as `get` reads one. */
  async latest(sql: Sql, tenantId: string): Promise<TrainingRun | null> {
    return readOne(sql, 'tenant_id = $1 ORDER BY started_at DESC, id DESC LIMIT 1', [tenantId]);
  },

  /** Marks the training alive; the process that runs it calls this every ALIVE_EVERY_MS. */
  async alive(sql: Sql, id: string): Promise<void> {
    await sql.query(`UPDATE churn_trainings SET alive_at = now() WHERE id = $1 AND status = 'running'`, [id]);
  },

  /**
   * Stores a training's figures, in the transaction that stores its model, so that the two commit together.
   * A training already read as interrupted (marked so, or not marked alive for INTERRUPTED_AFTER_MS) throws:
   * its model is not stored either, so what a reader was told stays true.
   */
  async succeed(sql: Sql, id: string, result: TrainResult): Promise<void> {
    const rows = await sql.query(
      `UPDATE churn_trainings SET status = 'succeeded', finished_at = now(), result = $2
       WHERE id = $1 AND status = 'running' AND alive_at >= now() - make_interval(secs => $3) RETURNING id`,
      [id, JSON.stringify(result), INTERRUPTED_AFTER_MS / 1000],
    );
    if (rows.length === 0) throw new DomainError(INTERRUPTED.code, INTERRUPTED.message);
  },

  async fail(sql: Sql, id: string, error: { code: string; message: string }): Promise<void> {
    await sql.query(
      `UPDATE churn_trainings SET status = 'failed', finished_at = now(), error_code = $2, error_message = $3 WHERE id = $1 AND status = 'running'`,
      [id, error.code, error.message],
    );
  },
};
