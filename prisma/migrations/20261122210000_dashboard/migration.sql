-- DropIndex
DROP INDEX "signals_customer_id_kind_occurred_at_idx";

-- CreateIndex
CREATE INDEX "customers_tenant_id_health_score_id_idx" ON "customers"("tenant_id", "health_score", "id");

-- CreateIndex
CREATE INDEX "customers_tenant_id_churn_probability_id_idx" ON "customers"("tenant_id", "churn_probability", "id");

-- CreateIndex
CREATE INDEX "customers_tenant_id_name_id_idx" ON "customers"("tenant_id", "name", "id");

-- CreateIndex
CREATE INDEX "signals_customer_id_occurred_at_idx" ON "signals"("customer_id", "occurred_at" DESC);


