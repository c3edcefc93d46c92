-- AlterTable
ALTER TABLE "health_snapshots" ADD COLUMN     "inputs" JSONB;

-- CreateTable
CREATE TABLE "health_changes" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "customer_id" UUID NOT NULL,
    "computed_at" TIMESTAMPTZ(3) NOT NULL,
    "score_from" INTEGER,
    "score_to" INTEGER,
    "churn_from" DOUBLE PRECISION,
    "churn_to" DOUBLE PRECISION,
    "dimensions" JSONB NOT NULL,
    "drivers" JSONB NOT NULL,
    "sources" JSONB NOT NULL,

    CONSTRAINT "health_changes_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "health_changes_customer_id_computed_at_idx" ON "health_changes"("customer_id", "computed_at" DESC);

-- CreateIndex
CREATE INDEX "health_changes_tenant_id_idx" ON "health_changes"("tenant_id");

-- CreateIndex
CREATE INDEX "health_changes_computed_at_idx" ON "health_changes"("computed_at");

-- CreateIndex
CREATE INDEX "signals_customer_id_created_at_idx" ON "signals"("customer_id", "created_at");

-- AddForeignKey
ALTER TABLE "health_changes" ADD CONSTRAINT "health_changes_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "health_changes" ADD CONSTRAINT "health_changes_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE CASCADE ON UPDATE CASCADE;


