import { useEffect, useState } from 'react';
import { Link, useLocation, useSearchParams } from 'react-router';
import { useQuery } from 'urql';
import { HealthBadge, RiskBadge, ScoreBar, Trend } from '../components/Badges.tsx';
import { Pager, useCursorStack } from '../components/Pager.tsx';
import { SelectFilter } from '../components/SelectFilter.tsx';
import { Empty, ErrorState, Loading } from '../components/States.tsx';
import { graphql } from '../gql/index.ts';
import { type CustomerSortField, type CustomerTableQuery, HealthStatus, RiskLevel, type SortDirection } from '../gql/graphql.ts';
import { DIMENSION_LABELS, formatDate, formatScore, ranked } from '../lib/format.ts';
import { useDebounced } from '../lib/use-debounced.ts';
import { useSubscription } from '../lib/live.ts';

const PortfolioDoc = graphql(`
  query Portfolio {
    portfolio {
      customers
      healthy
      neutral
      atRisk
      unscored
      highRisk
      averageScore
      openAlerts
      criticalAlerts
    }
  }
`);

const CustomersDoc = graphql(`
  query CustomerTable(
    $first: Int
    $after: String
    $search: String
    $healthStatus: HealthStatus
    $riskLevel: RiskLevel
    $orderBy: CustomerOrder
  ) {
    customers(first: $first, after: $after, search: $search, healthStatus: $healthStatus, riskLevel: $riskLevel, orderBy: $orderBy) {
      totalCount
      pageInfo {
        endCursor
        hasNextPage
      }
      nodes {
        id
        name
        domain
        externalId
        healthScore
        healthStatus
        churnProbability
        churnRiskLevel
        createdAt
        health {
          weakestDimension
          trend {
            d7
            d30
          }
        }
      }
    }
  }
`);

// The same fields as a row of the table: a change replaces the row's values as they come.
const RowChangedDoc = graphql(`
  subscription CustomerRowChanged {
    customerChanged {
      id
      customerId
      customer {
        id
        name
        domain
        externalId
        healthScore
        healthStatus
        churnProbability
        churnRiskLevel
        createdAt
        health {
          weakestDimension
          trend {
            d7
            d30
          }
        }
      }
    }
  }
`);

type Row = NonNullable<CustomerTableQuery['customers']>['nodes'][number];

const PAGE_SIZE = 25;
const SORTS: { field: CustomerSortField; label: string }[] = [
  { field: 'name', label: 'Customer' },
  { field: 'healthScore', label: 'Health score' },
  { field: 'churnProbability', label: 'Churn risk' },
  { field: 'createdAt', label: 'Added' },
];
const STATUSES = ranked(HealthStatus, { healthy: 0, neutral: 1, at_risk: 2 });
const RISKS = ranked(RiskLevel, { critical: 0, high: 1, medium: 2, low: 3 });

function PortfolioSummary({ version }: { version: number }) {
  const [{ data }, refetch] = useQuery({ query: PortfolioDoc });
  // Counts move with every change the table hears of.
  useEffect(() => {
    if (version > 0) refetch({ requestPolicy: 'network-only' });
  }, [version]);
  const p = data?.portfolio;
  if (!p) return <div className="summary summary-placeholder" aria-hidden="true" />;
  const tiles: [string, string, string?][] = [
    ['Customers', String(p.customers)],
    ['Average score', formatScore(p.averageScore)],
    ['Healthy', String(p.healthy), 'healthy'],
    ['Neutral', String(p.neutral), 'neutral'],
    ['At risk', String(p.atRisk), 'at_risk'],
    ['High churn risk', String(p.highRisk), 'at_risk'],
    [p.criticalAlerts ? `Open alerts (${p.criticalAlerts} critical)` : 'Open alerts', String(p.openAlerts)],
  ];
  return (
    <section className="summary" aria-label="Portfolio">
      {tiles.map(([label, value, tone]) => (
        <div key={label} className={`tile ${tone ? `tile-${tone}` : ''}`}>
          <span className="tile-label">{label}</span>
          <span className="tile-value">{value}</span>
        </div>
      ))}
    </section>
  );
}

