import { CHURN_MODEL_KINDS, type ChurnModelKind, TRAINING_STATUSES } from '../contract/enums.ts';
import { MODEL_FEATURES, type ChurnModel as Model, DEFAULT_MODEL } from '../scoring/churn-model.ts';
import type { TrainResult as TrainResultView } from '../scoring/training.ts';
import type { TrainingRun } from '../scoring/training-runs.ts';
import { DomainError, storedError } from '../errors.ts';
import type { ActiveModelRow } from '../services/churn.ts';
import { builder } from './builder.ts';
import { RiskLevel } from './enums.ts';
import { actorOf, requireCapability } from './guards.ts';

interface RiskFactorView {
  code: string;
  description: string;
  impact: number;
}
interface InterventionView {
  code: string;
  title: string;
  description: string;
  priority: string;
}
export interface ChurnView {
  customerId: string;
  probability: number | null;
  riskLevel: 'low' | 'medium' | 'high' | 'critical' | null;
  riskFactors: RiskFactorView[];
  recommendedInterventions: InterventionView[];
  modelVersion: string | null;
  predictedAt: Date | null;
}

const RiskFactor = builder.objectRef<RiskFactorView>('RiskFactor').implement({
  description: 'A feature that pushes the churn probability up.',
  fields: (t) => ({
    code: t.exposeString('code'),
    description: t.exposeString('description'),
    impact: t.exposeFloat('impact', { description: 'Share of the log-odds above the baseline this factor accounts for (0-1).' }),
  }),
});

const Intervention = builder.objectRef<InterventionView>('Intervention').implement({
  fields: (t) => ({
    code: t.exposeString('code'),
    title: t.exposeString('title'),
    description: t.exposeString('description'),
    priority: t.exposeString('priority', { description: '`high`, `medium` or `low`.' }),
  }),
});

export const ChurnPrediction = builder.objectRef<ChurnView>('ChurnPrediction').implement({
  description: 'The latest churn prediction; fields are null before the first one is made.',
  fields: (t) => ({
    customerId: t.field({ type: 'UUID', resolve: (c) => c.customerId }),
    probability: t.exposeFloat('probability', { nullable: true }),
    riskLevel: t.field({ type: RiskLevel, nullable: true, resolve: (c) => c.riskLevel }),
    riskFactors: t.field({ type: [RiskFactor], resolve: (c) => c.riskFactors }),
    recommendedInterventions: t.field({ type: [Intervention], resolve: (c) => c.recommendedInterventions }),
    modelVersion: t.exposeString('modelVersion', { nullable: true }),
    predictedAt: t.field({ type: 'DateTime', nullable: true, resolve: (c) => c.predictedAt }),
  }),
});

builder.prismaObjectField('Customer', 'churnPrediction', (t) =>
  t.field({
    type: ChurnPrediction,
    select: { id: true, churnPrediction: true },
    resolve: (c): ChurnView => {
      const p = c.churnPrediction;
      return {
        customerId: c.id,
        probability: p?.probability ?? null,
        riskLevel: p?.riskLevel ?? null,
        riskFactors: (p?.riskFactors as unknown as RiskFactorView[]) ?? [],
        recommendedInterventions: (p?.recommendedInterventions as unknown as InterventionView[]) ?? [],
        modelVersion: p?.modelVersion ?? null,
        predictedAt: p?.predictedAt ?? null,
      };
    },
  }),
);

// The model in use: the default coefficients, or the tenant's trained model.
interface ReliabilityBinView {
  predicted: number;
  observed: number;
  count: number;
}
interface MetricsView {
  samples: number;
  churned: number;
  holdout: number;
  auc: number;
  brier: number;
  logLoss: number | null;
  lambda: number | null;
  reliability: ReliabilityBinView[];
  baselineModelVersion: string;
  baselineAuc: number;
  baselineBrier: number;
}
interface ModelView {
  model: Model;
  kind: ChurnModelKind;
  metrics: MetricsView | null;
}

const ModelKind = builder.enumType('ChurnModelKind', {
  description:
    'default: the documented coefficients. trained: slopes fitted on the tenant’s labels. calibrated_default: the default’s slopes (same ranking) with probabilities calibrated on the tenant’s labels, used when a trained model ranked held-out customers worse than the default.',
  values: CHURN_MODEL_KINDS,
});

