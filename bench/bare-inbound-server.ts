// The honest baseline for inbound: a bare Fastify route that checks a Stripe-style HMAC over the raw body,
// inserts the raw event with a synchronous commit (into a copy of inbox_events, with its indexes), then
// publishes its id with a publisher confirm, one request at a time, and answers 202.
import { createHmac, timingSafeEqual } from 'node:crypto';
import Fastify from 'fastify';
import pg from 'pg';
import { Connection } from 'rabbitmq-client';

const secret = process.env.SECRET ?? 'secret';
const tenantId = process.env.TENANT_ID!;
const queue = process.env.QUEUE!;
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.POOL ?? 10) });
const rabbit = new Connection(process.env.AMQP_URL!);
const publisher = rabbit.createPublisher({ confirm: true, queues: [{ queue, durable: true }] });

const app = Fastify({ logger: false });
app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
app.post('/in', async (req, reply) => {
  const raw = req.body as Buffer;
  const header = String(req.headers['stripe-signature'] ?? '');
  const t = /t=(\d+)/.exec(header)?.[1] ?? '';
  const v1 = /v1=([0-9a-f]+)/.exec(header)?.[1] ?? '';
  const expected = createHmac('sha256', secret).update(`${t}.`).update(raw).digest('hex');
  if (!(v1.length === expected.length && timingSafeEqual(Buffer.from(v1), Buffer.from(expected)))) {
    return reply.code(401).send({ received: false });
  }
  const event = JSON.parse(raw.toString('utf8')) as { id: string; type: string };
  const { rows } = await pool.query<{ id: string }>(
    `INSERT INTO bench_bare_inbox (id, tenant_id, provider, dedup_key, event_type, body, body_sha256)
     VALUES (gen_random_uuid(), $1, 'stripe', $2, $3, $4, NULL) ON CONFLICT DO NOTHING RETURNING id`,
    [tenantId, event.id, event.type, raw.toString('utf8')],
  );
  const id = rows[0]!.id;
  await publisher.send({ routingKey: queue, durable: true, messageId: id, contentType: 'application/json' }, { id });
  return reply.code(202).send({ received: true, id, duplicate: false });
});
await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
console.log(`bare listening on ${(app.server.address() as { port: number }).port}`);
// Exit on SIGTERM rather than die of it, so `--cpu-prof` (BENCH_NODE_ARGS) writes the baseline's profile too.
process.once('SIGTERM', () => process.exit(0));
