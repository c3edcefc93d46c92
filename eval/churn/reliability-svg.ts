import type { Bin } from './metrics.ts';

const COLORS = ['#6b7280', '#2563eb', '#16a34a', '#dc2626'];
const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** A reliability plot: mean predicted against observed churn per group, one line per model, and the diagonal. */
export function reliabilitySvg(title: string, series: { name: string; bins: Bin[] }[]): string {
  const size = 360;
  const pad = 44;
  const x = (v: number) => pad + v * (size - pad - 12);
  const y = (v: number) => size - pad - v * (size - pad - 28);
  const grid = [0, 0.25, 0.5, 0.75, 1]
    .map(
      (t) =>
        `<line x1="${x(t)}" y1="${y(0)}" x2="${x(t)}" y2="${y(1)}" stroke="#eee"/><line x1="${x(0)}" y1="${y(t)}" x2="${x(1)}" y2="${y(t)}" stroke="#eee"/>` +
        `<text x="${x(t)}" y="${y(0) + 14}" font-size="10" text-anchor="middle">${t}</text><text x="${x(0) - 6}" y="${y(t) + 3}" font-size="10" text-anchor="end">${t}</text>`,
    )
    .join('');
  const lines = series
    .map((s, k) => {
      const c = COLORS[k % COLORS.length];
      const pts = s.bins.map((b) => `${x(b.predicted).toFixed(1)},${y(b.observed).toFixed(1)}`).join(' ');
      const dots = s.bins
        .map((b) => `<circle cx="${x(b.predicted).toFixed(1)}" cy="${y(b.observed).toFixed(1)}" r="2.5" fill="${c}"/>`)
        .join('');
      const legend = `<rect x="${x(0.03)}" y="${y(0.97) + k * 14 - 8}" width="10" height="3" fill="${c}"/><text x="${x(0.03) + 14}" y="${y(0.97) + k * 14 - 4}" font-size="10">${escape(s.name)}</text>`;
      return `<polyline points="${pts}" fill="none" stroke="${c}" stroke-width="1.5"/>${dots}${legend}`;
    })
    .join('');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${size}" height="${size}" viewBox="0 0 ${size} ${size}" font-family="sans-serif">
<rect width="100%" height="100%" fill="#fff"/>
<text x="${size / 2}" y="16" font-size="12" text-anchor="middle">${escape(title)}</text>
${grid}
<line x1="${x(0)}" y1="${y(0)}" x2="${x(1)}" y2="${y(1)}" stroke="#999" stroke-dasharray="4 3"/>
${lines}
<text x="${size / 2}" y="${size - 8}" font-size="11" text-anchor="middle">predicted probability (mean of a tenth of customers)</text>
<text x="12" y="${size / 2}" font-size="11" text-anchor="middle" transform="rotate(-90 12 ${size / 2})">observed churn</text>
</svg>
`;
}