const ModelFeature = builder
  .objectRef<{ code: string; summary: string; coefficient: number; baseline: number }>('ChurnModelFeature')
  .implement({
    fields: (t) => ({
      code: t.exposeString('code'),
      description: t.exposeString('summary', { description: 'How the feature is measured (0 = no risk, 1 = most risk).' }),
      coefficient: t.exposeFloat('coefficient', { description: 'Log-odds per unit of the feature.' }),
      baseline: t.exposeFloat('baseline', { description: 'Contributions to a prediction are measured above this value.' }),
    }),
  });

const ReliabilityBin = builder.objectRef<ReliabilityBinView>('ChurnReliabilityBin').implement({
  description: 'A group of held-out customers of equal size by predicted probability: what the model said against what happened.',
  fields: (t) => ({
    predicted: t.exposeFloat('predicted', { description: 'Mean predicted churn probability in the group.' }),
    observed: t.exposeFloat('observed', { description: 'Share of the group that churned.' }),
    count: t.exposeInt('count'),
  }),
});

const Metrics = builder.objectRef<MetricsView>('ChurnModelMetrics').implement({
  description: 'How the model did on the customers held out of its training, beside the default model on the same customers.',
  fields: (t) => ({
    samples: t.exposeInt('samples'),
    churned: t.exposeInt('churned'),
    holdout: t.exposeInt('holdout'),
    auc: t.exposeFloat('auc'),
    brier: t.exposeFloat('brier'),
    baselineModelVersion: t.exposeString('baselineModelVersion'),
    baselineAuc: t.exposeFloat('baselineAuc'),
    baselineBrier: t.exposeFloat('baselineBrier'),
    logLoss: t.exposeFloat('logLoss', {
      nullable: true,
      description: 'Log loss on the held-out customers; null for models trained before it was measured.',
    }),
    lambda: t.exposeFloat('lambda', {
      nullable: true,
      description: 'The L2 strength cross-validation chose; null for models trained before it was chosen.',
    }),
    reliability: t.field({
      type: [ReliabilityBin],
      description: 'Calibration on the held-out customers, lowest predictions first.',
      resolve: (m) => m.reliability,
    }),
  }),
});

const ChurnModelRef = builder.objectRef<ModelView>('ChurnModel').implement({
  description: 'The logistic churn model in use: p = 1 / (1 + e^-(intercept + Σ coefficient × feature)).',
  fields: (t) => ({
    modelVersion: t.string({ resolve: (m) => m.model.version }),
    kind: t.field({ type: ModelKind, resolve: (m) => m.kind }),
    trainedAt: t.field({ type: 'DateTime', nullable: true, resolve: (m) => m.model.trainedAt }),
    intercept: t.float({ resolve: (m) => m.model.intercept }),
    features: t.field({
      type: [ModelFeature],
      resolve: (m) =>
        MODEL_FEATURES.map((f) => ({
          code: f.code,
          summary: f.summary,
          coefficient: m.model.coefficients[f.code] ?? 0,
          baseline: m.model.baseline[f.code] ?? 0,
        })),
    }),
    metrics: t.field({ type: Metrics, nullable: true, description: 'Null for the default model.', resolve: (m) => m.metrics }),
  }),
});

const DEFAULT_VIEW: ModelView = { model: DEFAULT_MODEL, kind: 'default', metrics: null };

function modelView(row: ActiveModelRow): ModelView {
  const m = row.metrics as Record<string, number> & {
    baseline: { model_version: string; auc: number; brier: number };
    reliability?: ReliabilityBinView[];
    kind?: 'trained' | 'calibrated_default';
  };
  return {
    kind: m.kind ?? 'trained',
    model: {
      version: row.version,
      intercept: row.intercept,
      coefficients: row.coefficients as Record<string, number>,
      baseline: row.baseline as Record<string, number>,
      trainedAt: row.trainedAt,
    },
    metrics: {
      samples: m.samples!,
      churned: m.churned!,
      holdout: m.holdout!,
      auc: m.auc!,
      brier: m.brier!,
      baselineModelVersion: m.baseline.model_version,
      baselineAuc: m.baseline.auc,
      baselineBrier: m.baseline.brier,
      logLoss: m.log_loss ?? null,
      lambda: m.lambda ?? null,
      reliability: m.reliability ?? [],
    },
  };
}

