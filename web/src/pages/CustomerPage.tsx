import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { useMutation, useQuery } from 'urql';
import { Dialog } from '../components/Dialog.tsx';
import { TypeToConfirm } from '../components/TypeToConfirm.tsx';
import { HealthBadge, RiskBadge, SeverityBadge, StatusPill, Trend } from '../components/Badges.tsx';
import { DimensionChart, HistoryChart } from '../components/Charts.tsx';
import { DayDrivers } from '../components/DayDrivers.tsx';
import { Empty, ErrorState, FormError, Loading } from '../components/States.tsx';
import { graphql } from '../gql/index.ts';
import type { Provider } from '../gql/graphql.ts';
import { DIMENSION_LABELS, formatDate, formatDateTime, formatPercent, formatRelative, formatScore, humanize } from '../lib/format.ts';
import { PROVIDER_GUIDES, providerLabel } from '../lib/providers.ts';
import { useAuth } from '../lib/auth.tsx';
import { downloadExport } from '../lib/download.ts';
import { useViewer } from '../lib/viewer.tsx';
import { useSubscription } from '../lib/live.ts';

const EraseCustomerDoc = graphql(`
  mutation EraseCustomer($id: UUID!) {
    deleteCustomer(id: $id) {
      id
      externalId
    }
  }
`);

/** Export and erasure of one customer, for owners and admins: an access request, or a request to be forgotten. */
function CustomerDataActions({ id, name }: { id: string; name: string }) {
  const { session } = useAuth();
  const navigate = useNavigate();
  const [erasing, setErasing] = useState(false);
  const [exporting, setExporting] = useState<string | null>(null);
  const [erased, erase] = useMutation(EraseCustomerDoc);
  const exportData = async () => {
    setExporting('Preparing the export…');
    try {
      await downloadExport(`/api/v1/customers/${id}/export`, session!.token);
      setExporting('The export was downloaded.');
    } catch (e) {
      setExporting((e as Error).message);
    }
  };
  const confirm = async () => {
    const r = await erase({ id });
    if (r.data) navigate('/customers', { state: { notice: `${name} was erased, with every record about it.` } });
  };
  return (
    <span className="page-actions">
      <button type="button" onClick={exportData}>
        Export data
      </button>
      <button type="button" className="danger" onClick={() => setErasing(true)}>
        Erase…
      </button>
      <span role="status" className="small">
        {exporting}
      </span>
      <Dialog title={`Erase “${name}”`} open={erasing} onClose={() => setErasing(false)}>
        <TypeToConfirm
          expected={name}
          label="Type the customer’s name to confirm"
          action="Erase for good"
          busy={erased.fetching}
          error={erased.error}
          onConfirm={confirm}
          onCancel={() => setErasing(false)}
        >
          <p>
            This removes the customer for good, in one step: its identities, signals, health history, churn prediction, labels and alerts,
            and the raw provider events that name it. Invoices and subscriptions stay as revenue facts, without the link. Your webhook
            endpoints receive <code>customer.deleted</code>. It cannot be undone.
          </p>
        </TypeToConfirm>
      </Dialog>
    </span>
  );
}

const CustomerDoc = graphql(`
  query CustomerPage($id: UUID!) {
    customer(id: $id) {
      id
      name
      domain
      email
      externalId
      createdAt
      identities {
        provider
        externalId
      }
      health {
        score
        status
        computedAt
        weakestDimension
        trend {
          d7
          d30
        }
        dimensions {
          key
          score
          weight
          trend
          signals {
            key
            label
            value
          }
          stale
          staleSources
        }
        confidence
      }
      churnPrediction {
        probability
        riskLevel
        modelVersion
        predictedAt
        riskFactors {
          code
          description
          impact
        }
        recommendedInterventions {
          code
          title
          description
          priority
        }
      }
      healthHistory(first: 90) {
        nodes {
          day
          score
          churnProbability
          usage
          engagement
          support
          billing
          growth
        }
      }
      recentEvents(first: 20) {
        id
        kind
        label
        source
        occurredAt
        value
        sentiment
        attributes
      }
    }
    alerts(customerId: $id, first: 10) {
      totalCount
      nodes {
        ...AlertFields
      }
    }
  }
`);

const OutcomeDoc = graphql(`
  mutation RecordOutcome($customerId: UUID!, $churned: Boolean!) {
    recordChurnOutcome(customerId: $customerId, churned: $churned) {
      churned
      at
    }
  }
`);

function signalValue(v: unknown): string {
  if (v === null || v === undefined) return '—';
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : v.toFixed(2);
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  return String(v);
}

function eventName(attributes: unknown): string | null {
  const name = (attributes as { event?: unknown } | null)?.event;
  return typeof name === 'string' ? name : null;
}

const CustomerChangedDoc = graphql(`
  subscription CustomerChanged($customerId: UUID!) {
    customerChanged(customerId: $customerId) {
      id
    }
  }
`);

