import { useEffect, useState, type FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import { CalibrationChart } from '../../components/Charts.tsx';
import { Dialog } from '../../components/Dialog.tsx';
import { ErrorState, FormError, Loading } from '../../components/States.tsx';
import { graphql } from '../../gql/index.ts';
import type { ScoringSettingsQuery } from '../../gql/graphql.ts';
import { DIMENSION_LABELS, formatDateTime } from '../../lib/format.ts';
import { useViewer } from '../../lib/viewer.tsx';

export const WeightsFields = graphql(`
  fragment WeightsFields on HealthWeights {
    usage
    engagement
    support
    billing
    growth
    isDefault
  }
`);

export const TrainingRunFields = graphql(`
  fragment TrainingRunFields on ChurnTrainingRun {
    id
    status
    error {
      code
      message
    }
    result {
      modelVersion
      kind
      eligible
      activated
      auc
      brier
      baselineAuc
      baselineBrier
      baselineModelVersion
      samples
      churned
      holdout
      logLoss
      lambda
      reliability {
        predicted
        observed
        count
      }
    }
  }
`);

const ScoringDoc = graphql(`
  query ScoringSettings {
    healthWeights {
      ...WeightsFields
    }
    latestChurnTraining {
      ...TrainingRunFields
    }
    churnModel {
      modelVersion
      kind
      trainedAt
      intercept
      features {
        code
        description
        coefficient
        baseline
      }
      metrics {
        auc
        brier
        baselineAuc
        baselineBrier
        baselineModelVersion
        samples
        churned
        holdout
        logLoss
        lambda
        reliability {
          predicted
          observed
          count
        }
      }
    }
  }
`);

const SetWeightsDoc = graphql(`
  mutation SetHealthWeights($input: HealthWeightsInput!) {
    setHealthWeights(input: $input) {
      ...WeightsFields
    }
  }
`);

const ResetWeightsDoc = graphql(`
  mutation ResetHealthWeights {
    resetHealthWeights {
      ...WeightsFields
    }
  }
`);

// The mutation waits for a short training; a long one is read again until it has ended.
const StartTrainingDoc = graphql(`
  mutation StartTraining {
    startChurnTraining(activate: false, wait: true) {
      ...TrainingRunFields
    }
  }
`);

const TrainingProgressDoc = graphql(`
  query TrainingProgress($id: UUID!) {
    churnTraining(id: $id) {
      ...TrainingRunFields
    }
  }
`);

/** How often a training still running is read again. */
const TRAINING_POLL_MS = 3000;

const ActivateModelDoc = graphql(`
  mutation ActivateChurnModel($modelVersion: String!) {
    activateChurnModel(modelVersion: $modelVersion) {
      modelVersion
    }
  }
`);

const ResetModelDoc = graphql(`
  mutation ResetChurnModel {
    resetChurnModel {
      modelVersion
    }
  }
`);

const KEYS = ['usage', 'engagement', 'support', 'billing', 'growth'] as const;
type Weights = Record<(typeof KEYS)[number], number>;

export function Scoring() {
  const { canManage } = useViewer();
  const [{ data, error, fetching }, refetch] = useQuery({ query: ScoringDoc });
  const reload = () => refetch({ requestPolicy: 'network-only' });
  if (error && !data) return <ErrorState error={error} retry={reload} />;
  if (!data) return fetching ? <Loading label="Loading scoring settings" /> : null;
  return (
    <>
      <div className="page-head">
        <h1>Scoring</h1>
      </div>
      <WeightsPanel weights={data.healthWeights} canManage={canManage} onSaved={reload} />
      <ModelPanel model={data.churnModel} latest={data.latestChurnTraining ?? null} canManage={canManage} onChanged={reload} />
    </>
  );
}

function WeightsPanel({
  weights,
  canManage,
  onSaved,
}: {
  weights: Weights & { isDefault: boolean };
  canManage: boolean;
  onSaved: () => void;
}) {
  const toPercent = (w: Weights) =>
    Object.fromEntries(KEYS.map((k) => [k, String(Math.round(w[k] * 1000) / 10)])) as Record<keyof Weights, string>;
  const [values, setValues] = useState(() => toPercent(weights));
  useEffect(() => setValues(toPercent(weights)), [weights]);
  const [set, doSet] = useMutation(SetWeightsDoc);
  const [reset, doReset] = useMutation(ResetWeightsDoc);
  const [saved, setSaved] = useState<string | null>(null);
  const total = KEYS.reduce((s, k) => s + (Number(values[k]) || 0), 0);
  const valid = Math.abs(total - 100) < 0.05 && KEYS.every((k) => Number(values[k]) >= 0);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const input = Object.fromEntries(KEYS.map((k) => [k, Number(values[k]) / 100])) as Weights;
    const r = await doSet({ input });
    if (r.data) {
      setSaved('Saved. Every customer is being rescored with the new weights.');
      onSaved();
    }
  };
  return (
    <section className="card" aria-labelledby="weights-title">
      <h2 id="weights-title">Health score weights</h2>
      <p className="muted small">
        How much each dimension counts in the overall score. A dimension without data for a customer passes its weight to the others.{' '}
        {weights.isDefault ? 'These are the defaults.' : 'Your workspace uses its own weights.'}
      </p>
      <form onSubmit={submit} className="weights">
        {KEYS.map((k) => (
          <label key={k} className="field">
            <span>{DIMENSION_LABELS[k]} (%)</span>
            <input
              type="number"
              min={0}
              max={100}
              step={0.1}
              inputMode="decimal"
              value={values[k]}
              disabled={!canManage}
              onChange={(e) => setValues({ ...values, [k]: e.target.value })}
            />
          </label>
        ))}
        <p className={`small ${valid ? 'muted' : 'warning'}`} aria-live="polite">
          Total {Math.round(total * 10) / 10}% {valid ? '' : '— the weights must add up to 100%.'}
        </p>
        <FormError error={set.error ?? reset.error} />
        {canManage ? (
          <span className="toolbar">
            <button type="submit" className="primary" disabled={!valid || set.fetching}>
              Save weights
            </button>
            <button
              type="button"
              disabled={weights.isDefault || reset.fetching}
              onClick={async () => {
                const r = await doReset({});
                if (r.data) {
                  setSaved('Back to the default weights; customers are being rescored.');
                  onSaved();
                }
              }}
            >
              Reset to defaults
            </button>
          </span>
        ) : null}
        <p role="status" className="small">
          {saved}
        </p>
      </form>
    </section>
  );
}