const TrainResult = builder.objectRef<TrainResultView>('ChurnTrainingResult').implement({
  fields: (t) => ({
    modelVersion: t.exposeString('modelVersion'),
    kind: t.field({
      type: ModelKind,
      description: 'What was stored: the trained model, or (when it ranked held-out customers worse) the calibrated default.',
      resolve: (r) => r.kind,
    }),
    trainedAt: t.field({ type: 'DateTime', resolve: (r) => r.trainedAt }),
    samples: t.exposeInt('samples', { description: 'Labelled customers used (the latest label of each).' }),
    churned: t.exposeInt('churned'),
    holdout: t.exposeInt('holdout', {
      description:
        'Customers measured out of fold: each predicted by the training procedure fitted without it (all of them, by five-fold cross-validation).',
    }),
    auc: t.exposeFloat('auc', { description: 'Area under the ROC curve on the held-out customers.' }),
    brier: t.exposeFloat('brier', { description: 'Brier score on the held-out customers (lower is better).' }),
    logLoss: t.exposeFloat('logLoss', { description: 'Log loss on the held-out customers (lower is better).' }),
    lambda: t.float({
      nullable: true,
      description: 'The L2 strength cross-validation chose for the stored model; null for a calibrated default (no slopes fitted).',
      resolve: (r) => r.lambda,
    }),
    reliability: t.field({
      type: [ReliabilityBin],
      description: 'Calibration on the held-out customers, lowest predictions first.',
      resolve: (r) => r.reliability,
    }),
    eligible: t.exposeBoolean('eligible', {
      description:
        'Whether the model may be used: a trained model when its held-out AUC is at least the default model’s on the same customers; a calibrated default (same ranking as the default) when its held-out Brier score is no worse.',
    }),
    activated: t.exposeBoolean('activated', {
      description: 'Whether the model is now in use: eligible, and training was not asked to leave the choice to `activateChurnModel`.',
    }),
    baselineModelVersion: t.string({ resolve: (r) => r.baseline.modelVersion }),
    baselineAuc: t.float({ resolve: (r) => r.baseline.auc }),
    baselineBrier: t.float({ resolve: (r) => r.baseline.brier }),
  }),
});

const TrainingStatus = builder.enumType('ChurnTrainingStatus', {
  description: 'running: fitting; succeeded: its model is stored (`result`); failed: `error` says why, nothing was stored.',
  values: TRAINING_STATUSES,
});

const TrainingError = builder.objectRef<{ code: string; message: string }>('ChurnTrainingError').implement({
  fields: (t) => ({
    code: t.exposeString('code', { description: 'The error code a request would have been refused with, e.g. `not_enough_data`.' }),
    message: t.exposeString('message'),
  }),
});

const TrainingRunRef = builder.objectRef<TrainingRun>('ChurnTrainingRun').implement({
  description:
    'A churn training from its start to its model or its failure. Training on thousands of labels can take minutes; start it with `startChurnTraining` and read it here.',
  fields: (t) => ({
    id: t.field({ type: 'UUID', resolve: (r) => r.id }),
    status: t.field({ type: TrainingStatus, resolve: (r) => r.status }),
    activate: t.exposeBoolean('activate', { description: 'Whether the model is put in use when it may be.' }),
    startedAt: t.field({ type: 'DateTime', resolve: (r) => r.startedAt }),
    finishedAt: t.field({ type: 'DateTime', nullable: true, resolve: (r) => r.finishedAt }),
    result: t.field({ type: TrainResult, nullable: true, description: 'Once succeeded.', resolve: (r) => r.result }),
    error: t.field({ type: TrainingError, nullable: true, description: 'Once failed.', resolve: (r) => r.error }),
  }),
});

builder.queryField('churnTraining', (t) =>
  t.field({
    type: TrainingRunRef,
    nullable: true,
    description: 'One of the tenant’s churn trainings (kept at least 90 days from its start); null when it has none of that id.',
    args: { id: t.arg({ type: 'UUID' }) },
    resolve: async (_r, args, ctx) => ctx.services.churn.training(requireCapability(ctx, 'read').tenantId, args.id),
  }),
);

builder.queryField('latestChurnTraining', (t) =>
  t.field({
    type: TrainingRunRef,
    nullable: true,
    description: 'The tenant’s latest churn training, running or ended; null before its first.',
    resolve: async (_r, _a, ctx) => ctx.services.churn.latestTraining(requireCapability(ctx, 'read').tenantId),
  }),
);

