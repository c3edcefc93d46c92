import { useSearchParams } from 'react-router';
import { useQuery } from 'urql';
import { Pager, useCursorStack } from '../../components/Pager.tsx';
import { SelectFilter } from '../../components/SelectFilter.tsx';
import { Empty, ErrorState, Loading } from '../../components/States.tsx';
import { graphql } from '../../gql/index.ts';
import { formatDateTime, formatRelative } from '../../lib/format.ts';
import { useViewer } from '../../lib/viewer.tsx';

const AuditLogDoc = graphql(`
  query AuditLog($first: Int, $after: String, $action: String, $targetId: String, $since: DateTime, $until: DateTime) {
    auditActions
    auditEvents(first: $first, after: $after, action: $action, targetId: $targetId, since: $since, until: $until) {
      totalCount
      nodes {
        id
        occurredAt
        action
        actorType
        actorLabel
        clientAddress
        targetType
        targetId
        changes
      }
      pageInfo {
        hasNextPage
        endCursor
      }
    }
  }
`);

const PAGE_SIZE = 25;

/** `{ field: { from, to } }` edits as "field: from → to", other facts as "field: value". */
function describeChanges(changes: unknown): string[] {
  if (!changes || typeof changes !== 'object') return [];
  return Object.entries(changes as Record<string, unknown>).map(([k, v]) => {
    const text = (x: unknown) => (x === null || x === undefined ? '—' : typeof x === 'object' ? JSON.stringify(x) : String(x));
    if (v && typeof v === 'object' && 'from' in v && 'to' in v)
      return `${k}: ${text((v as { from: unknown }).from)} → ${text((v as { to: unknown }).to)}`;
    return `${k}: ${text(v)}`;
  });
}

/** A day from a date input as the start of that UTC day, or of the day after for an inclusive end. */
const dayStart = (day: string | null, plusDays = 0) =>
  day ? new Date(Date.parse(`${day}T00:00:00Z`) + plusDays * 86_400_000).toISOString() : null;

export function AuditLog() {
  const { canManage } = useViewer();
  if (!canManage) {
    return (
      <>
        <div className="page-head">
          <h1>Audit log</h1>
        </div>
        <Empty title="Only owners and admins read the audit log" />
      </>
    );
  }
  return <AuditLogTable />;
}

function AuditLogTable() {
  const [params, setParams] = useSearchParams();
  const action = params.get('action') || null;
  const targetId = params.get('target') || null;
  const from = params.get('from') || null;
  const to = params.get('to') || null;
  const update = (k: string, v: string | null) => {
    const next = new URLSearchParams(params);
    if (v) next.set(k, v);
    else next.delete(k);
    setParams(next, { replace: true });
  };
  const pages = useCursorStack([action, targetId, from, to].join('|'));
  const [{ data, error, fetching }, refetch] = useQuery({
    query: AuditLogDoc,
    variables: { first: PAGE_SIZE, after: pages.after, action, targetId, since: dayStart(from), until: dayStart(to, 1) },
  });
  const conn = data?.auditEvents;
  const filtered = Boolean(action || targetId || from || to);

  return (
    <>
      <div className="page-head">
        <h1>Audit log</h1>
      </div>
      <p className="muted">
        Every security-relevant change to the workspace: sign-ins, keys, users and roles, endpoints and secrets, weights, models, retention,
        erasures, exports and the workspace’s deletion, with who did it and from which address. Entries cannot be changed or removed.
      </p>
      <form className="filters" onSubmit={(e) => e.preventDefault()} aria-label="Filter the audit log">
        <SelectFilter
          label="Action"
          any="Any action"
          value={action}
          options={(data?.auditActions ?? []).map((a) => [a, a] as const)}
          onChange={(v) => update('action', v)}
        />
        <label className="field">
          <span>From</span>
          <input type="date" value={from ?? ''} onChange={(e) => update('from', e.target.value || null)} />
        </label>
        <label className="field">
          <span>To</span>
          <input type="date" value={to ?? ''} onChange={(e) => update('to', e.target.value || null)} />
        </label>
        <label className="field">
          <span>Target id</span>
          <input
            value={targetId ?? ''}
            onChange={(e) => update('target', e.target.value.trim() || null)}
            placeholder="A key, endpoint, user or customer id"
          />
        </label>
      </form>
      {error && !conn ? <ErrorState error={error} retry={() => refetch({ requestPolicy: 'network-only' })} /> : null}
      {!conn && fetching ? <Loading label="Loading the audit log" /> : null}
      {conn && conn.totalCount === 0 ? <Empty title={filtered ? 'No entries match these filters' : 'Nothing recorded yet'} /> : null}
      {conn && conn.totalCount > 0 ? (
        <>
          <div className="table-wrap">
            <table className="table" aria-label="Audit log">
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Action</th>
                  <th scope="col">Actor</th>
                  <th scope="col">Target</th>
                  <th scope="col">Details</th>
                  <th scope="col" className="hide-narrow">
                    Address
                  </th>
                </tr>
              </thead>
              <tbody>
                {conn.nodes.map((e) => (
                  <tr key={e.id}>
                    <td title={formatDateTime(e.occurredAt)}>{formatRelative(e.occurredAt)}</td>
                    <td>
                      <code>{e.action}</code>
                    </td>
                    <td>
                      {e.actorLabel ?? '—'} <span className="muted small">({e.actorType.replace('_', ' ')})</span>
                    </td>
                    <td className="small">{e.targetType ? `${e.targetType} ${e.targetId ?? ''}` : '—'}</td>
                    <td className="small">
                      {describeChanges(e.changes).map((line) => (
                        <div key={line}>{line}</div>
                      ))}
                    </td>
                    <td className="mono small hide-narrow">{e.clientAddress ?? '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager pages={pages} connection={conn} pageSize={PAGE_SIZE} noun="entries" />
        </>
      ) : null}
    </>
  );
}
