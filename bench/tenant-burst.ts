// One tenant's burst of concurrent writes while another tenant makes ordinary PATCHes: reports the
// other tenant's success rate and p99, and how the bursting tenant's requests were answered (2xx, or
// 503 with Retry-After beyond its share; never 500).
import { durationS, startApi, statusList, successRate, twoTenants } from './budgets.ts';
import { load, type Measured, writeResult } from './lib.ts';

const BURST = Number(process.env.BENCH_BURST_CONNECTIONS ?? 250);
const { a, b } = await twoTenants();

const api = await startApi();
const patches = (name: string) =>
  load(name, {
    url: `${api.base}/api/v1/customers/${b.customerId}`,
    headers: { authorization: `Bearer ${b.apiKey}`, 'content-type': 'application/json' },
    requests: [{ method: 'PATCH', body: JSON.stringify({ name: 'Renamed' }) }],
    durationS,
    connections: 20,
    rate: 100,
  });

const alone = await patches('B alone');
const [withBurst, burst] = await Promise.all([
  patches('B during A’s burst'),
  load('A’s burst', {
    url: `${api.base}/api/v1/customers`,
    headers: { authorization: `Bearer ${a.apiKey}`, 'content-type': 'application/json' },
    requests: [{ method: 'POST', body: JSON.stringify({ name: 'Burst customer' }) }],
    durationS,
    connections: BURST,
  }),
]);
api.stop();

const row = (m: Measured) => `| ${m.name} | ${m.rps} | ${successRate(m)} % (${statusList(m)}) | ${m.p50} | ${m.p99} |`;
writeResult('Tenant burst vs PATCHes', [
  `Tenant B: \`PATCH /api/v1/customers/{id}\`, 20 connections paced at 100/s, ${durationS} s. Tenant A (Scale): \`POST /api/v1/customers\` from ${BURST} connections at once. Rate limits raised out of the way.`,
  '',
  '| load | req/s | success (answers) | p50 ms | p99 ms |',
  '|---|---|---|---|---|',
  row(alone),
  row(withBurst),
  row(burst),
]);
