-- Reads that stay flat as a tenant grows (docs/scaling.md): a trigram index for searching customers, and
-- per-tenant tallies of customers by health status and churn risk level for counts and the portfolio.

CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE EXTENSION IF NOT EXISTS btree_gin;

-- CreateIndex
CREATE INDEX "customers_search_idx" ON "customers" USING GIN ("tenant_id" uuid_ops, "name" gin_trgm_ops, "domain" gin_trgm_ops, "email" gin_trgm_ops, "external_id" gin_trgm_ops);

-- CreateTable
CREATE TABLE "customer_tallies" (
    "tenant_id" UUID NOT NULL,
    "health_status" TEXT NOT NULL,
    "churn_risk_level" TEXT NOT NULL,
    "customers" BIGINT NOT NULL,
    "scored" BIGINT NOT NULL,
    "score_sum" BIGINT NOT NULL,

    CONSTRAINT "customer_tallies_pkey" PRIMARY KEY ("tenant_id","health_status","churn_risk_level")
);

-- CreateTable
CREATE TABLE "customer_tally_changes" (
    "id" BIGSERIAL NOT NULL,
    "tenant_id" UUID NOT NULL,
    "health_status" TEXT NOT NULL,
    "churn_risk_level" TEXT NOT NULL,
    "customers" BIGINT NOT NULL,
    "scored" BIGINT NOT NULL,
    "score_sum" BIGINT NOT NULL,

    CONSTRAINT "customer_tally_changes_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "customer_tally_changes_tenant_id_idx" ON "customer_tally_changes"("tenant_id");

-- AddForeignKey
ALTER TABLE "customer_tally_changes" ADD CONSTRAINT "customer_tally_changes_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "customer_tallies" ADD CONSTRAINT "customer_tallies_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Every statement changing customers appends its net change per (tenant, status, risk level). Changes have
-- no unique key, so appending waits on no one but, as the customer row itself, on its tenant's key share
-- (step 14 of docs/concurrency.md).
CREATE FUNCTION customer_tally_changes_append() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- Each event has only its own transition tables.
  IF TG_OP = 'INSERT' THEN
    INSERT INTO customer_tally_changes (tenant_id, health_status, churn_risk_level, customers, scored, score_sum)
    SELECT d.tenant_id, d.health_status, d.churn_risk_level, sum(d.n), sum(d.scored), sum(d.score)
    FROM (SELECT tenant_id, coalesce(health_status::text, '') AS health_status, coalesce(churn_risk_level::text, '') AS churn_risk_level, 1 AS n, (health_score IS NOT NULL)::int AS scored, coalesce(health_score, 0) AS score FROM new_rows) d
    GROUP BY d.tenant_id, d.health_status, d.churn_risk_level
    HAVING sum(d.n) <> 0 OR sum(d.scored) <> 0 OR sum(d.score) <> 0;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO customer_tally_changes (tenant_id, health_status, churn_risk_level, customers, scored, score_sum)
    SELECT d.tenant_id, d.health_status, d.churn_risk_level, sum(d.n), sum(d.scored), sum(d.score)
    FROM (SELECT tenant_id, coalesce(health_status::text, '') AS health_status, coalesce(churn_risk_level::text, '') AS churn_risk_level, -1 AS n, -(health_score IS NOT NULL)::int AS scored, -coalesce(health_score, 0) AS score FROM old_rows) d
    -- Customers deleted with their tenant (the foreign key's cascade) change nothing: its tallies go with it.
    WHERE EXISTS (SELECT 1 FROM tenants t WHERE t.id = d.tenant_id)
    GROUP BY d.tenant_id, d.health_status, d.churn_risk_level
    HAVING sum(d.n) <> 0 OR sum(d.scored) <> 0 OR sum(d.score) <> 0;
  ELSE
    INSERT INTO customer_tally_changes (tenant_id, health_status, churn_risk_level, customers, scored, score_sum)
    SELECT d.tenant_id, d.health_status, d.churn_risk_level, sum(d.n), sum(d.scored), sum(d.score)
    FROM (SELECT tenant_id, coalesce(health_status::text, '') AS health_status, coalesce(churn_risk_level::text, '') AS churn_risk_level, 1 AS n, (health_score IS NOT NULL)::int AS scored, coalesce(health_score, 0) AS score FROM new_rows UNION ALL SELECT tenant_id, coalesce(health_status::text, '') AS health_status, coalesce(churn_risk_level::text, '') AS churn_risk_level, -1 AS n, -(health_score IS NOT NULL)::int AS scored, -coalesce(health_score, 0) AS score FROM old_rows) d
    GROUP BY d.tenant_id, d.health_status, d.churn_risk_level
    HAVING sum(d.n) <> 0 OR sum(d.scored) <> 0 OR sum(d.score) <> 0;
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER customers_tally_insert AFTER INSERT ON customers REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION customer_tally_changes_append();
CREATE TRIGGER customers_tally_update AFTER UPDATE ON customers REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION customer_tally_changes_append();
CREATE TRIGGER customers_tally_delete AFTER DELETE ON customers REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION customer_tally_changes_append();

-- The tallies of the customers there are; the triggers above, created first in this transaction, hold off
-- every writer of customers until it commits, so nothing is counted twice or missed.
INSERT INTO customer_tallies (tenant_id, health_status, churn_risk_level, customers, scored, score_sum)
SELECT tenant_id, coalesce(health_status::text, ''), coalesce(churn_risk_level::text, ''), count(*), count(health_score), coalesce(sum(health_score), 0)
FROM customers
GROUP BY 1, 2, 3;