export function Customers() {
  const [params, setParams] = useSearchParams();
  const sortField = (params.get('sort') as CustomerSortField | null) ?? 'healthScore';
  const direction = (params.get('dir') as SortDirection | null) ?? 'asc';
  const status = (params.get('status') as HealthStatus | null) ?? null;
  const risk = (params.get('risk') as RiskLevel | null) ?? null;
  const [searchText, setSearchText] = useState(params.get('q') ?? '');
  const search = useDebounced(searchText.trim());

  const update = (changes: Record<string, string | null>) => {
    const next = new URLSearchParams(params);
    for (const [k, v] of Object.entries(changes)) {
      if (v) next.set(k, v);
      else next.delete(k);
    }
    setParams(next, { replace: true });
  };
  useEffect(() => {
    if ((params.get('q') ?? '') !== search) update({ q: search || null });
    // Only the debounced text drives the URL.
  }, [search]);

  const filterKey = [sortField, direction, status, risk, search].join('|');
  const pages = useCursorStack(filterKey);
  const [{ data, error, fetching }, refetch] = useQuery({
    query: CustomersDoc,
    variables: {
      first: PAGE_SIZE,
      after: pages.after,
      search: search || null,
      healthStatus: status,
      riskLevel: risk,
      orderBy: { field: sortField, direction },
    },
  });

  // Rows as the live stream last described them, over the page as it was read; a page read again replaces them.
  const [live, setLive] = useState<Record<string, Row>>({});
  const [changes, setChanges] = useState(0);
  useEffect(() => setLive({}), [data]);
  useSubscription(
    RowChangedDoc,
    {},
    ({ customerChanged: change }) => {
      const row = change.customer;
      if (row) setLive((rows) => ({ ...rows, [row.id]: row }));
      setChanges((n) => n + 1);
    },
    () => refetch({ requestPolicy: 'network-only' }),
  );

  const sortBy = (field: CustomerSortField) => {
    const dir: SortDirection =
      field === sortField ? (direction === 'asc' ? 'desc' : 'asc') : field === 'name' || field === 'healthScore' ? 'asc' : 'desc';
    update({ sort: field, dir });
  };
  const filtered = Boolean(status || risk || search);
  const conn = data?.customers;
  // What the page that sent the user here did (an erasure).
  const notice = (useLocation().state as { notice?: string } | null)?.notice;

  return (
    <>
      <div className="page-head">
        <h1>Customers</h1>
      </div>
      {notice ? (
        <p role="status" className="notice">
          {notice}
        </p>
      ) : null}
      <PortfolioSummary version={changes} />
      <form className="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <label className="field grow">
          <span>Search</span>
          <input
            type="search"
            placeholder="Name, domain, email or external id"
            value={searchText}
            onChange={(e) => setSearchText(e.target.value)}
          />
        </label>
        <SelectFilter label="Health" any="Any status" value={status} options={STATUSES} onChange={(v) => update({ status: v })} />
        <SelectFilter label="Churn risk" any="Any risk" value={risk} options={RISKS} onChange={(v) => update({ risk: v })} />
        {filtered ? (
          <button
            type="button"
            className="ghost"
            onClick={() => {
              setSearchText('');
              update({ status: null, risk: null, q: null });
            }}
          >
            Clear filters
          </button>
        ) : null}
      </form>

      {error && !conn ? <ErrorState error={error} retry={() => refetch({ requestPolicy: 'network-only' })} /> : null}
      {!conn && fetching ? <Loading label="Loading customers" /> : null}
      {conn && conn.totalCount === 0 ? (
        filtered ? (
          <Empty title="No customers match these filters">
            <p>Try another search, or clear the filters to see every customer.</p>
          </Empty>
        ) : (
          <Empty title="No customers yet">
            <p>
              Customers appear when a connected provider sends an event that names one (set up a provider under{' '}
              <Link to="/settings/integrations">Integrations</Link>), or when you create them with <code>POST /api/v1/customers</code>.
            </p>
          </Empty>
        )
      ) : null}
      {conn && conn.totalCount > 0 ? (
        <>
          <div className="table-wrap" aria-busy={fetching}>
            <table className="table">
              <caption className="sr-only">Customers, sorted by {SORTS.find((s) => s.field === sortField)?.label}</caption>
              <thead>
                <tr>
                  {SORTS.slice(0, 3).map((s) => (
                    <SortHeader
                      key={s.field}
                      label={s.label}
                      active={sortField === s.field}
                      direction={direction}
                      onClick={() => sortBy(s.field)}
                    />
                  ))}
                  <th scope="col">Status</th>
                  <th scope="col">7-day trend</th>
                  <th scope="col" className="hide-narrow">
                    Weakest
                  </th>
                  <SortHeader
                    label="Added"
                    active={sortField === 'createdAt'}
                    direction={direction}
                    onClick={() => sortBy('createdAt')}
                    className="hide-narrow"
                  />
                </tr>
              </thead>
              <tbody>
                {conn.nodes
                  .map((read) => live[read.id] ?? read)
                  .map((c) => (
                    <tr key={c.id} data-customer-id={c.id}>
                      <th scope="row">
                        <Link to={`/customers/${c.id}`}>{c.name}</Link>
                        <span className="sub">{c.domain ?? c.externalId ?? ''}</span>
                      </th>
                      <td>
                        <ScoreBar score={c.healthScore} />
                      </td>
                      <td>
                        <RiskBadge level={c.churnRiskLevel} probability={c.churnProbability} />
                      </td>
                      <td>
                        <HealthBadge status={c.healthStatus} />
                      </td>
                      <td>
                        <Trend value={c.health.trend.d7} />
                      </td>
                      <td className="hide-narrow">{c.health.weakestDimension ? DIMENSION_LABELS[c.health.weakestDimension] : '—'}</td>
                      <td className="hide-narrow muted">{formatDate(c.createdAt)}</td>
                    </tr>
                  ))}
              </tbody>
            </table>
          </div>
          <Pager pages={pages} connection={conn} pageSize={PAGE_SIZE} noun="customers" />
        </>
      ) : null}
    </>
  );
}

function SortHeader({
  label,
  active,
  direction,
  onClick,
  className,
}: {
  label: string;
  active: boolean;
  direction: SortDirection;
  onClick: () => void;
  className?: string;
}) {
  return (
    <th scope="col" className={className} aria-sort={active ? (direction === 'asc' ? 'ascending' : 'descending') : 'none'}>
      <button type="button" className="sort" onClick={onClick}>
        {label}
        <span aria-hidden="true">{active ? (direction === 'asc' ? ' ↑' : ' ↓') : ' ↕'}</span>
      </button>
    </th>
  );
}
