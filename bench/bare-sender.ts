// Baseline for outbound: the same signed POSTs the worker sends, from a bare loop with no database or
// queue, at the worker's concurrency, to the same receiver. Prints {"rps","p50","p99"} and exits.
import { randomUUID } from 'node:crypto';
import https from 'node:https';
import { signatureHeader } from '../src/outbox/sender/signing.ts';

const target = process.env.TARGET!;
const total = Number(process.env.REQUESTS ?? 10_000);
const concurrency = Number(process.env.CONCURRENCY ?? 64);
const agent = new https.Agent({ keepAlive: true, maxSockets: concurrency });

function post(n: number): Promise<void> {
  const id = randomUUID();
  const body = JSON.stringify({ tenant_id: 'bare', total: `bare${n}` });
  const timestamp = Math.floor(Date.now() / 1000);
  return new Promise((resolve, reject) => {
    const req = https.request(
      target,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'bare-sender',
          'x-webhook-event': 'invoice.created',
          'content-length': Buffer.byteLength(body),
          'x-webhook-id': id,
          'x-webhook-timestamp': String(timestamp),
          'x-webhook-signature': signatureHeader(['whsec_bare'], timestamp, body),
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`HTTP ${res.statusCode}`))));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const latencies: number[] = [];
let next = 0;
const started = performance.now();
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (next < total) {
      const n = next++;
      const t = performance.now();
      await post(n);
      latencies.push(performance.now() - t);
    }
  }),
);
const seconds = (performance.now() - started) / 1000;
latencies.sort((a, b) => a - b);
const pct = (q: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!);
console.log(JSON.stringify({ rps: Math.round(total / seconds), p50: pct(0.5), p99: pct(0.99) }));
agent.destroy();
