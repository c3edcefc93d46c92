// A minimal receiver for Customer Health Service webhooks: plain Node, no dependencies.
// Run: SIGNING_SECRET=whsec_... TLS_KEY=key.pem TLS_CERT=cert.pem PORT=8443 node webhook-receiver.mjs
// (Deliveries go to https:// URLs only; without TLS_KEY/TLS_CERT it serves plain HTTP, for use behind
// a TLS-terminating proxy.)
import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';

const secret = process.env.SIGNING_SECRET;
if (!secret) throw new Error('set SIGNING_SECRET to the endpoint secret shown at creation');
const TOLERANCE_SECONDS = 300;
const seen = new Set(); // use a durable store in production: X-Webhook-Id repeats on every retry

function verify(headers, rawBody) {
  const timestamp = String(headers['x-webhook-timestamp'] ?? '');
  if (!/^\d+$/.test(timestamp) || Math.abs(Date.now() / 1000 - Number(timestamp)) > TOLERANCE_SECONDS) return false;
  const expected = Buffer.from(`v0=${createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest('hex')}`);
  // During a secret rotation the header carries two signatures, separated by a space.
  return String(headers['x-webhook-signature'] ?? '')
    .split(' ')
    .some((candidate) => {
      const got = Buffer.from(candidate);
      return got.length === expected.length && timingSafeEqual(got, expected);
    });
}

function handle(req, res) {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const rawBody = Buffer.concat(chunks); // verify the exact bytes, before parsing
    if (req.method !== 'POST' || !verify(req.headers, rawBody)) {
      res.writeHead(401).end();
      return;
    }
    const id = req.headers['x-webhook-id'];
    if (!seen.has(id)) {
      seen.add(id);
      const event = req.headers['x-webhook-event'];
      const payload = JSON.parse(rawBody.toString('utf8'));
      console.log(JSON.stringify({ id, event, payload }));
    }
    // Answer 2xx within 15 s; do slow work after answering.
    res.writeHead(204).end();
  });
}

const port = Number(process.env.PORT ?? 8443);
const server =
  process.env.TLS_KEY && process.env.TLS_CERT
    ? https.createServer({ key: readFileSync(process.env.TLS_KEY), cert: readFileSync(process.env.TLS_CERT) }, handle)
    : http.createServer(handle);
server.listen(port, '127.0.0.1', () => console.log(`receiver listening on ${port}`));
