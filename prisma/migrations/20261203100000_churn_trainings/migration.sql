-- Churn trainings as rows of their own: a training on thousands of labels outlives the request that asked
-- for it, which answers with the training and lets its result be read later.
CREATE TABLE "churn_trainings" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "activate" BOOLEAN NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'running',
    "result" JSONB,
    "error_code" TEXT,
    "error_message" TEXT,
    "started_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(3),
    "alive_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "churn_trainings_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "churn_trainings_tenant_id_started_at_idx" ON "churn_trainings"("tenant_id", "started_at");

-- One training of a tenant at a time, whichever process runs it.
CREATE UNIQUE INDEX "churn_trainings_one_running" ON "churn_trainings"("tenant_id") WHERE "status" = 'running';

ALTER TABLE "churn_trainings" ADD CONSTRAINT "churn_trainings_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
