import { useState } from 'react';
import {
  Bar,
  BarChart,
  CartesianGrid,
  Cell,
  ComposedChart,
  LabelList,
  Legend,
  Line,
  LineChart,
  ReferenceLine,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from 'recharts';
import type { Dimension } from '../gql/graphql.ts';
import { DIMENSION_LABELS, formatDate, formatPercent } from '../lib/format.ts';

const BAND_COLOURS = { healthy: '#1a7f4b', neutral: '#b7791f', at_risk: '#c53030', none: '#a0aec0' };
const DIMENSION_COLOURS: Record<Dimension, string> = {
  usage: '#2b6cb0',
  engagement: '#6b46c1',
  support: '#c05621',
  billing: '#2f855a',
  growth: '#b83280',
};

const band = (s: number | null) => (s === null ? 'none' : s >= 75 ? 'healthy' : s >= 50 ? 'neutral' : 'at_risk');

export interface DimensionDatum {
  key: Dimension;
  score: number | null;
}

/** The five dimensions as horizontal bars; a dimension without data is named as such, not drawn as zero. */
export function DimensionChart({ dimensions }: { dimensions: DimensionDatum[] }) {
  const data = dimensions.map((d) => ({
    name: DIMENSION_LABELS[d.key] ?? d.key,
    score: d.score === null ? 0 : Math.round(d.score),
    missing: d.score === null,
    band: band(d.score),
    text: d.score === null ? 'no data' : String(Math.round(d.score)),
  }));
  const summary = dimensions.map((d) => `${DIMENSION_LABELS[d.key]} ${d.score === null ? 'no data' : Math.round(d.score)}`).join(', ');
  return (
    <figure className="chart" data-testid="dimension-chart" role="img" aria-label={`Dimension scores: ${summary}`}>
      <ResponsiveContainer width="100%" height={220}>
        <BarChart data={data} layout="vertical" margin={{ left: 8, right: 24, top: 8, bottom: 8 }}>
          <CartesianGrid strokeDasharray="3 3" horizontal={false} />
          <XAxis type="number" domain={[0, 100]} ticks={[0, 25, 50, 75, 100]} />
          <YAxis type="category" dataKey="name" width={96} />
          <ReferenceLine x={50} stroke="#c53030" strokeDasharray="4 4" />
          <ReferenceLine x={75} stroke="#1a7f4b" strokeDasharray="4 4" />
          <Tooltip formatter={(v, _n, item) => ((item?.payload as { missing?: boolean })?.missing ? 'no data' : v)} />
          <Bar dataKey="score" name="Score" isAnimationActive={false}>
            {data.map((d) => (
              <Cell key={d.name} fill={BAND_COLOURS[d.band as keyof typeof BAND_COLOURS]} />
            ))}
            <LabelList dataKey="text" position="right" className="bar-label" />
          </Bar>
        </BarChart>
      </ResponsiveContainer>
    </figure>
  );
}

export interface HistoryDatum {
  day: string;
  score: number | null;
  churnProbability: number | null;
  usage: number | null;
  engagement: number | null;
  support: number | null;
  billing: number | null;
  growth: number | null;
}

/** Daily score over time, oldest left, with the band thresholds; dimensions can be added line by line. */
export function HistoryChart({ points }: { points: HistoryDatum[] }) {
  const [shown, setShown] = useState<Dimension[]>([]);
  const data = [...points].reverse().map((p) => ({ ...p, label: formatDate(p.day) }));
  const toggle = (k: Dimension) => setShown((s) => (s.includes(k) ? s.filter((x) => x !== k) : [...s, k]));
  return (
    <div>
      <fieldset className="chart-toggles">
        <legend className="sr-only">Show dimensions</legend>
        {(Object.keys(DIMENSION_LABELS) as Dimension[]).map((k) => (
          <label key={k} className="check">
            <input type="checkbox" checked={shown.includes(k)} onChange={() => toggle(k)} />
            <span style={{ color: DIMENSION_COLOURS[k] }}>{DIMENSION_LABELS[k]}</span>
          </label>
        ))}
      </fieldset>
      <figure className="chart" data-testid="history-chart" role="img" aria-label={`Health score over the last ${data.length} days`}>
        <ResponsiveContainer width="100%" height={260}>
          <LineChart data={data} margin={{ left: 0, right: 16, top: 8, bottom: 8 }}>
            <CartesianGrid strokeDasharray="3 3" />
            <XAxis dataKey="label" minTickGap={24} />
            <YAxis domain={[0, 100]} ticks={[0, 25, 50, 75, 100]} width={36} />
            <ReferenceLine y={50} stroke="#c53030" strokeDasharray="4 4" />
            <ReferenceLine y={75} stroke="#1a7f4b" strokeDasharray="4 4" />
            <Tooltip />
            <Legend />
            <Line
              type="monotone"
              dataKey="score"
              name="Health score"
              stroke="#1a202c"
              strokeWidth={2.5}
              dot={false}
              connectNulls
              isAnimationActive={false}
            />
            {shown.map((k) => (
              <Line
                key={k}
                type="monotone"
                dataKey={k}
                name={DIMENSION_LABELS[k]}
                stroke={DIMENSION_COLOURS[k]}
                dot={false}
                connectNulls
                isAnimationActive={false}
              />
            ))}
          </LineChart>
        </ResponsiveContainer>
      </figure>
    </div>
  );
}

export interface ReliabilityDatum {
  predicted: number;
  observed: number;
  count: number;
}

/** Calibration: each group's mean predicted churn against the share that churned; on the diagonal is right. */
export function CalibrationChart({ bins }: { bins: ReliabilityDatum[] }) {
  const data = bins.map((b) => ({ predicted: b.predicted, observed: b.observed, count: b.count }));
  return (
    <div
      className="chart"
      role="img"
      aria-label={`Calibration on held-out customers: ${bins.map((b) => `predicted ${Math.round(b.predicted * 100)}%, observed ${Math.round(b.observed * 100)}%`).join('; ')}`}
    >
      <ResponsiveContainer width="100%" height={240}>
        <LineChart data={data} margin={{ top: 8, right: 16, bottom: 16, left: 0 }}>
          <CartesianGrid strokeDasharray="3 3" />
          <XAxis dataKey="predicted" type="number" domain={[0, 1]} tickFormatter={(v: number) => `${Math.round(v * 100)}%`} />
          <YAxis type="number" domain={[0, 1]} tickFormatter={(v: number) => `${Math.round(v * 100)}%`} />
          <ReferenceLine
            segment={[
              { x: 0, y: 0 },
              { x: 1, y: 1 },
            ]}
            stroke="#a0aec0"
            strokeDasharray="4 3"
          />
          <Tooltip
            formatter={(v) => `${Math.round(Number(v) * 100)}%`}
            labelFormatter={(v) => `predicted ${Math.round(Number(v) * 100)}%`}
          />
          <Line dataKey="observed" name="observed churn" stroke="#2b6cb0" dot isAnimationActive={false} />
        </LineChart>
      </ResponsiveContainer>
    </div>
  );
}

export interface DeliveryPoint {
  from: string;
  attempts: number;
  succeeded: number;
  failed: number;
  p95Ms: number | null;
}

const clock = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });

/**
 * An endpoint's attempts point by point, delivered and failed stacked, with the 95th percentile of their
 * latency on a second axis; a point without attempts is an empty bar and a gap in the line.
 */
export function DeliveryChart({ points }: { points: DeliveryPoint[] }) {
  const data = points.map((p) => ({ ...p, label: clock.format(new Date(p.from)) }));
  const attempts = points.reduce((a, p) => a + p.attempts, 0);
  const failed = points.reduce((a, p) => a + p.failed, 0);
  const summary = attempts
    ? `${attempts} attempts over ${points.length} points, ${formatPercent((attempts - failed) / attempts, 1)} delivered`
    : `No attempts over ${points.length} points`;
  return (
    <figure className="chart" data-testid="delivery-chart" role="img" aria-label={summary}>
      <ResponsiveContainer width="100%" height={220}>
        <ComposedChart data={data} margin={{ left: 0, right: 8, top: 8, bottom: 8 }}>
          <CartesianGrid strokeDasharray="3 3" vertical={false} />
          <XAxis dataKey="label" minTickGap={24} />
          <YAxis yAxisId="n" allowDecimals={false} width={40} />
          <YAxis yAxisId="ms" orientation="right" width={68} tickFormatter={(v: number) => `${v} ms`} />
          <Tooltip />
          <Legend />
          <Bar yAxisId="n" dataKey="succeeded" name="Delivered" stackId="a" fill="#1a7f4b" isAnimationActive={false} />
          <Bar yAxisId="n" dataKey="failed" name="Failed" stackId="a" fill="#c53030" isAnimationActive={false} />
          <Line
            yAxisId="ms"
            type="monotone"
            dataKey="p95Ms"
            name="p95 latency (ms)"
            stroke="#2b6cb0"
            dot={{ r: 3 }}
            isAnimationActive={false}
          />
        </ComposedChart>
      </ResponsiveContainer>
    </figure>
  );
}
