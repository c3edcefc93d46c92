// Tenant A of the fairness bench (bench/fairness.ts) in a process of its own: one kind of heavy work
// (SCENARIO: csv, ndjson, graphql, training) against the API at BASE with API_KEY, again and again until
// SIGTERM; then the calls in hand finish and it prints `RESULT {"done", "refused"}`.
const base = process.env.BASE!;
const auth = { authorization: `Bearer ${process.env.API_KEY}` };
const EXPORTS = Number(process.env.EXPORTS ?? 16);
const GRAPHQL_CLIENTS = Number(process.env.GRAPHQL_CLIENTS ?? 8);
let stopping = false;
process.once('SIGTERM', () => (stopping = true));
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs `once` on `clients` loops until stopped; answers what each call reported done and how many were refused. */
async function loops(clients: number, once: () => Promise<number | null>) {
  let done = 0;
  let refused = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (!stopping) {
        const n = await once().catch(() => null);
        if (n === null) {
          refused++;
          await pause(200);
        } else done += n;
      }
    }),
  );
  return { done, refused };
}

const exportOnce = (format: 'csv' | 'ndjson') => async () => {
  const res = await fetch(`${base}/api/v1/exports/customers?format=${format}`, { headers: auth });
  if (!res.ok || !res.body) {
    await res.body?.cancel();
    return null;
  }
  let rows = 0;
  const reader = res.body.getReader();
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    for (let at = r.value.indexOf(10); at !== -1; at = r.value.indexOf(10, at + 1)) rows++;
  }
  return rows;
};

const SEARCHES = Array.from(
  { length: 10 },
  (_, i) =>
    `s${i}: customers(search: "customer ${i + 1}", first: 50) { totalCount nodes { id name email domain healthScore healthStatus } }`,
).join('\n');
const graphqlOnce = async () => {
  const res = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ query: `query Searches {\n${SEARCHES}\n}` }),
  });
  const body = (await res.json().catch(() => null)) as { data?: Record<string, { nodes: unknown[] }>; errors?: unknown[] } | null;
  if (!res.ok || !body?.data || body.errors) return null;
  return Object.values(body.data).reduce((n, c) => n + c.nodes.length, 0);
};

// A training as a tenant runs one: started, then read until it has ended (a training held to its share
// beside another tenant's reads may outlast the time a request waits for it); a read that fails is read
// again. A stop lets it end first, so that no training of A's is left running into the next measurement.
// The builds measured need startChurnTraining and churnTraining.
type Training = { id: string; status: string; result: { samples: number } | null };
const trainingGql = async (query: string, variables: object = {}): Promise<Training | null> => {
  const res = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  }).catch(() => null);
  const body = (await res?.json().catch(() => null)) as { data?: Record<string, Training | null> } | null;
  return body?.data ? (Object.values(body.data)[0] ?? null) : null;
};
const trainingOnce = async () => {
  const fields = 'id status result { samples }';
  let run = await trainingGql(`mutation { startChurnTraining(activate: false, wait: true) { ${fields} } }`);
  if (!run) return null;
  for (const until = Date.now() + 300_000; run.status === 'running' && Date.now() < until;) {
    await pause(250);
    run = (await trainingGql(`query($id: UUID!) { churnTraining(id: $id) { ${fields} } }`, { id: run.id })) ?? run;
  }
  return run.status === 'succeeded' ? (run.result?.samples ?? null) : null;
};

const work: Record<string, () => Promise<{ done: number; refused: number }>> = {
  csv: () => loops(EXPORTS, exportOnce('csv')),
  ndjson: () => loops(EXPORTS, exportOnce('ndjson')),
  graphql: () => loops(GRAPHQL_CLIENTS, graphqlOnce),
  training: () => loops(1, trainingOnce),
};
const run = work[process.env.SCENARIO ?? ''];
if (!run) throw new Error(`fairness-a: no scenario ${process.env.SCENARIO}`);
console.log(`RESULT ${JSON.stringify(await run())}`);
process.exit(0);
