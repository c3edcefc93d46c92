// The baselines: a bare Fastify route that answers a fixed JSON body of a given size, and one that
// parses a JSON body of events and answers 202 with their count.
import Fastify from 'fastify';

const body = process.env.BARE_BODY ?? '{}';
const app = Fastify({ logger: false });
app.get('/bare', async (_req, reply) => reply.type('application/json').send(body));
app.post('/bare', async (req, reply) => reply.code(202).send({ accepted: (req.body as { events: unknown[] }).events.length, errors: [] }));
await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
console.log(`bare listening on ${(app.server.address() as { port: number }).port}`);
