// The churn evaluation against a running service and a real workspace's labels:
//   CHS_API_KEY=… npm run eval:churn -- --live http://127.0.0.1:3000 [--train]
// It reads only what the workspace's API key may read: the labels (export `churn_outcomes`) and the daily
// health history (export `health_history`). Each customer's latest label is measured against what the
// service said on the last day before that outcome — the churn probability, 100 − the health score and
// each dimension — so no figure uses anything the service learned after the fact, except where a model
// trained on these same labels was already in use on that day (then the probabilities' figures flatter it).
// With --train it also fits a model on the labels without putting it in use (startChurnTraining with
// activate: false) and prints its out-of-fold figures beside the default's; that stores a model version
// and an audit record, nothing else.
import { mkdirSync, writeFileSync } from 'node:fs';
import { auc, metricsOf, reliability } from './metrics.ts';
import { reliabilitySvg } from './reliability-svg.ts';

const DIMENSIONS = ['usage', 'engagement', 'support', 'billing', 'growth'] as const;
const DAY = 86_400_000;

interface Label {
  customer_id: string;
  churned: boolean;
  at: string;
}
interface HistoryPoint {
  customer_id: string;
  day: string;
  score: number | null;
  churn_probability: number | null;
  [dimension: string]: unknown;
}

async function* ndjson<T>(res: Response): AsyncGenerator<T> {
  const decoder = new TextDecoder();
  let rest = '';
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    rest += decoder.decode(chunk, { stream: true });
    const lines = rest.split('\n');
    rest = lines.pop()!;
    for (const line of lines) if (line) yield JSON.parse(line) as T;
  }
  if (rest.trim()) yield JSON.parse(rest) as T;
}