// A signal's source is a provider's name or `api`.
const sourceLabel = (source: string) =>
  source === 'api' ? 'Events API' : (PROVIDER_GUIDES[source as Provider]?.label ?? humanize(source));

/** The silent providers, by name: "Stripe", "Stripe and Intercom". */
const providers = (ps: readonly Provider[]) => new Intl.ListFormat('en', { type: 'conjunction' }).format(ps.map(providerLabel));

/** Which dimensions are stale, and why. */
function staleNote(
  dimensions: readonly { key: keyof typeof DIMENSION_LABELS; score: number | null; stale: boolean; staleSources: Provider[] }[],
) {
  const stale = dimensions.filter((d) => d.stale && d.score !== null);
  const sources = [...new Set(stale.flatMap((d) => d.staleSources))];
  return `${stale.map((d) => DIMENSION_LABELS[d.key]).join(', ')} may be out of date: no events from ${providers(sources)} for longer than usual.`;
}

export function CustomerPage() {
  const { id = '' } = useParams();
  const { canWrite, canManage } = useViewer();
  const [{ data, error, fetching }, refetch] = useQuery({ query: CustomerDoc, variables: { id } });
  const [outcome, recordOutcome] = useMutation(OutcomeDoc);
  const [day, setDay] = useState<string | null>(null);
  // The page reads everything again when this customer changes (health, prediction, alerts), or after the
  // live stream was broken for a while, without a reload.
  const reread = () => refetch({ requestPolicy: 'network-only' });
  useSubscription(CustomerChangedDoc, { customerId: id }, reread, reread);

  if (error && !data) return <ErrorState error={error} retry={() => refetch({ requestPolicy: 'network-only' })} />;
  if (!data) return fetching ? <Loading label="Loading customer" /> : null;
  const c = data.customer;
  const h = c.health;
  const p = c.churnPrediction;

  return (
    <>
      <nav className="crumbs" aria-label="Breadcrumb">
        <Link to="/customers">Customers</Link> / <span aria-current="page">{c.name}</span>
      </nav>
      <div className="page-head">
        <h1>{c.name}</h1>
        <HealthBadge status={h.status} />
        {canManage ? <CustomerDataActions id={c.id} name={c.name} /> : null}
      </div>
      <p className="muted">
        {[c.domain, c.email, c.externalId && `external id ${c.externalId}`].filter(Boolean).join(' · ')}
        {c.identities.length ? ` · ${c.identities.map((i) => `${providerLabel(i.provider)} ${i.externalId}`).join(', ')}` : ''}
      </p>

      <section className="grid-2">
        <div className="card">
          <h2>Health</h2>
          {h.score === null ? (
            <Empty title="Not scored yet">
              <p>
                A score appears once this customer has events from a connected provider or the events API; scores are recomputed within a
                minute of new data.
              </p>
            </Empty>
          ) : (
            <>
              <div className="big-number">
                <span className="big" data-testid="health-score">
                  {formatScore(h.score)}
                </span>
                <span className="muted">/ 100</span>
                <span>
                  7 days <Trend value={h.trend.d7} /> · 30 days <Trend value={h.trend.d30} />
                </span>
              </div>
              <p className="muted small">
                Weakest: {h.weakestDimension ? DIMENSION_LABELS[h.weakestDimension] : '—'} · computed {formatRelative(h.computedAt)}
              </p>
              {h.confidence !== null && h.confidence < 1 ? (
                <p className="small warning" data-testid="health-confidence" role="status">
                  Confidence {formatPercent(h.confidence)}: {staleNote(h.dimensions)}
                </p>
              ) : null}
              <DimensionChart dimensions={h.dimensions} />
            </>
          )}
        </div>
        <div className="card">
          <h2>Churn prediction</h2>
          {p.probability === null ? (
            <Empty title="No prediction yet">
              <p>The prediction is made with the first score.</p>
            </Empty>
          ) : (
            <>
              <div className="big-number">
                <span className="big">{formatPercent(p.probability)}</span>
                <RiskBadge level={p.riskLevel} />
              </div>
              <p className="muted small">
                Model {p.modelVersion} · {formatRelative(p.predictedAt)}
              </p>
              <h3>Risk factors</h3>
              {p.riskFactors.length ? (
                <ul className="factors">
                  {p.riskFactors.map((f) => (
                    <li key={f.code}>
                      <span className="factor-bar" aria-hidden="true">
                        <span style={{ width: `${Math.round(f.impact * 100)}%` }} />
                      </span>
                      <span>
                        {f.description} <span className="muted">({formatPercent(f.impact)} of the risk)</span>
                      </span>
                    </li>
                  ))}
                </ul>
              ) : (
                <p className="muted">Nothing pushes this customer’s risk above the baseline.</p>
              )}
              <h3>Recommended interventions</h3>
              {p.recommendedInterventions.length ? (
                <ol className="interventions">
                  {p.recommendedInterventions.map((i) => (
                    <li key={i.code}>
                      <strong>{i.title}</strong> <span className={`pill pill-${i.priority}`}>{i.priority}</span>
                      <p>{i.description}</p>
                    </li>
                  ))}
                </ol>
              ) : (
                <p className="muted">None needed now.</p>
              )}
            </>
          )}
          {canWrite ? (
            <div className="outcome">
              <span className="muted small">Label this customer for training your churn model:</span>
              <button type="button" disabled={outcome.fetching} onClick={() => recordOutcome({ customerId: c.id, churned: true })}>
                Churned
              </button>
              <button type="button" disabled={outcome.fetching} onClick={() => recordOutcome({ customerId: c.id, churned: false })}>
                Retained
              </button>
              <span role="status" className="small">
                {outcome.data ? `Recorded as ${outcome.data.recordChurnOutcome.churned ? 'churned' : 'retained'}.` : ''}
              </span>
              <FormError error={outcome.error} />
            </div>
          ) : null}
        </div>
      </section>

      {h.score !== null ? (
        <section className="card">
          <h2>What drives each dimension</h2>
          <div className="dimensions">
            {h.dimensions.map((d) => (
              <div key={d.key} className="dimension">
                <h3>
                  {DIMENSION_LABELS[d.key]} <span className="dim-score">{d.score === null ? 'no data' : formatScore(d.score)}</span>
                  {d.stale && d.score !== null ? (
                    <span
                      className="pill pill-expiring"
                      data-testid={`stale-${d.key}`}
                      title={`No events from ${providers(d.staleSources)} for longer than usual`}
                    >
                      Stale
                    </span>
                  ) : null}
                </h3>
                <p className="muted small">
                  {d.score === null ? 'No data: its weight goes to the other dimensions' : `Weight ${formatPercent(d.weight)}`}
                  {d.trend !== null ? (
                    <>
                      {' '}
                      · 7 days <Trend value={d.trend} />
                    </>
                  ) : null}
                </p>
                <dl className="signals">
                  {d.signals.map((s) => (
                    <div key={s.key}>
                      <dt>{s.label}</dt>
                      <dd>{signalValue(s.value)}</dd>
                    </div>
                  ))}
                </dl>
              </div>
            ))}
          </div>
        </section>
      ) : null}

      <section className="card">
        <h2>Score history</h2>
        {c.healthHistory.nodes.length > 1 ? (
          <HistoryChart points={c.healthHistory.nodes} />
        ) : (
          <Empty title="Not enough history yet">
            <p>One point is kept per day; the chart appears from the second day.</p>
          </Empty>
        )}
        {c.healthHistory.nodes.length ? (
          <nav aria-label="Days of the score history" className="history-days">
            {c.healthHistory.nodes.slice(0, 14).map((point, i, all) => {
              const before = all[i + 1]?.score;
              const moved = point.score !== null && before !== null && before !== undefined ? point.score - before : null;
              return (
                <button
                  key={point.day}
                  type="button"
                  aria-pressed={day === point.day}
                  onClick={() => setDay(day === point.day ? null : point.day)}
                >
                  {formatDate(point.day)} · {formatScore(point.score)}
                  {moved ? ` (${moved > 0 ? '+' : '−'}${Math.abs(moved)})` : ''}
                </button>
              );
            })}
          </nav>
        ) : null}
        {day ? <DayDrivers customerId={c.id} day={day} onClose={() => setDay(null)} /> : null}
      </section>

      <section className="grid-2">
        <div className="card">
          <div className="card-head">
            <h2>Alerts</h2>
            {data.alerts.totalCount ? <Link to={`/alerts?customer=${c.id}&status=`}>All {data.alerts.totalCount} alerts →</Link> : null}
          </div>
          {data.alerts.nodes.length ? (
            <ul className="list">
              {data.alerts.nodes.map((a) => (
                <li key={a.id}>
                  <SeverityBadge severity={a.severity} /> <StatusPill status={a.status} /> <strong>{a.title}</strong>
                  <span className="muted small"> · {formatRelative(a.createdAt)}</span>
                  <p className="small">{a.message}</p>
                </li>
              ))}
            </ul>
          ) : (
            <p className="muted">No alerts for this customer.</p>
          )}
        </div>
        <div className="card">
          <h2>Recent events</h2>
          {c.recentEvents.length ? (
            <ul className="list events">
              {c.recentEvents.map((e) => (
                <li key={e.id}>
                  <span className="event-label">
                    {e.label}
                    {eventName(e.attributes) ? <code className="small"> {eventName(e.attributes)}</code> : null}
                  </span>
                  <span className="muted small">
                    {sourceLabel(e.source)} · <time title={formatDateTime(e.occurredAt)}>{formatRelative(e.occurredAt)}</time>
                    {e.sentiment !== null ? ` · tone ${e.sentiment > 0.1 ? 'positive' : e.sentiment < -0.1 ? 'negative' : 'neutral'}` : ''}
                  </span>
                </li>
              ))}
            </ul>
          ) : (
            <p className="muted">No events from providers or the events API yet.</p>
          )}
        </div>
      </section>
    </>
  );
}
