-- How fresh each integration's events are: the last one received, and per UTC day of the last two weeks the
-- events received and the longest wait before one, from which its usual cadence is learned.
CREATE TABLE "integration_freshness" (
    "tenant_id" UUID NOT NULL,
    "provider" TEXT NOT NULL,
    "last_event_at" TIMESTAMPTZ(3),
    "days" JSONB NOT NULL DEFAULT '{}',
    "silent_since" TIMESTAMPTZ(3),
    "checked_at" TIMESTAMPTZ(3),

    CONSTRAINT "integration_freshness_pkey" PRIMARY KEY ("tenant_id","provider")
);

ALTER TABLE "integration_freshness" ADD CONSTRAINT "integration_freshness_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