builder.queryField('churnModel', (t) =>
  t.field({
    type: ChurnModelRef,
    description: 'The churn model in use for the tenant, with its coefficients.',
    resolve: async (_r, _a, ctx) => {
      const active = await ctx.services.churn.activeModel(requireCapability(ctx, 'read').tenantId);
      return active ? modelView(active) : DEFAULT_VIEW;
    },
  }),
);

const ChurnOutcome = builder.prismaObject('ChurnOutcome', {
  description: 'A label for churn training: the customer churned, or explicitly did not, at a time.',
  fields: (t) => ({
    customerId: t.expose('customerId', { type: 'UUID' }),
    churned: t.exposeBoolean('churned'),
    at: t.expose('at', { type: 'DateTime' }),
    source: t.exposeString('source', { description: '`api` for a label posted by the tenant, `stripe` for a cancelled subscription.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

builder.mutationFields((t) => ({
  startChurnTraining: t.field({
    type: TrainingRunRef,
    description:
      'Starts fitting the tenant’s churn model on its labelled customers (the latest label of each); needs 20 churned and 20 retained, else `not_enough_data` at once. One training of a workspace runs at a time: another meanwhile is refused with `conflict`. With `activate: false` the model is stored and compared but not used until `activateChurnModel`. With `wait: true` the answer waits for the training’s end as long as a request may (about 20 s), and answers it still running after that; `churnTraining(id)` reads it later.',
    args: {
      activate: t.arg.boolean({ required: false, defaultValue: true }),
      wait: t.arg.boolean({ required: false, defaultValue: false }),
    },
    resolve: async (_r, args, ctx) =>
      ctx.services.churn.startTraining(actorOf(ctx, requireCapability(ctx, 'manage')), {
        activate: args.activate ?? true,
        wait: args.wait ?? false,
      }),
  }),
  trainChurnModel: t.field({
    type: TrainResult,
    deprecationReason: 'Use startChurnTraining: a training longer than a request may wait is answered here only with an error.',
    description:
      'Fits the tenant’s churn model and answers its figures, waiting for them as long as a request may (about 20 s); a training that goes on past that is refused with `conflict`, naming the training to read with `churnTraining`.',
    args: { activate: t.arg.boolean({ required: false, defaultValue: true }) },
    resolve: async (_r, args, ctx) => {
      const run = await ctx.services.churn.startTraining(actorOf(ctx, requireCapability(ctx, 'manage')), {
        activate: args.activate ?? true,
        wait: true,
      });
      if (run.result) return run.result;
      if (run.error) throw storedError(run.error);
      throw new DomainError(
        'conflict',
        `The training goes on past what this request may wait, as training ${run.id}; read its result with churnTraining(id: "${run.id}").`,
      );
    },
  }),
  activateChurnModel: t.field({
    type: ChurnModelRef,
    description:
      'Puts a stored trained model in use (only one that did at least as well as the default held out) and refreshes every prediction.',
    args: { modelVersion: t.arg.string() },
    resolve: async (_r, args, ctx) => {
      const p = requireCapability(ctx, 'manage');
      await ctx.services.churn.activate(actorOf(ctx, p), args.modelVersion);
      const active = await ctx.services.churn.activeModel(p.tenantId);
      return active ? modelView(active) : DEFAULT_VIEW;
    },
  }),
  resetChurnModel: t.field({
    type: ChurnModelRef,
    description: 'Puts the default coefficients back in use (trained models are kept) and refreshes every prediction.',
    resolve: async (_r, _a, ctx) => {
      await ctx.services.churn.resetModel(actorOf(ctx, requireCapability(ctx, 'manage')));
      return DEFAULT_VIEW;
    },
  }),
  recordChurnOutcome: t.prismaField({
    type: ChurnOutcome,
    description: 'Labels a customer as churned (or not) for training; `at` defaults to now.',
    args: { customerId: t.arg({ type: 'UUID' }), churned: t.arg.boolean(), at: t.arg({ type: 'DateTime', required: false }) },
    resolve: async (query, _r, args, ctx) => {
      const p = requireCapability(ctx, 'write');
      const id = await ctx.services.churn.recordOutcome(p.tenantId, args);
      return ctx.prisma.churnOutcome.findUniqueOrThrow({ ...query, where: { id } });
    },
  }),
}));
