import Stripe from 'stripe';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import https from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';

const DIR = join(import.meta.dirname, '..', '..', 'test-output', 'tls');

/** Makes a throwaway self-signed certificate for 127.0.0.1 with openssl; the global setup runs it once per run. */
export function makeTestCertificate(): void {
  mkdirSync(DIR, { recursive: true });
  const args = [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-days',
    '2',
    '-subj',
    '/CN=localhost',
  ];
  execFileSync(
    'openssl',
    [...args, '-keyout', join(DIR, 'key.pem'), '-out', join(DIR, 'cert.pem'), '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'],
    { stdio: 'ignore' },
  );
}

/** The run's certificate, trusted by the test sender only. */
export function testCertificate(): { key: Buffer; cert: Buffer } {
  return { key: readFileSync(join(DIR, 'key.pem')), cert: readFileSync(join(DIR, 'cert.pem')) };
}

export interface Hit {
  url: string;
  headers: IncomingHttpHeaders;
  raw: Buffer;
  json: any;
  at: number;
}

export type Behaviour =
  'ok' | 'fail' | 'gone' | 'redirect' | 'hang' | 'reset' | 'garbage' | 'nul' | 'slow' | 'too_many' | 'back_in_a_century';

/**
 * An HTTPS receiver on 127.0.0.1 whose answer the test chooses; it records every request. With
 * `accept`, it behaves like a careful tenant server: a request that fails the check gets 401.
 */
export async function startReceiver(tls: { key: Buffer; cert: Buffer }, opts: { accept?: (hit: Hit) => boolean } = {}) {
  const hits: Hit[] = [];
  let behaviour: Behaviour = 'ok';
  let delayMs = 0;
  const server = https.createServer(tls, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      let json: unknown;
      try {
        json = JSON.parse(raw.toString('utf8'));
      } catch {
        json = undefined;
      }
      const hit = { url: req.url ?? '', headers: req.headers, raw, json, at: Date.now() };
      hits.push(hit);
      if (opts.accept && !opts.accept(hit)) return res.writeHead(401, { 'content-type': 'text/plain' }).end('bad signature');
      switch (behaviour) {
        case 'ok':
          return setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'), delayMs);
        case 'fail':
          return res.writeHead(500).end('upstream exploded');
        case 'gone':
          return res.writeHead(410).end();
        case 'redirect':
          return res.writeHead(301, { location: 'https://127.0.0.1:1/elsewhere' }).end();
        case 'too_many':
          return res.writeHead(429, { 'retry-after': '120' }).end();
        case 'garbage':
          return res.writeHead(200).end(Buffer.alloc(10_000, 0xff));
        case 'nul':
          return res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\u0000thanks');
        case 'back_in_a_century':
          return res.writeHead(503, { 'retry-after': String(100 * 365 * 86_400) }).end('down for maintenance');
        case 'slow':
          return setTimeout(() => res.writeHead(200).end('late'), 50);
        case 'reset':
          return req.socket.destroy();
        case 'hang':
          return; // never answers
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return {
    url: `https://127.0.0.1:${port}/hook`,
    hits,
    set: (b: Behaviour, delay = 0) => {
      behaviour = b;
      delayMs = delay;
    },
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

const stripe = new Stripe('sk_test_unused');

/**
 * Checks a delivery's signature with a verifier no one here wrote: Stripe's. Stripe signs `{t}.{body}`
 * with HMAC-SHA256 in hex, the construction of `X-Webhook-Signature`, so our timestamp and each `v0=`
 * signature become Stripe's `t=` and `v1=`; its `constructEvent` also refuses a timestamp over 300 s old.
 */
export function verifiesWithStripe(secret: string, hit: Pick<Hit, 'headers' | 'raw'>): boolean {
  const signatures = String(hit.headers['x-webhook-signature'] ?? '')
    .split(' ')
    .map((s) => `v1=${s.replace(/^v0=/, '')}`);
  try {
    stripe.webhooks.constructEvent(hit.raw, [`t=${hit.headers['x-webhook-timestamp']}`, ...signatures].join(','), secret);
    return true;
  } catch {
    return false;
  }
}
