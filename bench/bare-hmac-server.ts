// Baseline for inbound: a bare Fastify route that checks a Stripe-style HMAC over the raw body and answers 202.
import { createHmac, timingSafeEqual } from 'node:crypto';
import Fastify from 'fastify';

const secret = process.env.SECRET ?? 'secret';
const app = Fastify({ logger: false });
app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
app.post('/in', async (req, reply) => {
  const header = String(req.headers['stripe-signature'] ?? '');
  const t = /t=(\d+)/.exec(header)?.[1] ?? '';
  const v1 = /v1=([0-9a-f]+)/.exec(header)?.[1] ?? '';
  const expected = createHmac('sha256', secret)
    .update(`${t}.`)
    .update(req.body as Buffer)
    .digest('hex');
  const ok = v1.length === expected.length && timingSafeEqual(Buffer.from(v1), Buffer.from(expected));
  return reply.code(ok ? 202 : 401).send({ received: ok });
});
await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
console.log(`bare listening on ${(app.server.address() as { port: number }).port}`);
