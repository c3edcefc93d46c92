import { useState } from 'react';
import { useQuery } from 'urql';
import { graphql } from '../gql/index.ts';
import { DIMENSION_LABELS, formatDate, formatDateTime, humanize } from '../lib/format.ts';
import { ErrorState, Loading } from './States.tsx';

const DayChangesDoc = graphql(`
  query DayHealthChanges($id: UUID!, $since: DateTime!, $until: DateTime!) {
    customer(id: $id) {
      id
      healthChanges(since: $since, until: $until, first: 25) {
        nodes {
          id
          computedAt
          score {
            from
            to
            change
          }
          churnProbability {
            from
            to
            change
          }
          drivers {
            input
            label
            from
            to
            score
            churnProbability
            dimensions {
              key
              points
            }
            sources {
              type
              kind
              occurredAt
              usageEvent
              provider
              eventType
              providerEventId
              receivedAt
              actor
              bodyRetained
              body
            }
          }
        }
      }
    }
  }
`);

const signed = (n: number, digits = 0) => `${n > 0 ? '+' : n < 0 ? '−' : ''}${Math.abs(n).toFixed(digits)}`;
const points = (n: number) => signed(n, Number.isInteger(n) ? 0 : 1);
const percentPoints = (p: number) => `${signed(p * 100, 2)} pp`;

function shown(v: unknown): string {
  if (v === null || v === undefined) return '—';
  if (typeof v === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(v)) return formatDateTime(v);
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : v.toFixed(2);
  if (typeof v === 'object')
    return Object.entries(v as Record<string, unknown>)
      .map(([k, x]) => `${k} ${shown(x)}`)
      .join(', ');
  return String(v);
}

type Source = {
  type: string;
  kind: string;
  occurredAt: string;
  usageEvent?: string | null;
  provider?: string | null;
  eventType?: string | null;
  providerEventId?: string | null;
  receivedAt?: string | null;
  actor?: string | null;
  bodyRetained?: boolean | null;
  body?: string | null;
};

function SourceItem({ s }: { s: Source }) {
  if (s.type === 'provider_event')
    return (
      <li className="source">
        <span>
          {humanize(s.provider ?? '')} <code>{s.eventType}</code> <code className="small">{s.providerEventId}</code>
        </span>
        <span className="muted small"> · received {formatDateTime(s.receivedAt)}</span>
        {s.bodyRetained && s.body ? (
          <details>
            <summary>Event body as received</summary>
            <pre className="event-body">{s.body}</pre>
          </details>
        ) : (
          <p className="muted small" data-testid="body-gone">
            The body was removed by retention; the event’s id, type and time are kept.
          </p>
        )}
      </li>
    );
  if (s.type === 'api_change')
    return (
      <li className="source">
        Changed over the API: <code>{s.kind}</code>
        <span className="muted small">
          {' '}
          · {s.actor ?? 'unknown'} · {formatDateTime(s.occurredAt)}
        </span>
      </li>
    );
  return (
    <li className="source">
      {s.type === 'usage_event' ? 'Usage event' : 'Signal'} <code>{s.usageEvent ?? s.kind}</code>
      <span className="muted small"> · {formatDateTime(s.occurredAt)}</span>
    </li>
  );
}

/** What moved the score on one day: each of the day's changes with its drivers and their sources. */
export function DayDrivers({ customerId, day, onClose }: { customerId: string; day: string; onClose: () => void }) {
  const since = `${day}T00:00:00.000Z`;
  const until = new Date(Date.parse(since) + 86_400_000).toISOString();
  const [{ data, error, fetching }, refetch] = useQuery({ query: DayChangesDoc, variables: { id: customerId, since, until } });
  const [open, setOpen] = useState<string | null>(null);
  if (error && !data) return <ErrorState error={error} retry={() => refetch({ requestPolicy: 'network-only' })} />;
  if (!data) return fetching ? <Loading label="Loading what moved the score" /> : null;
  const changes = data.customer.healthChanges.nodes;
  return (
    <section className="day-drivers" aria-label={`What moved the score on ${formatDate(day)}`} data-testid="day-drivers">
      <div className="card-head">
        <h3>What moved the score on {formatDate(day)}</h3>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
      {changes.length === 0 ? (
        <p className="muted">Nothing moved the score, a dimension or the churn probability that day.</p>
      ) : (
        changes.map((c) => (
          <article key={c.id} className="change">
            <p>
              <strong>
                {c.score.from ?? '—'} → {c.score.to ?? '—'}
              </strong>
              {c.score.change !== null ? ` (${points(c.score.change)})` : ''} · churn{' '}
              {c.churnProbability.change !== null ? percentPoints(c.churnProbability.change) : '—'}
              <span className="muted small"> · {formatDateTime(c.computedAt)}</span>
            </p>
            <table className="drivers">
              <thead>
                <tr>
                  <th scope="col">Input</th>
                  <th scope="col">Before → after</th>
                  <th scope="col">Score</th>
                  <th scope="col">Dimensions</th>
                  <th scope="col">Churn</th>
                  <th scope="col">Sources</th>
                </tr>
              </thead>
              <tbody>
                {c.drivers.map((d) => {
                  const key = `${c.id}:${d.input}`;
                  return (
                    <tr key={key}>
                      <th scope="row">{d.label}</th>
                      <td>
                        {shown(d.from)} → {shown(d.to)}
                      </td>
                      <td>{points(d.score)}</td>
                      <td>{d.dimensions.map((x) => `${DIMENSION_LABELS[x.key]} ${points(x.points)}`).join(', ') || '—'}</td>
                      <td>{percentPoints(d.churnProbability)}</td>
                      <td>
                        {d.sources.length ? (
                          <>
                            <button
                              type="button"
                              className="link"
                              aria-expanded={open === key}
                              onClick={() => setOpen(open === key ? null : key)}
                            >
                              {d.sources.length} source{d.sources.length === 1 ? '' : 's'}
                            </button>
                            {open === key ? (
                              <ul className="list sources">
                                {d.sources.map((s, i) => (
                                  <SourceItem key={i} s={s} />
                                ))}
                              </ul>
                            ) : null}
                          </>
                        ) : (
                          <span className="muted small">{d.label.startsWith('Time') ? 'time passing' : '—'}</span>
                        )}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </article>
        ))
      )}
    </section>
  );
}
