import type { CircuitState } from '../gql/graphql.ts';
import { formatDateTime, formatPercent, formatRelative, formatTrend, humanize } from '../lib/format.ts';

const STATUS_LABEL: Record<string, string> = { healthy: 'Healthy', neutral: 'Neutral', at_risk: 'At risk' };

export function HealthBadge({ status }: { status: string | null | undefined }) {
  if (!status) return <span className="badge badge-none">Not scored</span>;
  return <span className={`badge badge-${status}`}>{STATUS_LABEL[status] ?? humanize(status)}</span>;
}

export function RiskBadge({ level, probability }: { level: string | null | undefined; probability?: number | null }) {
  if (!level) return <span className="badge badge-none">—</span>;
  return (
    <span className={`badge badge-risk-${level}`}>
      {humanize(level)}
      {probability !== undefined && probability !== null ? ` · ${formatPercent(probability)}` : ''}
    </span>
  );
}

export function SeverityBadge({ severity }: { severity: string }) {
  return <span className={`badge badge-sev-${severity}`}>{humanize(severity)}</span>;
}

export function StatusPill({ status }: { status: string }) {
  return <span className={`pill pill-${status}`}>{humanize(status)}</span>;
}

export function Trend({ value }: { value: number | null | undefined }) {
  if (value === null || value === undefined) return <span className="muted">—</span>;
  const dir = value > 0.5 ? 'up' : value < -0.5 ? 'down' : 'flat';
  const arrow = dir === 'up' ? '▲' : dir === 'down' ? '▼' : '■';
  const word = dir === 'up' ? 'up' : dir === 'down' ? 'down' : 'steady';
  return (
    <span className={`trend trend-${dir}`} title={`${word} ${formatTrend(value)} points`}>
      <span aria-hidden="true">{arrow}</span> {formatTrend(value)}
    </span>
  );
}

export function ScoreBar({ score }: { score: number | null | undefined }) {
  if (score === null || score === undefined) return <span className="muted">—</span>;
  const band = score >= 75 ? 'healthy' : score >= 50 ? 'neutral' : 'at_risk';
  return (
    <span className="score">
      <strong>{Math.round(score)}</strong>
      <span className="score-bar" aria-hidden="true">
        <span className={`score-fill fill-${band}`} style={{ width: `${Math.max(2, Math.min(100, score))}%` }} />
      </span>
    </span>
  );
}

const CIRCUIT_LABEL: Record<CircuitState, string> = { closed: 'Sending', open: 'Paused', half_open: 'Probing' };

/**
 * An endpoint's circuit breaker: sending (closed), paused with the time of its next probe (open), or probing
 * (half open: one delivery is being tried).
 */
export function CircuitBadge({ circuit }: { circuit: { state: CircuitState; nextProbeAt?: string | null; failureRate?: number | null } }) {
  const next =
    circuit.state === 'open' && circuit.nextProbeAt
      ? Date.parse(circuit.nextProbeAt) > Date.now()
        ? ` · next probe ${formatRelative(circuit.nextProbeAt)}`
        : ' · probe due'
      : '';
  const rate =
    circuit.failureRate !== null && circuit.failureRate !== undefined
      ? `${formatPercent(circuit.failureRate)} of recent attempts failed`
      : '';
  return (
    <span
      className={`badge badge-circuit-${circuit.state}`}
      data-testid="circuit"
      title={[circuit.state === 'open' && circuit.nextProbeAt ? `Next probe at ${formatDateTime(circuit.nextProbeAt)}` : '', rate]
        .filter(Boolean)
        .join('; ')}
    >
      Circuit: {CIRCUIT_LABEL[circuit.state]}
      {next}
    </span>
  );
}
