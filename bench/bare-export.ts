// The export baseline: a bare HTTP server doing the necessary work of a streamed export and nothing else:
// keyset pages of 1,000 customers with their health and churn from PostgreSQL, each row as a JSON line,
// written with backpressure.
import { createServer } from 'node:http';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 2 });
const PAGE = 1000;
const server = createServer(async (req, res) => {
  const tenantId = new URL(req.url!, 'http://x').searchParams.get('tenant');
  res.writeHead(200, { 'content-type': 'application/x-ndjson' });
  let after: [Date, string] = [new Date('9999-12-31T00:00:00Z'), 'ffffffff-ffff-ffff-ffff-ffffffffffff'];
  for (;;) {
    const { rows } = await pool.query(
      `SELECT c.id, c.external_id, c.name, c.email, c.domain, c.health_score, c.health_status, c.churn_probability, c.churn_risk_level,
              h.weakest_dimension, h.computed_at, p.model_version, c.created_at, c.updated_at
       FROM customers c LEFT JOIN LATERAL (SELECT * FROM health_snapshots WHERE customer_id = c.id OFFSET 0) h ON true
       LEFT JOIN LATERAL (SELECT * FROM churn_predictions WHERE customer_id = c.id OFFSET 0) p ON true
       WHERE c.tenant_id = $1 AND (c.created_at, c.id) < ($2, $3) ORDER BY c.created_at DESC, c.id DESC LIMIT $4`,
      [tenantId, after[0], after[1], PAGE],
    );
    if (rows.length === 0) break;
    if (!res.write(rows.map((r) => JSON.stringify(r)).join('\n') + '\n')) await new Promise((r) => res.once('drain', r));
    if (rows.length < PAGE) break;
    after = [rows[rows.length - 1].created_at, rows[rows.length - 1].id];
  }
  res.end();
});
server.listen(0, '127.0.0.1', () => console.log(`bare listening on ${(server.address() as { port: number }).port}`));
