-- DropIndex
DROP INDEX "churn_predictions_customer_id_predicted_at_idx";

-- DropIndex
DROP INDEX "health_snapshots_customer_id_computed_at_idx";

-- AlterTable
ALTER TABLE "alerts" ADD COLUMN     "resolved_by" TEXT;

-- AlterTable
ALTER TABLE "churn_predictions" ADD COLUMN     "announced_probability" DOUBLE PRECISION,
ADD COLUMN     "features" JSONB NOT NULL DEFAULT '{}';

-- AlterTable
ALTER TABLE "health_snapshots" ADD COLUMN     "announced_score" INTEGER,
ADD COLUMN     "announced_status" "HealthStatus",
ALTER COLUMN "score" DROP NOT NULL,
ALTER COLUMN "status" DROP NOT NULL;

-- AlterTable
ALTER TABLE "tenants" ADD COLUMN     "active_churn_model_id" UUID;

-- CreateTable
CREATE TABLE "health_history" (
    "customer_id" UUID NOT NULL,
    "day" DATE NOT NULL,
    "tenant_id" UUID NOT NULL,
    "score" INTEGER,
    "status" "HealthStatus",
    "usage" DOUBLE PRECISION,
    "engagement" DOUBLE PRECISION,
    "support" DOUBLE PRECISION,
    "billing" DOUBLE PRECISION,
    "growth" DOUBLE PRECISION,
    "churn_probability" DOUBLE PRECISION,
    "computed_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "health_history_pkey" PRIMARY KEY ("customer_id","day")
);

-- CreateTable
CREATE TABLE "churn_models" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "version" TEXT NOT NULL,
    "intercept" DOUBLE PRECISION NOT NULL,
    "coefficients" JSONB NOT NULL,
    "baseline" JSONB NOT NULL,
    "metrics" JSONB NOT NULL,
    "trained_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "churn_models_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "scoring_queue" (
    "customer_id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "due_at" TIMESTAMPTZ(6) NOT NULL,
    "claimed_until" TIMESTAMPTZ(6),
    "version" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "scoring_queue_pkey" PRIMARY KEY ("customer_id")
);

-- CreateIndex
CREATE INDEX "health_history_day_idx" ON "health_history"("day");

-- CreateIndex
CREATE UNIQUE INDEX "churn_models_tenant_id_version_key" ON "churn_models"("tenant_id", "version");

-- CreateIndex
CREATE INDEX "scoring_queue_due_at_idx" ON "scoring_queue"("due_at");

-- One current snapshot and prediction per customer: keep each customer's newest before the unique indexes.
DELETE FROM "health_snapshots" a USING "health_snapshots" b
 WHERE a."customer_id" = b."customer_id" AND (a."computed_at", a."id") < (b."computed_at", b."id");
DELETE FROM "churn_predictions" a USING "churn_predictions" b
 WHERE a."customer_id" = b."customer_id" AND (a."predicted_at", a."id") < (b."predicted_at", b."id");

-- CreateIndex
CREATE UNIQUE INDEX "churn_predictions_customer_id_key" ON "churn_predictions"("customer_id");

-- CreateIndex
CREATE UNIQUE INDEX "health_snapshots_customer_id_key" ON "health_snapshots"("customer_id");

-- CreateIndex
CREATE UNIQUE INDEX "tenants_active_churn_model_id_key" ON "tenants"("active_churn_model_id");

-- AddForeignKey
ALTER TABLE "tenants" ADD CONSTRAINT "tenants_active_churn_model_id_fkey" FOREIGN KEY ("active_churn_model_id") REFERENCES "churn_models"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "health_history" ADD CONSTRAINT "health_history_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "health_history" ADD CONSTRAINT "health_history_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "churn_models" ADD CONSTRAINT "churn_models_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "scoring_queue" ADD CONSTRAINT "scoring_queue_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "scoring_queue" ADD CONSTRAINT "scoring_queue_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- At most one alert that is not resolved per customer and type (docs/decisions.md §6). Partial indexes are
-- not expressible in schema.prisma; this one is kept by hand.
CREATE UNIQUE INDEX "alerts_one_unresolved_per_type" ON "alerts"("customer_id", "alert_type") WHERE "status" <> 'resolved';

-- Recompute on change: any statement that adds or re-attributes signals, invoices or subscriptions of
-- a customer queues that customer once, a second from now, so a burst costs one recompute. A change
-- that lands while a worker holds the row bumps its version, and the worker computes once more.
-- Rows are locked in customer order, so two multi-customer statements cannot deadlock on the queue.
CREATE FUNCTION "chs_queue_rescore"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "scoring_queue" ("customer_id", "tenant_id", "due_at")
  SELECT DISTINCT "customer_id", "tenant_id", now() + interval '1 second' FROM "changed"
   WHERE "customer_id" IS NOT NULL ORDER BY "customer_id"
  ON CONFLICT ("customer_id") DO UPDATE SET "version" = "scoring_queue"."version" + 1
   WHERE "scoring_queue"."claimed_until" IS NOT NULL;
  RETURN NULL;
END $$;

CREATE TRIGGER "signals_rescore_insert" AFTER INSERT ON "signals"
  REFERENCING NEW TABLE AS "changed" FOR EACH STATEMENT EXECUTE FUNCTION "chs_queue_rescore"();
CREATE TRIGGER "signals_rescore_update" AFTER UPDATE ON "signals"
  REFERENCING NEW TABLE AS "changed" FOR EACH STATEMENT EXECUTE FUNCTION "chs_queue_rescore"();
CREATE TRIGGER "invoices_rescore_insert" AFTER INSERT ON "invoices"
  REFERENCING NEW TABLE AS "changed" FOR EACH STATEMENT EXECUTE FUNCTION "chs_queue_rescore"();
CREATE TRIGGER "invoices_rescore_update" AFTER UPDATE ON "invoices"
  REFERENCING NEW TABLE AS "changed" FOR EACH STATEMENT EXECUTE FUNCTION "chs_queue_rescore"();
CREATE TRIGGER "subscriptions_rescore_insert" AFTER INSERT ON "subscriptions"
  REFERENCING NEW TABLE AS "changed" FOR EACH STATEMENT EXECUTE FUNCTION "chs_queue_rescore"();
CREATE TRIGGER "subscriptions_rescore_update" AFTER UPDATE ON "subscriptions"
  REFERENCING NEW TABLE AS "changed" FOR EACH STATEMENT EXECUTE FUNCTION "chs_queue_rescore"();
