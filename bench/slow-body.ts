// An unauthenticated slow-body attack on the inbound webhook route while another tenant reads over the
// API: attacking connections send headers and a few bytes of a 4 KB body, then a byte a second, and
// reconnect as soon as they are cut off or refused. Reports the reading tenant's success rate and p99,
// alone, under attack from one address, and under attack with the per-address cap lifted (as from many
// addresses).
import net from 'node:net';
import { durationS, startApi, statusList, successRate, twoTenants } from './budgets.ts';
import { load, writeResult } from './lib.ts';

const ATTACKERS = Number(process.env.BENCH_ATTACK_CONNECTIONS ?? 300);
const READERS = 10;

const { a, b } = await twoTenants();

function attack(port: number, path: string) {
  const answers: Record<string, number> = {};
  let stopped = false;
  const sockets = new Set<net.Socket>();
  const open = () => {
    if (stopped) return;
    let first = '';
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nStripe-Signature: t=1,v1=00\r\nContent-Length: 4096\r\n\r\n{"id":`,
      );
    });
    const drip = setInterval(() => socket.write(' '), 1000);
    sockets.add(socket);
    socket.on('data', (d) => (first ||= d.toString().slice(0, 12)));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearInterval(drip);
      sockets.delete(socket);
      const status = /HTTP\/1\.1 (\d{3})/.exec(first)?.[1] ?? 'closed';
      answers[status] = (answers[status] ?? 0) + 1;
      open();
    });
  };
  for (let i = 0; i < ATTACKERS; i++) open();
  return {
    stop: () => {
      stopped = true;
      for (const s of sockets) s.destroy();
      return answers;
    },
  };
}

const rows: string[] = [];
const runs: { name: string; env: Record<string, string>; attacked: boolean }[] = [
  { name: 'no attack', env: {}, attacked: false },
  { name: `${ATTACKERS} slow-body connections from one address`, env: {}, attacked: true },
  {
    name: `${ATTACKERS} slow-body connections, per-address cap lifted`,
    env: { MAX_UNAUTHENTICATED_PER_ADDRESS: '100000' },
    attacked: true,
  },
];
for (const run of runs) {
  const api = await startApi(run.env);
  const attacker = run.attacked ? attack(api.port, `/api/v1/webhooks/in/stripe/${a.tenantId}`) : undefined;
  await load('warm-up', {
    url: `${api.base}/api/v1/customers?limit=25`,
    headers: { authorization: `Bearer ${b.apiKey}` },
    durationS: 2,
    connections: READERS,
  });
  const m = await load(run.name, {
    url: `${api.base}/api/v1/customers?limit=25`,
    headers: { authorization: `Bearer ${b.apiKey}` },
    durationS,
    connections: READERS,
  });
  const answers = attacker?.stop();
  api.stop();
  rows.push(
    `| ${run.name} | ${m.rps} | ${successRate(m)} % (${statusList(m)}) | ${m.p50} | ${m.p99} | ${
      answers
        ? Object.entries(answers)
            .map(([k, v]) => `${v} × ${k}`)
            .join(', ')
        : '–'
    } |`,
  );
}

writeResult('Slow-body attack vs API reads', [
  `Tenant B: \`GET /api/v1/customers?limit=25\`, ${READERS} connections, ${durationS} s. Attack: ${ATTACKERS} connections to the inbound route, reconnecting at once.`,
  '',
  '| run | B req/s | B success | B p50 ms | B p99 ms | attack connections ended by |',
  '|---|---|---|---|---|---|',
  ...rows,
]);