type Model = {
  modelVersion: string;
  kind: 'default' | 'trained' | 'calibrated_default';
  trainedAt?: string | null;
  intercept: number;
  features: { code: string; description: string; coefficient: number; baseline: number }[];
  metrics?: {
    auc: number;
    brier: number;
    baselineAuc: number;
    baselineBrier: number;
    baselineModelVersion: string;
    samples: number;
    churned: number;
    holdout: number;
    logLoss?: number | null;
    lambda?: number | null;
    reliability: { predicted: number; observed: number; count: number }[];
  } | null;
};

type TrainingRun = NonNullable<ScoringSettingsQuery['latestChurnTraining']>;

function ModelPanel({
  model,
  latest,
  canManage,
  onChanged,
}: {
  model: Model;
  /** The workspace's latest training when the page was loaded: one still running is followed here too. */
  latest: TrainingRun | null;
  canManage: boolean;
  onChanged: () => void;
}) {
  const [train, doTrain] = useMutation(StartTrainingDoc);
  const started = train.data?.startChurnTraining ?? latest ?? undefined;
  const [progress, readAgain] = useQuery({
    query: TrainingProgressDoc,
    variables: { id: started?.id ?? '' },
    pause: !started || started.status !== 'running',
    requestPolicy: 'network-only',
  });
  const read = progress.data?.churnTraining;
  // What was read of the training before (urql keeps a query's last answer) is not this one's.
  const run = read && read.id === started?.id ? read : started;
  // Reading it failed (shown below) or found nothing: it is no longer followed, and another may be started.
  const lost = Boolean(progress.error) || (!progress.fetching && progress.data !== undefined && read === null);
  const training = train.fetching || (run?.status === 'running' && !lost);
  useEffect(() => {
    if (!training || train.fetching || progress.fetching) return;
    const timer = setTimeout(() => readAgain({ requestPolicy: 'network-only' }), TRAINING_POLL_MS);
    return () => clearTimeout(timer);
  }, [training, train.fetching, progress.fetching, readAgain]);
  const [reset, doReset] = useMutation(ResetModelDoc);
  const [activate, doActivate] = useMutation(ActivateModelDoc);
  const [confirmReset, setConfirmReset] = useState(false);
  const result = run?.result;
  const inUse = result && model.modelVersion === result.modelVersion;
  return (
    <section className="card" aria-labelledby="model-title">
      <h2 id="model-title">Churn model</h2>
      <p>
        In use: <strong>{model.modelVersion}</strong>
        {model.kind === 'calibrated_default'
          ? ` · the default coefficients, calibrated ${formatDateTime(model.trainedAt!)} on your outcomes (same ranking as the default)`
          : model.trainedAt
            ? ` · trained ${formatDateTime(model.trainedAt)}`
            : ' · the documented default coefficients'}
      </p>
      {model.metrics ? (
        <>
          <p className="small">
            Held out ({model.metrics.holdout} of {model.metrics.samples} labelled customers, {model.metrics.churned} churned, each predicted
            by a model trained without it): AUC {model.metrics.auc.toFixed(3)} vs {model.metrics.baselineAuc.toFixed(3)} for{' '}
            {model.metrics.baselineModelVersion}; Brier {model.metrics.brier.toFixed(3)} vs {model.metrics.baselineBrier.toFixed(3)}
            {model.metrics.logLoss != null ? `; log loss ${model.metrics.logLoss.toFixed(3)}` : ''}
            {model.metrics.lambda != null ? `; regularisation λ = ${model.metrics.lambda}` : ''}.
          </p>
          {model.metrics.reliability.length ? (
            <figure>
              <CalibrationChart bins={model.metrics.reliability} />
              <figcaption className="muted small">
                Calibration on the held-out customers: each point is a fifth of them, its predicted churn against the share that churned.
              </figcaption>
            </figure>
          ) : null}
        </>
      ) : null}
      <p className="muted small">
        Train on your own outcomes: customers whose Stripe subscription was cancelled, and those you labelled churned or retained (on a
        customer’s page or with <code>POST /api/v1/customers/{'{id}'}/churn-outcome</code>). Training needs 20 of each. You see the new
        model beside the default on the same held-out customers before you switch; only a model that ranks them at least as well can be
        used.
      </p>
      {canManage ? (
        <span className="toolbar">
          <button type="button" className="primary" disabled={training} onClick={() => doTrain({})}>
            {training ? 'Training…' : 'Train on my outcomes'}
          </button>
          <button type="button" disabled={!model.trainedAt} onClick={() => setConfirmReset(true)}>
            Use the default model
          </button>
        </span>
      ) : null}
      <FormError error={train.error ?? progress.error} />
      {training && run?.status === 'running' ? (
        <p className="muted small" role="status">
          Training on many labelled customers takes a few minutes. You may leave this page: the result is shown here once it is ready.
        </p>
      ) : null}
      {run?.error ? (
        <p className="error" role="alert">
          Training failed: {run.error.message}
        </p>
      ) : null}
      {result ? (
        <div className={`test-result ${result.eligible ? 'ok' : 'bad'}`} role="status">
          <strong>
            {inUse
              ? `${result.modelVersion} is now in use`
              : result.eligible
                ? `${result.modelVersion} is ready: compare, then switch`
                : `${result.modelVersion} ranks held-out customers worse than the default and cannot be used`}
          </strong>
          {result.kind === 'calibrated_default' ? (
            <p className="small">
              A model with its own slopes ranked held-out customers worse than the default, so this one keeps the default’s coefficients and
              ranking and only calibrates its probabilities on your outcomes.
            </p>
          ) : null}
          <table className="table compact">
            <caption className="small">
              Held out, each customer predicted by a model trained without it ({result.samples} customers)
            </caption>
            <thead>
              <tr>
                <th scope="col">Model</th>
                <th scope="col">AUC (higher is better)</th>
                <th scope="col">Brier (lower is better)</th>
              </tr>
            </thead>
            <tbody>
              <tr>
                <th scope="row">{result.modelVersion}</th>
                <td>{result.auc.toFixed(3)}</td>
                <td>{result.brier.toFixed(3)}</td>
              </tr>
              <tr>
                <th scope="row">{result.baselineModelVersion}</th>
                <td>{result.baselineAuc.toFixed(3)}</td>
                <td>{result.baselineBrier.toFixed(3)}</td>
              </tr>
            </tbody>
          </table>
          {result.reliability.length ? <CalibrationChart bins={result.reliability} /> : null}
          <FormError error={activate.error} />
          {result.eligible && !inUse ? (
            <button
              type="button"
              className="primary"
              disabled={activate.fetching}
              onClick={async () => (await doActivate({ modelVersion: result.modelVersion })).data && onChanged()}
            >
              Use {result.modelVersion}
            </button>
          ) : null}
        </div>
      ) : null}
      <details>
        <summary>
          Coefficients ({model.features.length} features, intercept {model.intercept.toFixed(2)})
        </summary>
        <div className="table-wrap">
          <table className="table compact">
            <thead>
              <tr>
                <th scope="col">Feature</th>
                <th scope="col">Coefficient</th>
                <th scope="col">Baseline</th>
              </tr>
            </thead>
            <tbody>
              {model.features.map((f) => (
                <tr key={f.code}>
                  <th scope="row">
                    <code>{f.code}</code>
                    <span className="sub">{f.description}</span>
                  </th>
                  <td>{f.coefficient.toFixed(3)}</td>
                  <td>{f.baseline.toFixed(2)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
      <Dialog title="Go back to the default model?" open={confirmReset} onClose={() => setConfirmReset(false)}>
        <div className="stack">
          <p>Predictions are recomputed with the default coefficients. Your trained model is kept and can be trained again.</p>
          <FormError error={reset.error} />
          <button
            type="button"
            className="primary"
            disabled={reset.fetching}
            onClick={async () => {
              if ((await doReset({})).data) {
                setConfirmReset(false);
                onChanged();
              }
            }}
          >
            Use the default model
          </button>
        </div>
      </Dialog>
    </section>
  );
}
