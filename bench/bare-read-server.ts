// The honest baseline for reads: bare Fastify routes that run the same SQL as the service through `pg`
// and answer the same JSON (REST page, health breakdown, GraphQL page), with no authentication.
import Fastify from 'fastify';
import pg from 'pg';
import { createCustomerReads } from '../src/services/customer-reads.ts';

const tenantId = process.env.TENANT_ID!;
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.POOL ?? 10) });
const app = Fastify({ logger: false });

// The same statements as the service's: its own reads module runs them.
const pages = createCustomerReads(pool);
type Row = Record<string, unknown> & { id: string; createdAt: Date };
const cursorOf = (last: Row) => Buffer.from(JSON.stringify([last.createdAt.toISOString(), last.id])).toString('base64url');

async function firstPage(limit: number) {
  const rows = (await pages.page({ tenantId, sort: { field: 'createdAt', direction: 'desc' }, take: limit + 1 })) as Row[];
  const more = rows.length > limit;
  const nodes = more ? rows.slice(0, limit) : rows;
  return { nodes, more, cursor: more ? cursorOf(nodes[nodes.length - 1]!) : null };
}

app.get('/customers', async () => {
  const { nodes, more, cursor } = await firstPage(25);
  return {
    data: nodes.map((c) => ({
      id: c.id,
      external_id: c.externalId,
      name: c.name,
      email: c.email,
      domain: c.domain,
      health_score: c.healthScore,
      health_status: c.healthStatus,
      churn_probability: c.churnProbability,
      churn_risk_level: c.churnRiskLevel,
      created_at: c.createdAt.toISOString(),
      updated_at: (c.updatedAt as Date).toISOString(),
    })),
    has_more: more,
    next_cursor: cursor,
  };
});

app.post('/graphql', async () => {
  const { nodes, more, cursor } = await firstPage(25);
  return {
    data: {
      customers: {
        nodes: nodes.map((c) => ({
          id: c.id,
          name: c.name,
          externalId: c.externalId,
          healthScore: c.healthScore,
          healthStatus: c.healthStatus,
          churnProbability: c.churnProbability,
          churnRiskLevel: c.churnRiskLevel,
          createdAt: c.createdAt.toISOString(),
        })),
        pageInfo: { hasNextPage: more, endCursor: cursor },
      },
    },
  };
});

interface Dimension {
  key: string;
  score: number | null;
  weight: number;
  contribution: number | null;
  trend: number | null;
  signals?: { key: string; label?: string; value: unknown }[];
}

app.get<{ Params: { id: string } }>('/customers/:id/health', async (req, reply) => {
  const c = await pages.one(tenantId, req.params.id, { health: true });
  if (!c) return reply.code(404).send({ status: 404 });
  const s = c.healthSnapshot!;
  return {
    customer_id: req.params.id,
    score: s.score,
    status: s.status,
    computed_at: (s.computedAt as Date).toISOString(),
    trend: { change_7d: s.trend7d, change_30d: s.trend30d },
    weakest_dimension: s.weakestDimension,
    dimensions: (s.dimensions as Dimension[]).map((d) => ({
      key: d.key,
      score: d.score,
      weight: d.weight,
      contribution: d.contribution,
      trend: d.trend,
      signals: (d.signals ?? []).map((x) => ({ key: x.key, label: x.label ?? x.key, value: x.value })),
    })),
  };
});

await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
console.log(`bare listening on ${(app.server.address() as { port: number }).port}`);
// Exit on SIGTERM rather than die of it, so `--cpu-prof` (BENCH_NODE_ARGS) writes the baseline's profile too.
process.once('SIGTERM', () => process.exit(0));
