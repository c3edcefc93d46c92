import { useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { useMutation, useQuery } from 'urql';
import { SeverityBadge, StatusPill } from '../components/Badges.tsx';
import { SelectFilter } from '../components/SelectFilter.tsx';
import { Pager, useCursorStack } from '../components/Pager.tsx';
import { Empty, ErrorState, FormError, Loading } from '../components/States.tsx';
import { graphql } from '../gql/index.ts';
import { AlertSeverity, AlertStatus, AlertType } from '../gql/graphql.ts';
import { formatDateTime, formatRelative, humanize, ranked } from '../lib/format.ts';
import { useDebounced } from '../lib/use-debounced.ts';
import { useViewer } from '../lib/viewer.tsx';

const AlertsDoc = graphql(`
  query AlertInbox($first: Int, $after: String, $status: AlertStatus, $severity: AlertSeverity, $alertType: AlertType, $customerId: UUID) {
    alerts(first: $first, after: $after, status: $status, severity: $severity, alertType: $alertType, customerId: $customerId) {
      totalCount
      pageInfo {
        endCursor
        hasNextPage
      }
      nodes {
        id
        alertType
        severity
        status
        title
        message
        createdAt
        acknowledgedAt
        snoozedUntil
        resolvedAt
        customer {
          id
          name
        }
      }
    }
  }
`);

const CustomerLookupDoc = graphql(`
  query CustomerLookup($search: String) {
    customers(search: $search, first: 8, orderBy: { field: name, direction: asc }) {
      nodes {
        id
        name
      }
    }
  }
`);

const CustomerNameDoc = graphql(`
  query CustomerName($id: UUID!) {
    customer(id: $id) {
      id
      name
    }
  }
`);

const UpdateAlertDoc = graphql(`
  mutation UpdateAlert($id: UUID!, $input: UpdateAlertInput!) {
    updateAlert(id: $id, input: $input) {
      id
      status
      acknowledgedAt
      snoozedUntil
      resolvedAt
      updatedAt
    }
  }
`);

const PAGE_SIZE = 25;
// In the order of the inbox's work: what needs attention first.
const STATUSES = ranked(AlertStatus, { open: 0, acknowledged: 1, snoozed: 2, resolved: 3 });
const SEVERITIES = ranked(AlertSeverity, { critical: 0, high: 1, medium: 2, low: 3 });
const TYPES = Object.values(AlertType);
const SNOOZE: [string, number][] = [
  ['1 hour', 3_600_000],
  ['1 day', 86_400_000],
  ['3 days', 3 * 86_400_000],
  ['1 week', 7 * 86_400_000],
];

function CustomerFilter({ id, onChange }: { id: string | null; onChange: (id: string | null) => void }) {
  const [text, setText] = useState('');
  const search = useDebounced(text.trim());
  const [{ data }] = useQuery({ query: CustomerLookupDoc, variables: { search }, pause: !search });
  const [{ data: named }] = useQuery({ query: CustomerNameDoc, variables: { id: id ?? '' }, pause: !id });
  if (id) {
    return (
      <div className="field">
        <span>Customer</span>
        <span className="chip">
          {named?.customer.name ?? 'Loading…'}
          <button type="button" className="ghost" aria-label="Clear the customer filter" onClick={() => onChange(null)}>
            ×
          </button>
        </span>
      </div>
    );
  }
  const options = data?.customers.nodes ?? [];
  return (
    <label className="field">
      <span>Customer</span>
      <input
        list="customer-options"
        placeholder="Type a name"
        value={text}
        onChange={(e) => {
          setText(e.target.value);
          const hit = options.find((o) => o.name === e.target.value);
          if (hit) {
            setText('');
            onChange(hit.id);
          }
        }}
      />
      <datalist id="customer-options">
        {options.map((o) => (
          <option key={o.id} value={o.name} />
        ))}
      </datalist>
    </label>
  );
}

export function Alerts() {
  const { canWrite } = useViewer();
  const [params, setParams] = useSearchParams();
  // Open alerts by default; `status=` (empty) in the URL means every status.
  const status = (params.has('status') ? params.get('status') || null : 'open') as AlertStatus | null;
  const severity = (params.get('severity') as AlertSeverity | null) || null;
  const alertType = (params.get('type') as AlertType | null) || null;
  const customerId = params.get('customer') || null;
  const update = (k: string, v: string | null) => {
    const next = new URLSearchParams(params);
    if (k === 'status') next.set('status', v ?? '');
    else if (v) next.set(k, v);
    else next.delete(k);
    setParams(next, { replace: true });
  };

  const pages = useCursorStack([status, severity, alertType, customerId].join('|'));
  const [{ data, error, fetching }, refetch] = useQuery({
    query: AlertsDoc,
    variables: { first: PAGE_SIZE, after: pages.after, status, severity, alertType, customerId },
  });
  const [change, updateAlert] = useMutation(UpdateAlertDoc);
  const [done, setDone] = useState<string | null>(null);

  const act = async (id: string, input: { status: AlertStatus; snoozedUntil?: string }, what: string) => {
    const r = await updateAlert({ id, input });
    if (!r.error) {
      setDone(what);
      refetch({ requestPolicy: 'network-only' });
    }
  };
  const conn = data?.alerts;
  const filtered = status !== 'open' || severity || alertType || customerId;

  return (
    <>
      <div className="page-head">
        <h1>Alerts</h1>
      </div>
      <form className="filters" onSubmit={(e) => e.preventDefault()} aria-label="Filter alerts">
        <SelectFilter label="Status" any="Any status" value={status} options={STATUSES} onChange={(v) => update('status', v)} />
        <SelectFilter label="Severity" any="Any severity" value={severity} options={SEVERITIES} onChange={(v) => update('severity', v)} />
        <SelectFilter label="Type" any="Any type" value={alertType} options={TYPES} onChange={(v) => update('type', v)} />
        <CustomerFilter id={customerId} onChange={(id) => update('customer', id)} />
      </form>
      <p role="status" className="small" aria-live="polite">
        {done}
      </p>
      <FormError error={change.error} />

      {error && !conn ? <ErrorState error={error} retry={() => refetch({ requestPolicy: 'network-only' })} /> : null}
      {!conn && fetching ? <Loading label="Loading alerts" /> : null}
      {conn && conn.totalCount === 0 ? (
        <Empty title={filtered ? 'No alerts match these filters' : 'No open alerts'}>
          <p>
            {filtered
              ? 'Try another status or clear a filter.'
              : 'Alerts open when a customer’s health drops, a payment fails, usage stops or support piles up, and resolve themselves when the condition clears.'}
          </p>
        </Empty>
      ) : null}
      {conn && conn.totalCount > 0 ? (
        <>
          <ul className="alert-list">
            {conn.nodes.map((a) => (
              <li key={a.id} className={`alert alert-${a.severity}`} data-alert-id={a.id}>
                <div className="alert-main">
                  <div>
                    <SeverityBadge severity={a.severity} /> <StatusPill status={a.status} />{' '}
                    <span className="muted small">{humanize(a.alertType)}</span>
                  </div>
                  <p className="alert-title">
                    <strong>{a.title}</strong> · <Link to={`/customers/${a.customer.id}`}>{a.customer.name}</Link>
                  </p>
                  <p className="small">{a.message}</p>
                  <p className="muted small">
                    Opened <time title={formatDateTime(a.createdAt)}>{formatRelative(a.createdAt)}</time>
                    {a.status === 'snoozed' && a.snoozedUntil ? ` · snoozed until ${formatDateTime(a.snoozedUntil)}` : ''}
                    {a.status === 'resolved' && a.resolvedAt ? ` · resolved ${formatRelative(a.resolvedAt)}` : ''}
                  </p>
                </div>
                {canWrite ? (
                  <div className="alert-actions" aria-label={`Actions for ${a.title}`} role="group">
                    {a.status === 'open' ? (
                      <button
                        type="button"
                        disabled={change.fetching}
                        onClick={() => act(a.id, { status: 'acknowledged' }, 'Alert acknowledged.')}
                      >
                        Acknowledge
                      </button>
                    ) : null}
                    {a.status !== 'resolved' ? (
                      <select
                        aria-label="Snooze for"
                        value=""
                        disabled={change.fetching}
                        onChange={(e) => {
                          const ms = Number(e.target.value);
                          if (ms) act(a.id, { status: 'snoozed', snoozedUntil: new Date(Date.now() + ms).toISOString() }, 'Alert snoozed.');
                        }}
                      >
                        <option value="">Snooze…</option>
                        {SNOOZE.map(([label, ms]) => (
                          <option key={label} value={ms}>
                            {label}
                          </option>
                        ))}
                      </select>
                    ) : null}
                    {a.status !== 'resolved' ? (
                      <button type="button" disabled={change.fetching} onClick={() => act(a.id, { status: 'resolved' }, 'Alert resolved.')}>
                        Resolve
                      </button>
                    ) : null}
                    {a.status !== 'open' ? (
                      <button
                        type="button"
                        className="ghost"
                        disabled={change.fetching}
                        onClick={() => act(a.id, { status: 'open' }, 'Alert reopened.')}
                      >
                        Reopen
                      </button>
                    ) : null}
                  </div>
                ) : null}
              </li>
            ))}
          </ul>
          <Pager pages={pages} connection={conn} pageSize={PAGE_SIZE} noun="alerts" />
        </>
      ) : null}
    </>
  );
}
