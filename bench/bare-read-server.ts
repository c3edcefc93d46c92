// The honest baseline for reads: bare Fastify routes that run the same SQL as the service through `pg`
// and answer the same JSON (REST page, health breakdown, GraphQL page), with no authentication.
import Fastify from 'fastify';
import pg from 'pg';
import { createCustomerPages } from '../src/services/customer-pages.ts';

const tenantId = process.env.TENANT_ID!;
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.POOL ?? 10) });
const app = Fastify({ logger: false });

// The page is read by the service's own statement; the health read's statements are those the service
// sends (captured from its query log).
const pages = createCustomerPages(pool);
const CUSTOMER = `SELECT "public"."customers"."id", "public"."customers"."tenant_id", "public"."customers"."external_id", "public"."customers"."name", "public"."customers"."email", "public"."customers"."domain", "public"."customers"."health_score", "public"."customers"."health_status"::text, "public"."customers"."churn_probability", "public"."customers"."churn_risk_level"::text, "public"."customers"."created_at", "public"."customers"."updated_at" FROM "public"."customers" WHERE ("public"."customers"."id" = $1 AND "public"."customers"."tenant_id" = $2) LIMIT $3 OFFSET $4`;
const SNAPSHOT = `SELECT "public"."health_snapshots"."id", "public"."health_snapshots"."tenant_id", "public"."health_snapshots"."customer_id", "public"."health_snapshots"."score", "public"."health_snapshots"."status"::text, "public"."health_snapshots"."dimensions", "public"."health_snapshots"."trend_7d", "public"."health_snapshots"."trend_30d", "public"."health_snapshots"."weakest_dimension", "public"."health_snapshots"."announced_score", "public"."health_snapshots"."announced_status"::text, "public"."health_snapshots"."computed_at" FROM "public"."health_snapshots" WHERE "public"."health_snapshots"."customer_id" IN ($1) OFFSET $2`;
const WEIGHTS = `SELECT "public"."tenants"."id", "public"."tenants"."scoring_weights" FROM "public"."tenants" WHERE "public"."tenants"."id" IN ($1) OFFSET $2`;

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
  const { rows } = await pool.query(CUSTOMER, [req.params.id, tenantId, 1, 0]);
  if (!rows[0]) return reply.code(404).send({ status: 404 });
  const [snapshots] = await Promise.all([pool.query(SNAPSHOT, [req.params.id, 0]), pool.query(WEIGHTS, [tenantId, 0])]);
  const s = snapshots.rows[0];
  return {
    customer_id: req.params.id,
    score: s.score,
    status: s.status,
    computed_at: (s.computed_at as Date).toISOString(),
    trend: { change_7d: s.trend_7d, change_30d: s.trend_30d },
    weakest_dimension: s.weakest_dimension,
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