async function get(base: string, key: string, path: string): Promise<Response> {
  const res = await fetch(new URL(path, base), { headers: { 'X-API-Key': key, Accept: 'application/x-ndjson' } });
  if (!res.ok) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`);
  return res;
}

const f = (x: number | null | undefined, d = 3) => (x === null || x === undefined || Number.isNaN(x) ? 'n/a' : x.toFixed(d));

export async function evaluateLive(base: string, key: string, opts: { train: boolean; out: string }): Promise<string> {
  // The latest outcome per customer is the one training uses too.
  const latest = new Map<string, Label>();
  for await (const l of ndjson<Label>(await get(base, key, '/api/v1/exports/churn_outcomes?format=ndjson'))) {
    const seen = latest.get(l.customer_id);
    if (!seen || seen.at < l.at) latest.set(l.customer_id, l);
  }
  if (latest.size === 0) throw new Error('the workspace has no churn labels (POST /api/v1/customers/{id}/churn-outcome)');
  const until = new Date(Math.max(...[...latest.values()].map((l) => Date.parse(l.at)))).toISOString();

  // The last point strictly before the outcome's day, per labelled customer.
  const before = new Map<string, HistoryPoint>();
  const history = await get(base, key, `/api/v1/exports/health_history?format=ndjson&until=${encodeURIComponent(until)}`);
  for await (const h of ndjson<HistoryPoint>(history)) {
    const l = latest.get(h.customer_id);
    if (!l || Date.parse(`${h.day}T00:00:00Z`) + DAY > Date.parse(l.at)) continue;
    const seen = before.get(h.customer_id);
    if (!seen || seen.day < h.day) before.set(h.customer_id, h);
  }

  const measured = [...latest.values()].filter((l) => before.has(l.customer_id));
  const y = measured.map((l) => (l.churned ? 1 : 0));
  const points = measured.map((l) => before.get(l.customer_id)!);
  const churned = y.filter((v) => v === 1).length;
  const lines = [
    `# Churn evaluation of a live workspace (${base})`,
    '',
    `${latest.size} labelled customers (latest label each), ${measured.length} with a health point before their outcome ` +
      `(${churned} churned, ${measured.length - churned} retained).`,
    '',
  ];
  if (churned === 0 || churned === measured.length) {
    lines.push('Both outcomes are needed to measure ranking; nothing more to report.');
    return lines.join('\n') + '\n';
  }

  const withP = points.map((p, i) => ({ p: p.churn_probability, y: y[i]! })).filter((x) => x.p !== null) as { p: number; y: number }[];
  const served = withP.length
    ? metricsOf(
        withP.map((x) => x.p),
        withP.map((x) => x.y),
      )
    : undefined;
  const ranking = (values: (number | null)[]) => {
    const known = values.map((v, i) => ({ v, y: y[i]! })).filter((x) => x.v !== null) as { v: number; y: number }[];
    const both = known.some((x) => x.y === 1) && known.some((x) => x.y === 0);
    return {
      auc: both
        ? auc(
            known.map((x) => 100 - x.v),
            known.map((x) => x.y),
          )
        : Number.NaN,
      coverage: known.length / values.length,
    };
  };
  const health = ranking(points.map((p) => p.score));
  lines.push(
    '## What the service said the day before each outcome',
    '',
    '| measure | customers | ROC AUC | PR AUC | Brier | log loss | lift@10 |',
    '|---|---|---|---|---|---|---|',
    served
      ? `| churn probability | ${withP.length} | ${f(served.auc)} | ${f(served.prAuc)} | ${f(served.brier)} | ${f(served.logLoss)} | ${f(served.lift10, 2)} |`
      : '| churn probability | 0 | n/a | n/a | n/a | n/a | n/a |',
    `| 100 − health score | ${Math.round(health.coverage * measured.length)} | ${f(health.auc)} | | | | |`,
    ...DIMENSIONS.map((d) => {
      const r = ranking(points.map((p) => (typeof p[d] === 'number' ? (p[d] as number) : null)));
      return `| 100 − ${d} | ${Math.round(r.coverage * measured.length)} | ${f(r.auc)} | | | | |`;
    }),
    '',
  );

  if (served) {
    mkdirSync(opts.out, { recursive: true });
    writeFileSync(
      `${opts.out}/live.svg`,
      reliabilitySvg(`live workspace, the day before each outcome (${withP.length} customers)`, [
        {
          name: `as served (Brier ${f(served.brier)})`,
          bins: reliability(
            withP.map((x) => x.p),
            withP.map((x) => x.y),
          ),
        },
      ]),
    );
  }

  if (opts.train) {
    const graphql = async (query: string, variables: object = {}) => {
      const res = await fetch(new URL('/graphql', base), {
        method: 'POST',
        headers: { 'X-API-Key': key, 'Content-Type': 'application/json', Accept: 'application/graphql-response+json' },
        body: JSON.stringify({ query, variables }),
      });
      return (await res.json()) as {
        data?: Record<
          string,
          { id: string; status: string; result: Record<string, number | string | boolean> | null; error: { code: string } | null }
        >;
        errors?: { message: string; extensions?: { code?: string } }[];
      };
    };
    const fields =
      'id status error { code } result { modelVersion kind eligible holdout auc brier baselineModelVersion baselineAuc baselineBrier }';
    // Started, then read until it has ended: training on many labels outlives a request.
    let body = await graphql(`mutation EvaluateChurnTraining { run: startChurnTraining(activate: false, wait: true) { ${fields} } }`);
    while (body.data?.run?.status === 'running') {
      await new Promise((r) => setTimeout(r, 2000));
      body = await graphql(`query EvaluatedChurnTraining($id: UUID!) { run: churnTraining(id: $id) { ${fields} } }`, {
        id: body.data.run.id,
      });
    }
    const failed = body.data?.run?.error ?? (body.data && !body.data.run ? { code: 'not_found' } : null);
    if (failed) body = { errors: [{ message: failed.code, extensions: { code: failed.code } }] };
    if (!body.data?.run?.result) {
      lines.push(`## Training`, '', `Not trained: ${body.errors?.map((e) => e.extensions?.code ?? e.message).join(', ')}.`, '');
    } else {
      const t = body.data.run.result;
      lines.push(
        '## A model trained on these labels, out of fold (stored, not put in use)',
        '',
        '| model | customers | ROC AUC | Brier |',
        '|---|---|---|---|',
        `| ${t.baselineModelVersion} | ${t.holdout} | ${f(t.baselineAuc as number)} | ${f(t.baselineBrier as number)} |`,
        `| ${t.modelVersion} (${t.kind}) | ${t.holdout} | ${f(t.auc as number)} | ${f(t.brier as number)} |`,
        '',
        t.eligible
          ? `It may be put in use: \`activateChurnModel(modelVersion: "${t.modelVersion}")\` or the dashboard's Scoring page.`
          : 'It is not eligible: it would rank these customers worse than the default.',
        '',
      );
    }
  }
  return lines.join('\n') + '\n';
}
